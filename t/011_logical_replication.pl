
# Copyright (c) btlayout authors
#
# A logical replication subscriber applying UPDATE and DELETE to a table
# with REPLICA IDENTITY FULL finds the rows to change through an index of
# its table when the server allows it: any index with an equality operator
# the server can find from PostgreSQL 18 on (a btlayout index among them),
# btree (and from 17 hash) indexes only before.  Either way the
# subscriber's table must end equal to the publisher's, and its btlayout
# index must answer as its heap; on 18 the index must have been used.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest qw(btl_compare_with_heap);

my $publisher = PostgreSQL::Test::Cluster->new('publisher');
$publisher->init(allows_streaming => 'logical');
$publisher->start;

my $subscriber = PostgreSQL::Test::Cluster->new('subscriber');
$subscriber->init;
$subscriber->start;

my $table = q{
CREATE TABLE rep (k int, v text, n int);
ALTER TABLE rep REPLICA IDENTITY FULL;
};
$publisher->safe_psql('postgres', $table);
$subscriber->safe_psql('postgres', "CREATE EXTENSION btlayout; $table"
	  . ' CREATE INDEX rep_k ON rep USING btlayout (k) WITH (layout = eytzinger);');

$publisher->safe_psql('postgres', q{
INSERT INTO rep SELECT g, md5(g::text), 0 FROM generate_series(1, 20000) g;
CREATE PUBLICATION pub FOR TABLE rep;
});
my $connstr = $publisher->connstr . ' dbname=postgres';
$subscriber->safe_psql('postgres',
	"CREATE SUBSCRIPTION sub CONNECTION '$connstr' PUBLICATION pub");
$subscriber->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')})
  or die 'the subscriber did not synchronize';
$subscriber->safe_psql('postgres', 'ANALYZE rep');

my $scans_before = $subscriber->safe_psql('postgres',
	q{SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'rep_k'});

# Row changes the subscriber must find by their old values
$publisher->safe_psql('postgres', q{
UPDATE rep SET n = n + 1 WHERE k % 97 = 0;
DELETE FROM rep WHERE k % 101 = 0;
UPDATE rep SET k = k + 100000 WHERE k % 89 = 0;
INSERT INTO rep SELECT g, 'new', 2 FROM generate_series(20001, 21000) g;
DELETE FROM rep WHERE k BETWEEN 5000 AND 5050;
});
$publisher->wait_for_catchup('sub');

# A clean restart writes out the apply worker's statistics; they are read
# before any query of this test could scan the index itself
$subscriber->restart;
my $scans_after = $subscriber->safe_psql('postgres',
	q{SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'rep_k'});
if ($subscriber->pg_version >= 18)
{
	ok($scans_after - $scans_before > 300,
		'the apply worker found rows through the btlayout index ('
		  . ($scans_after - $scans_before) . ' scans)');
}
else
{
	is($scans_after - $scans_before, 0,
		'before 18 the apply worker does not use a btlayout index (server limit)');
}

my $digest = q{SELECT count(*), sum(k), sum(n), md5(string_agg(v, ',' ORDER BY k, v)) FROM rep};
is($subscriber->safe_psql('postgres', $digest),
	$publisher->safe_psql('postgres', $digest),
	"the subscriber's table equals the publisher's");

my ($n, @problems) = btl_compare_with_heap($subscriber, 'postgres');
is_deeply(\@problems, [], "the subscriber's btlayout index answers as its heap ($n)");

$subscriber->stop;
$publisher->stop;
done_testing();
