
# Copyright (c) btlayout authors

# btlayout indexes on a streaming standby.
#
# Every write to a btlayout index is WAL-logged as ordinary nbtree records
# (and, for the bulk loader, full-page images), so a standby replaying them
# must end up with the same index: the same answers to the same index scans,
# and the same pages, byte for byte, apart from what WAL does not carry (page
# LSN and checksum, and the unused hole between pd_lower and pd_upper that
# full-page images leave out).
#
# Steps on the primary: CREATE INDEX (bulk loader), inserts that split
# pages, UPDATE and DELETE, VACUUM, inserts into the freed space.  After each
# one the standby catches up and is compared with the primary; the primary's
# index scans are also compared with its sequential scans.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest;

my %plan_pattern = (
	indexscan => qr/Index Scan (Backward )?using \w+_btl/,
	indexonlyscan => qr/Index Only Scan (Backward )?using \w+_btl/,
	bitmapscan => qr/Bitmap Index Scan on \w+_btl/,);

my @indexes = qw(t_id_btl t_kvd_btl t_v_btl);

my $probes = join(',', map { ($_ * 7919) % 150000 } 1 .. 150);

# Named queries, each returning one row: [ name, query, no_bitmap ].
# no_bitmap marks queries that only an ordered index scan can serve
# without a sequential scan; they are still compared in every mode.
my @queries = (
	[ all_id => 'SELECT count(*), sum(hashint4(id)) FROM t WHERE id > 0' ],
	[ k_null => 'SELECT count(*), sum(hashint4(id)) FROM t WHERE k IS NULL' ],
	[
		k_not_null =>
		  'SELECT count(*), sum(hashint4(k)), sum(hashint4(d)) FROM t WHERE k IS NOT NULL'
	],
	[ all_v => q{SELECT count(*), sum(hashtext(v)) FROM t WHERE v > ''} ],
	[
		probe_id => qq{SELECT count(*), md5(string_agg(concat_ws('/', id, k, v, d), ',' ORDER BY id))
		  FROM t WHERE id = ANY ('{$probes}'::int[])}
	],
	[
		probe_k => qq{SELECT count(*), sum(hashint4(d)), md5(string_agg(k || '/' || v, ',' ORDER BY k, v))
		  FROM t WHERE k = ANY ('{$probes}'::int[])}
	],
	[
		one_id => q{SELECT count(*), string_agg(concat_ws('/', id, k, v, d), ',')
		  FROM t WHERE id = 4243}
	],
	(
		map {
			my ($lo, $hi) = @$_;
			[
				"range_k_${lo}_$hi" =>
				  "SELECT count(*), sum(hashint4(k)), sum(hashint4(d)) FROM t WHERE k BETWEEN $lo AND $hi"
			]
		} ([ 0, 100 ], [ 9000, 11000 ], [ 74000, 74999 ], [ 149000, 200000 ])
	),
	[
		kvd_forward => q{SELECT md5(string_agg(coalesce(k::text, 'null') || '/' || v || '/' || d, ','))
		  FROM (SELECT k, v, d FROM t ORDER BY k DESC NULLS FIRST, v LIMIT 400) s},
		1
	],
	[
		kvd_backward => q{SELECT md5(string_agg(coalesce(k::text, 'null') || '/' || v || '/' || d, ','))
		  FROM (SELECT k, v, d FROM t ORDER BY k NULLS LAST, v DESC LIMIT 400) s},
		1
	],
	[
		kvd_desc_range => q{SELECT md5(string_agg(k || '/' || v, ','))
		  FROM (SELECT k, v FROM t WHERE k < 100000 ORDER BY k DESC, v LIMIT 300) s}
	],
	[
		id_desc => q{SELECT md5(string_agg(id::text, ','))
		  FROM (SELECT id FROM t WHERE id < 90000 ORDER BY id DESC LIMIT 300) s}
	],
	(
		map {
			my ($lo, $hi) = @$_;
			[
				"range_v_$lo" =>
				  "SELECT count(*), md5(string_agg(v, ',')) FROM
				  (SELECT v FROM t WHERE v >= '$lo' AND v < '$hi' ORDER BY v) s"
			]
		} ([ '00', '02' ], [ '8', '81' ], [ 'fe', 'g' ])
	),
	[
		minmax => 'SELECT min(id), max(id), min(k), max(k), min(v), max(v) FROM t WHERE id > 0'
	],);

my $query_text =
  join("\n", map { "SELECT '$_->[0]', * FROM ($_->[1]) q;" } @queries);
my $explain_all = join("\n", map { "EXPLAIN (COSTS OFF) $_->[1];" } @queries);
my $explain_bitmap = join("\n",
	map { "EXPLAIN (COSTS OFF) $_->[1];" } grep { !$_->[2] } @queries);

sub run_queries
{
	my ($node, $mode, $text) = @_;
	return $node->safe_psql('postgres',
		"SET max_parallel_workers_per_gather = 0; $scan_settings{$mode}\n$text");
}

# Per-block digests of an index, with page LSN, checksum and the hole
# between pd_lower and pd_upper masked
sub page_digests
{
	my ($node, $index) = @_;
	my $out = $node->safe_psql(
		'postgres', qq{
SELECT b, md5(substr(p, 11, greatest(lo - 10, 0)) || substr(p, up + 1))
FROM (SELECT b, p,
             get_byte(p, 12) + 256 * get_byte(p, 13) AS lo,
             get_byte(p, 14) + 256 * get_byte(p, 15) AS up
      FROM generate_series(0, pg_relation_size('$index') /
                              current_setting('block_size')::int - 1) b,
           LATERAL get_raw_page('$index', b) p) s
ORDER BY b});
	return map { split /\|/ } split /\n/, $out;
}

# Compare the standby with the primary after it has replayed everything
sub check_standby
{
	my ($primary, $standby, $label, %opts) = @_;

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

	my $reference = run_queries($primary, 'seqscan', $query_text);
	unlike(run_queries($primary, 'seqscan', $explain_all),
		qr/Index/, "$label: reference plans scan the heap only");

	foreach my $mode (@index_modes)
	{
		my $explain = $mode eq 'bitmapscan' ? $explain_bitmap : $explain_all;
		my $plans = run_queries($primary, $mode, $explain);
		ok($plans =~ $plan_pattern{$mode} && $plans !~ /Seq Scan on t\b/,
			"$label: $mode plans read btlayout indexes");
		is(run_queries($standby, $mode, $explain),
			$plans, "$label: $mode plans are the same on the standby");

		my $result = run_queries($primary, $mode, $query_text);
		is($result, $reference, "$label: $mode results equal the heap's");
		is(run_queries($standby, $mode, $query_text),
			$result, "$label: $mode results equal on the standby");
	}

	return unless $opts{pages};

	# Pages, after a checkpoint (the standby then has a restartpoint)
	$primary->safe_psql('postgres', 'CHECKPOINT');
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	foreach my $index (@indexes)
	{
		my %p = page_digests($primary, $index);
		my %s = page_digests($standby, $index);
		is(scalar(keys %s), scalar(keys %p),
			"$label: $index has the same number of blocks on the standby");
		my @differ = sort { $a <=> $b }
		  grep { !defined $s{$_} || $s{$_} ne $p{$_} } keys %p;
		is("@differ", '', "$label: $index pages are identical on the standby");
	}
	return;
}

#
# Primary, replication slot, base backup, streaming standby
#
my ($primary, $standby) = btl_primary_and_standby("autovacuum = off\n");
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'standby is in recovery');

#
# 1. CREATE INDEX: the bulk loader's pages reach the standby
#
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION btlayout;
CREATE EXTENSION pageinspect;
CREATE TABLE t (id int NOT NULL, k int, v text NOT NULL, d int NOT NULL);
INSERT INTO t
  SELECT g, CASE WHEN g % 20 = 0 THEN NULL ELSE (g * 7919) % 150000 END,
         md5(g::text), g % 1000
  FROM generate_series(1, 20000) g;
CREATE UNIQUE INDEX t_id_btl ON t USING btlayout (id);
CREATE INDEX t_kvd_btl ON t USING btlayout (k DESC NULLS FIRST, v) INCLUDE (d);
CREATE INDEX t_v_btl ON t USING btlayout (v);
ANALYZE t;
});
check_standby($primary, $standby, 'after CREATE INDEX', pages => 1);

#
# 2. Inserts that split pages all over every index
#
$primary->safe_psql(
	'postgres', q{
INSERT INTO t
  SELECT g, CASE WHEN g % 20 = 0 THEN NULL ELSE (random() * 150000)::int END,
         md5(g::text) || repeat('x', g % 23), g % 1000
  FROM generate_series(20001, 120000) g;
ANALYZE t;
});
check_standby($primary, $standby, 'after inserts', pages => 1);
cmp_ok(
	$standby->safe_psql('postgres',
		q{SELECT pg_relation_size('t_kvd_btl') / current_setting('block_size')::int}),
	'>', 300,
	'the multi-column index spans hundreds of pages on the standby');

# Unique enforcement on the primary, by the btlayout index
my ($ret, $stdout, $stderr) =
  $primary->psql('postgres', q{INSERT INTO t VALUES (777, 1, 'dup', 1)});
like(
	$stderr,
	qr/duplicate key value violates unique constraint "t_id_btl"/,
	'the btlayout unique index rejects a duplicate id');

#
# 3. UPDATE and DELETE (dead index entries, not yet removed)
#
$primary->safe_psql(
	'postgres', q{
UPDATE t SET k = k + 1 WHERE id % 10 = 1;
DELETE FROM t WHERE id % 2 = 0 OR k BETWEEN 10000 AND 30000;
});
check_standby($primary, $standby, 'after UPDATE and DELETE');

#
# 4. VACUUM: bulk deletion and deletion of emptied pages
#
$primary->safe_psql('postgres', 'VACUUM t');
check_standby($primary, $standby, 'after VACUUM', pages => 1);

#
# 5. Inserts into the freed key space
#
$primary->safe_psql(
	'postgres', q{
INSERT INTO t
  SELECT g, 10000 + (random() * 20000)::int, md5(g::text), g % 1000
  FROM generate_series(200001, 230000) g;
ANALYZE t;
});
check_standby($primary, $standby, 'after refilling', pages => 1);

$standby->stop;
$primary->stop;
done_testing();
