
# Copyright (c) btlayout authors

# Crash recovery of btlayout indexes.
#
# A btlayout index is written by the server's nbtree code and by our bulk
# loader, and must come back from WAL exactly like a btree index.  The node
# is stopped in "immediate" mode (no shutdown checkpoint, dirty buffers
# lost) at several points:
#
#   1. right after CREATE INDEX (the bulk loader's pages must be in WAL),
#   2. in the middle of a stream of committed inserts that split pages
#      (random keys, ascending keys, heavy duplicates),
#   3. right after a large DELETE and a VACUUM that deletes whole pages.
#
# After each restart, every index is read with index scans, index-only
# scans and bitmap scans, and each result must equal the one a sequential
# scan of the heap gives.  The indexes must also keep working: new inserts,
# unique enforcement.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest;


# Probe keys, deterministic and spread over the key space
my $probes = join(',', map { ($_ * 7919) % 100000 } 1 .. 200);

# Named queries, each returning exactly one row.  Aggregates over ordered
# subqueries without ORDER BY in the aggregate check the order the scan
# delivers.  Keys are NOT NULL here; v is a function of k.
my @queries = (
	[ all_k => 'SELECT count(*), sum(hashint4(k)), sum(hashint4(id)) FROM t WHERE k >= 0' ],
	[ all_v => q{SELECT count(*), sum(hashtext(v)) FROM t WHERE v >= ''} ],
	[ all_id => 'SELECT count(*), sum(hashint4(id)) FROM t WHERE id > 0' ],
	[ minmax => 'SELECT min(k), max(k), min(v), max(v), min(id), max(id) FROM t WHERE k >= 0' ],
	[
		probe_k => qq{SELECT count(*), md5(string_agg(concat_ws(':', k, c, h), ',' ORDER BY k))
		  FROM (SELECT k, count(*) AS c, sum(hashint4(id)) AS h FROM t
		        WHERE k = ANY ('{$probes}'::int[]) GROUP BY k) s}
	],
	[
		probe_v => qq{SELECT count(*), sum(hashint4(id)) FROM t
		  WHERE v = ANY (ARRAY(SELECT md5(p::text) || repeat('x', p % 40)
		                       FROM unnest('{$probes}'::int[]) p))}
	],
	[
		probe_id => qq{SELECT count(*), sum(hashint4(k)) FROM t
		  WHERE id = ANY ('{$probes}'::int[])}
	],
	(
		map {
			my ($lo, $hi) = @$_;
			[
				"range_k_${lo}_$hi" =>
				  "SELECT count(*), sum(hashint4(k)), sum(hashint4(id)) FROM t WHERE k BETWEEN $lo AND $hi"
			]
		} ([ 0, 10 ], [ 777, 1234 ], [ 20000, 20500 ], [ 49990, 60010 ],
			[ 99000, 101000 ], [ 100500, 1000000 ])
	),
	[
		asc_k => 'SELECT md5(string_agg(k::text, \',\')) FROM
		  (SELECT k FROM t WHERE k > 31337 ORDER BY k LIMIT 700) s'
	],
	[
		desc_k => 'SELECT md5(string_agg(k::text, \',\')) FROM
		  (SELECT k FROM t WHERE k < 64000 ORDER BY k DESC LIMIT 700) s'
	],
	[
		kv_desc => q{SELECT md5(string_agg(k || '/' || v, ',')) FROM
		  (SELECT k, v FROM t WHERE k BETWEEN 5000 AND 90000
		   ORDER BY k DESC, v LIMIT 500) s}
	],
	[
		kv_backward => q{SELECT md5(string_agg(k || '/' || v, ',')) FROM
		  (SELECT k, v FROM t WHERE k >= 12345 ORDER BY k, v DESC LIMIT 500) s}
	],
	(
		map {
			my ($lo, $hi) = @$_;
			[
				"range_v_$lo" =>
				  "SELECT count(*), md5(string_agg(v, ',')) FROM
				  (SELECT v FROM t WHERE v >= '$lo' AND v < '$hi' ORDER BY v) s"
			]
		} ([ '0', '01' ], [ '7f', '80' ], [ 'c3', 'c4' ], [ 'ff', 'g' ])
	),
	[
		desc_id => q{SELECT md5(string_agg(id::text, ',')) FROM
		  (SELECT id FROM t WHERE id > 1000 ORDER BY id DESC LIMIT 300) s}
	],
	[ range_id => 'SELECT count(*), sum(hashint4(k)) FROM t WHERE id BETWEEN 50000 AND 150000' ],
);

my $query_text = join("\n",
	map { "SELECT '$_->[0]', * FROM ($_->[1]) q;" } @queries);
my $explain_text = join("\n",
	map { "EXPLAIN (COSTS OFF) $_->[1];" } @queries);

# Run every query in one scan mode; returns the output, one line per query
sub run_queries
{
	my ($node, $mode, $text) = @_;
	return $node->safe_psql('postgres',
		"SET max_parallel_workers_per_gather = 0; $scan_settings{$mode}\n$text");
}

# Check that every scan mode reads what a sequential scan reads, and that
# the plans used the scan kind they were meant to
sub check_indexes
{
	my ($node, $label) = @_;
	my $expected = run_queries($node, 'seqscan', $query_text);

	unlike(run_queries($node, 'seqscan', $explain_text),
		qr/Index/, "$label: reference plans scan the heap only");

	foreach my $mode (@index_modes)
	{
		my $plans = run_queries($node, $mode, $explain_text);
		my $kind = {
			indexscan => qr/Index Scan using \w+_btl/,
			indexonlyscan => qr/Index Only Scan using \w+_btl/,
			bitmapscan => qr/Bitmap Index Scan on \w+_btl/
		}->{$mode};
		ok($plans =~ $kind && $plans !~ /Seq Scan on t\b/,
			"$label: $mode plans read btlayout indexes");
		is(run_queries($node, $mode, $query_text),
			$expected, "$label: $mode results equal the heap's");
	}
	return;
}

# The committed row count, checked against what had been committed
sub row_count
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT count(*) FROM t');
}

# Rows for the table: $n keys from the SQL expression $kexpr of g
sub insert_sql
{
	my ($kexpr, $n) = @_;
	return "INSERT INTO t (k, v)
	  SELECT k, md5(k::text) || repeat('x', k % 40)
	  FROM (SELECT $kexpr AS k FROM generate_series(1, $n) g) s;";
}

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
# wal_level = replica: the bulk loader must WAL-log what it builds (under
# "minimal", which the test framework sets by default, it need not).  No
# checkpoints but ours; few buffers, so that pages are evicted and written
# before the crash, and redo must cope with pages newer than its records.
$node->append_conf(
	'postgresql.conf', q{
wal_level = replica
max_wal_senders = 0
shared_buffers = 2MB
checkpoint_timeout = 1h
max_wal_size = 1GB
autovacuum = off
});
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION btlayout;
CREATE TABLE t (id serial, k int NOT NULL, v text NOT NULL);
});
$node->safe_psql('postgres',
	insert_sql('(random() * 99999)::int', 60000));

#
# 1. Crash right after CREATE INDEX
#
$node->safe_psql(
	'postgres', q{
CREATE INDEX t_k_btl ON t USING btlayout (k);
CREATE INDEX t_kv_btl ON t USING btlayout (k DESC, v);
CREATE INDEX t_v_btl ON t USING btlayout (v);
CREATE UNIQUE INDEX t_id_btl ON t USING btlayout (id);
});
is( $node->safe_psql(
		'postgres', q{SELECT count(*) FROM pg_index i
		  JOIN pg_class c ON c.oid = i.indexrelid
		  JOIN pg_am am ON am.oid = c.relam
		  WHERE i.indrelid = 't'::regclass AND am.amname = 'btlayout'}),
	'4',
	'four btlayout indexes on t');

$node->stop('immediate');
$node->start;
is(row_count($node), '60000', 'all rows back after crash after CREATE INDEX');
check_indexes($node, 'crash after CREATE INDEX');

#
# 2. Crash in the middle of committed inserts that split pages
#
$node->safe_psql('postgres', 'CHECKPOINT');

my $batches = 300;
my $total_planned = 60000 + 1000 * $batches;
my $workload = sprintf(
	q{DO $$
BEGIN
	FOR b IN 1..%d LOOP
		CASE b %% 3
			WHEN 0 THEN %s
			WHEN 1 THEN %s
			ELSE %s
		END CASE;
		COMMIT;
	END LOOP;
END $$;},
	$batches,
	insert_sql('(random() * 99999)::int', 1000),
	# ascending keys above the random ones: rightmost splits
	insert_sql('100000 + b * 1000 + g', 1000),
	# few distinct keys: posting lists and their splits
	insert_sql('(random() * 50)::int * 1000', 1000));

my $bg = $node->background_psql('postgres', on_error_stop => 1);
$bg->query_until(qr/inserting/, "\\echo inserting\n$workload\n");

# Let a good part of the batches commit, then crash
my $threshold = 60000 + 1000 * int($batches / 3);
$node->poll_query_until('postgres',
	"SELECT count(*) >= $threshold FROM t")
  or die "timed out waiting for the insert workload";
my $committed = row_count($node);
$node->stop('immediate');
eval { $bg->quit; };    # psql has lost its server

$node->start;
my $recovered = row_count($node);
cmp_ok($recovered, '>=', $committed,
	'every insert committed before the crash is back');
cmp_ok($recovered, '<', $total_planned,
	'the crash interrupted the insert workload');
cmp_ok(
	$node->safe_psql('postgres',
		q{SELECT pg_relation_size('t_v_btl') / current_setting('block_size')::int}),
	'>', 500,
	'the text index has grown to hundreds of pages');
check_indexes($node, 'crash during inserts');

#
# The indexes keep working after recovery
#
$node->safe_psql('postgres', insert_sql('(random() * 120000)::int', 30000));
is(row_count($node), $recovered + 30000, 'inserts after recovery');

my ($ret, $stdout, $stderr) = $node->psql('postgres',
	'INSERT INTO t (id, k, v) SELECT id, k, v FROM t WHERE id = (SELECT max(id) FROM t)');
isnt($ret, 0, 'duplicate id rejected after recovery');
like(
	$stderr,
	qr/duplicate key value violates unique constraint "t_id_btl"/,
	'the btlayout unique index rejects the duplicate');
check_indexes($node, 'inserts after recovery');

#
# 3. Crash right after a large DELETE and a VACUUM that empties pages
#
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql(
	'postgres', q{
DELETE FROM t WHERE k BETWEEN 20000 AND 59999 OR k % 7 = 3;
VACUUM t;
});
my $after_delete = row_count($node);
$node->stop('immediate');
$node->start;
is(row_count($node), $after_delete, 'row count after crash after VACUUM');
check_indexes($node, 'crash after DELETE and VACUUM');

# Refill the emptied key range
$node->safe_psql('postgres',
	insert_sql('20000 + (random() * 39999)::int', 30000));
check_indexes($node, 'refill after VACUUM');

$node->stop;
done_testing();
