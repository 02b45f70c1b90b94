
# Copyright (c) btlayout authors
#
# Relayout is online, WAL-logged and crash-safe:
#   - a streaming standby replaying relayouts, then inserts and VACUUM, with
#     wal_consistency_checking = btree, ends with the primary's index pages;
#   - pgbench clients reading and writing an index while relayout and VACUUM
#     loop over it get no errors, and the index answers as a heap scan does;
#   - an immediate stop in the middle of a relayout pass leaves an index that
#     answers as a heap scan does and can be laid out again.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest;

# Digest of every block of an index, with what may legitimately differ
# between two copies of one page masked: the LSN and checksum (first 10
# bytes of the header) and the free space between pd_lower and pd_upper.
my $masked_pages_sql = q{
CREATE FUNCTION masked_pages(idx regclass) RETURNS SETOF text
LANGUAGE sql AS $$
  SELECT b || ':' || md5(substr(p, 11, h.lower - 10) || substr(p, h.upper + 1))
  FROM generate_series(0, pg_relation_size(idx) / 8192 - 1) b,
       LATERAL get_raw_page(idx::text, b) p,
       LATERAL page_header(p) h
  ORDER BY b
$$;
};

# What an index answers, forced, against what a heap scan answers
sub index_matches_heap
{
	my ($node, $table, $column) = @_;
	my $q = "SELECT count(*), sum(hashint4($column)) FROM $table"
	  . " WHERE $column BETWEEN 1000 AND 900000";
	my $by_index = $node->safe_psql('postgres', "$scan_settings{indexonlyscan} $q");
	my $by_heap = $node->safe_psql('postgres', "$scan_settings{seqscan} $q");
	my $ordered = "SELECT md5(string_agg($column\::text, ',')) FROM"
	  . " (SELECT $column FROM $table WHERE $column > 500000 ORDER BY $column DESC LIMIT 2000) s";
	my $ordered_index = $node->safe_psql('postgres', "$scan_settings{indexonlyscan} $ordered");
	my $ordered_heap = $node->safe_psql('postgres', "$scan_settings{seqscan} $ordered");
	return $by_index eq $by_heap && $ordered_index eq $ordered_heap;
}

#
# 1. Standby with WAL consistency checking
#
my ($primary, $standby) =
  btl_primary_and_standby("wal_consistency_checking = 'btree'\n");
$primary->safe_psql('postgres', 'CREATE EXTENSION btlayout; CREATE EXTENSION pageinspect;');
$primary->safe_psql('postgres', $masked_pages_sql);

$primary->safe_psql('postgres', q{
CREATE TABLE r (k int4, v text);
INSERT INTO r SELECT (g * 7919) % 400009, md5(g::text) FROM generate_series(1, 200000) g;
CREATE INDEX r_k ON r USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX r_kv ON r USING btlayout (k DESC, v) WITH (layout = btorder);
INSERT INTO r SELECT (g::int8 * 104729) % 400009, 'x' FROM generate_series(1, 50000) g;
});
my $rewritten = $primary->safe_psql('postgres',
	"SELECT btlayout_relayout('r_k') + btlayout_relayout('r_kv')");
ok($rewritten > 0, "relayout rewrote pages broken by inserts ($rewritten)");

# Records after the relayout: inserts into laid-out pages, deletes, VACUUM
# (itself followed by a relayout pass), another layout
$primary->safe_psql('postgres', q{
INSERT INTO r SELECT g, 'y' FROM generate_series(1, 400000, 13) g;
DELETE FROM r WHERE k % 7 = 0;
VACUUM r;
ALTER INDEX r_k SET (layout = veb);
SELECT btlayout_relayout('r_k');
INSERT INTO r SELECT g, 'z' FROM generate_series(2, 400000, 17) g;
CHECKPOINT;
});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

for my $index ('r_k', 'r_kv')
{
	my $p = $primary->safe_psql('postgres', "SELECT string_agg(m, ' ') FROM masked_pages('$index') m");
	my $s = $standby->safe_psql('postgres', "SELECT string_agg(m, ' ') FROM masked_pages('$index') m");
	ok($p ne '' && $p eq $s, "standby's pages of $index equal the primary's");
}
is( $standby->safe_psql('postgres',
		"SET enable_seqscan = off; SELECT count(*), sum(k) FROM r WHERE k BETWEEN 100 AND 300000"),
	$primary->safe_psql('postgres',
		"SET enable_seqscan = off; SELECT count(*), sum(k) FROM r WHERE k BETWEEN 100 AND 300000"),
	'standby answers as the primary');
ok(index_matches_heap($standby, 'r', 'k'), 'standby index answers as its heap');
my $standby_log = slurp_file($standby->logfile);
unlike($standby_log, qr/inconsistent page found/, 'no WAL consistency failure on the standby');

my ($rc, $out, $err) = $standby->psql('postgres', "SELECT btlayout_relayout('r_k')");
like($err, qr/cannot execute btlayout_relayout\(\) during recovery/, 'relayout refused on a standby');

$standby->stop;
$primary->stop;

#
# 2. Relayout and VACUUM while clients read and write
#
my $node = PostgreSQL::Test::Cluster->new('busy');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION btlayout;
CREATE TABLE busy (k int4, v int4);
INSERT INTO busy SELECT g, g FROM generate_series(1, 100000) g;
CREATE INDEX busy_k ON busy USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX busy_v ON busy USING btlayout (v DESC) WITH (layout = blocked);
});

my $script = $node->basedir . '/busy.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
\set k random(1, 1000000)
BEGIN;
SELECT count(*) FROM busy WHERE k = :k;
SELECT count(*) FROM busy WHERE k BETWEEN :k AND :k + 200;
INSERT INTO busy VALUES (:k, :k);
UPDATE busy SET v = v + 1 WHERE k = :k + 1;
DELETE FROM busy WHERE k = :k + 2;
SELECT v FROM busy WHERE v < :k ORDER BY v DESC LIMIT 5;
END;
});
my $relayouts = $node->basedir . '/relayout.sql';
PostgreSQL::Test::Utils::append_to_file($relayouts, q{
SELECT btlayout_relayout('busy_k');
SELECT btlayout_relayout('busy_v');
VACUUM busy;
});

my @bench = ('pgbench', '--no-vacuum', '--time=15', '--client=3', '--jobs=2',
	'--file=' . $script, '--port=' . $node->port, '--host=' . $node->host, 'postgres');
my @loop = ('pgbench', '--no-vacuum', '--time=15', '--client=1',
	'--file=' . $relayouts, '--port=' . $node->port, '--host=' . $node->host, 'postgres');
my ($bench_out, $bench_err, $loop_out, $loop_err) = ('', '', '', '');
my $h1 = IPC::Run::start(\@bench, '>', \$bench_out, '2>', \$bench_err);
my $h2 = IPC::Run::start(\@loop, '>', \$loop_out, '2>', \$loop_err);
$h1->finish;
$h2->finish;

like($bench_out, qr/number of failed transactions: 0 /, 'clients: no failed transactions');
unlike($bench_err, qr/ERROR|FATAL/, 'clients: no errors');
like($loop_out, qr/number of failed transactions: 0 /, 'relayout loop: no failures');
unlike($loop_err, qr/ERROR|FATAL/, 'relayout loop: no errors');
my ($xacts) = $bench_out =~ /number of transactions actually processed: (\d+)/;
ok(defined $xacts && $xacts > 0, "clients ran transactions alongside relayout (" . ($xacts // 0) . ")");
ok(index_matches_heap($node, 'busy', 'k'), 'index on k answers as the heap after the storm');
ok(index_matches_heap($node, 'busy', 'v'), 'DESC index on v answers as the heap after the storm');

#
# 3. Immediate stop in the middle of a relayout pass
#
$node->safe_psql('postgres', q{
CREATE TABLE big (k int4);
INSERT INTO big SELECT (g::int8 * 7919) % 2000003 FROM generate_series(1, 1000000) g;
CREATE INDEX big_k ON big USING btlayout (k);
ALTER INDEX big_k SET (layout = veb);
CHECKPOINT;
});
my $pass = $node->background_psql('postgres', on_error_stop => 0);
$pass->query_until(qr/started/, q{
\echo started
SELECT btlayout_relayout('big_k');
});
# let the pass rewrite part of the index
$node->poll_query_until('postgres',
	"SELECT laid_out_percent > 5 FROM btlayout_stats('big_k')")
  or die 'relayout made no progress';
# and let that part reach the WAL on disk: until a dirty page leaves the
# pass's ring (2 MB from 17 on), its records may still sit in WAL buffers,
# which an immediate stop loses (the walwriter writes them within 200 ms)
my $progress_lsn = $node->lsn('insert');
$node->poll_query_until('postgres',
	"SELECT pg_current_wal_flush_lsn() >= '$progress_lsn'::pg_lsn")
  or die 'the WAL of the pass was not flushed';
$node->stop('immediate');
# psql lost its server; quitting it may find the pipe broken
eval { $pass->quit; };
$node->start;

my $partial = $node->safe_psql('postgres', "SELECT laid_out_percent FROM btlayout_stats('big_k')");
ok($partial > 0, "after the crash some pages are laid out ($partial%)");
ok(index_matches_heap($node, 'big', 'k'), 'index answers as the heap after the crash');
$node->safe_psql('postgres', "SELECT btlayout_relayout('big_k')");
is($node->safe_psql('postgres', "SELECT laid_out_percent FROM btlayout_stats('big_k')"),
	'100', 'a second pass lays out the rest');
ok(index_matches_heap($node, 'big', 'k'), 'index answers as the heap after the second pass');

$node->stop;
done_testing();
