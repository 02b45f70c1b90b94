
# Copyright (c) btlayout authors
#
# Parallel CREATE INDEX.  With max_parallel_maintenance_workers = 2 and the
# table's parallel_workers = 2, btlayout's build asks for two workers, as
# core btree's does, and the server log (DEBUG1) says how many came.
#
#   1. Byte identity: for a range of index shapes, the btlayout index built
#      with workers (layout = none) is block for block the btree index
#      built with workers, and with layout = eytzinger the one btlayout
#      builds serially; CREATE INDEX CONCURRENTLY, REINDEX and REINDEX
#      CONCURRENTLY go parallel too and give the same bytes.
#   2. A unique index over recently dead duplicates (another session's
#      snapshot keeps deleted rows that a new row repeats): built, equal
#      to btree's; with a live duplicate, the server's error and no index.
#   3. While a build runs: pg_stat_progress_create_index shows its phase
#      and pg_stat_activity its two workers.
#   4. An error raised in a worker reaches the leader; a cancelled build
#      (statement_timeout) and a crash (a worker killed) leave no index, no
#      temporary files and no workers behind, and the build then succeeds.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $db = 'postgres';
my $node = PostgreSQL::Test::Cluster->new('parallel');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
autovacuum = off
max_worker_processes = 8
max_parallel_workers = 8
max_parallel_maintenance_workers = 2
maintenance_work_mem = 256MB
log_min_messages = debug1
restart_after_crash = on
});
$node->start;

$node->safe_psql(
	$db, q{
CREATE EXTENSION btlayout;
CREATE EXTENSION pageinspect;
-- 'identical N blocks', or the first block that differs (LSN and checksum
-- masked)
CREATE FUNCTION same_blocks(a regclass, b regclass) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  nblocks bigint := pg_relation_size(a) / current_setting('block_size')::int;
BEGIN
  IF pg_relation_size(a) <> pg_relation_size(b) THEN
    RETURN format('size differs: %s vs %s', pg_relation_size(a), pg_relation_size(b));
  END IF;
  FOR blk IN 0 .. nblocks - 1 LOOP
    IF substr(get_raw_page(a::text, blk), 11) <> substr(get_raw_page(b::text, blk), 11) THEN
      RETURN format('block %s differs', blk);
    END IF;
  END LOOP;
  RETURN format('identical %s blocks', nblocks);
END
$$;
CREATE TABLE t (i4 int4, i8 int8, t text, dup int4, n int4)
  WITH (parallel_workers = 2);
INSERT INTO t
SELECT (g::int8 * 48271) % 299999, (g::int8 * 7919) % 300007, md5(g::text),
       g % 97, CASE WHEN g % 11 = 0 THEN NULL ELSE g % 1000 END
FROM generate_series(1, 300000) g;
VACUUM ANALYZE t;
});

# The workers launched for the build of index $name since log offset
# $offset (undef: no parallel build was started)
sub workers_launched
{
	my ($name, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	return $log =~
	  /btlayout: building index "\Q$name\E" with (\d+) of \d+ parallel workers requested/
	  ? $1
	  : undef;
}

# Build index $name with $ddl (btlayout) and its btree twin bt_$name with
# $btddl, both with workers; compare them
sub build_pair
{
	my ($name, $ddl, $btddl, $what) = @_;
	my $offset = -s $node->logfile;
	$node->safe_psql($db, "$btddl; $ddl");
	is(workers_launched($name, $offset), 2, "$what: two workers launched");
	like(
		$node->safe_psql($db, "SELECT same_blocks('bt_$name', '$name')"),
		qr/^identical \d+ blocks$/,
		"$what: same blocks as btree's parallel build");
}

#
# 1. Byte identity
#
my @shapes = (
	[ 'int4',          '(i4)' ],
	[ 'unique int8',   '(i8)', 'UNIQUE' ],
	[ 'text C',        '(t COLLATE "C")' ],
	[ 'posting lists', '(dup)' ],
	[ 'multi-column DESC NULLS FIRST', '(n DESC NULLS FIRST, dup, i4 DESC)' ],
	[ 'INCLUDE',    '(dup, n NULLS FIRST) INCLUDE (t, i8)' ],
	[ 'expression', '((i4 % 1000), lower(t))' ],
	[ 'partial',    '(i4) WITH (layout = none) WHERE dup < 10', undef, 1 ],);
my $k = 0;
foreach my $shape (@shapes)
{
	my ($what, $def, $unique, $own_options) = @$shape;
	my $u = $unique // '';
	my $name = 'p' . $k++;
	my $btdef = $def =~ s/ WITH \(layout = none\)//r;
	my $bldef = $own_options ? $def : "$def WITH (layout = none)";
	build_pair($name, "CREATE $u INDEX $name ON t USING btlayout $bldef",
		"CREATE $u INDEX bt_$name ON t USING btree $btdef", $what);
}

# A laid-out index: the parallel build writes what the serial one writes
my $offset = -s $node->logfile;
$node->safe_psql(
	$db, q{
CREATE INDEX ey_par ON t USING btlayout (t COLLATE "C", i4) WITH (layout = eytzinger);
SET max_parallel_maintenance_workers = 0;
CREATE INDEX ey_ser ON t USING btlayout (t COLLATE "C", i4) WITH (layout = eytzinger);
});
is(workers_launched('ey_par', $offset), 2, 'eytzinger: parallel build');
is(workers_launched('ey_ser', $offset),
	undef, 'eytzinger: serial build with max_parallel_maintenance_workers = 0');
like(
	$node->safe_psql($db, q{SELECT same_blocks('ey_par', 'ey_ser')}),
	qr/^identical \d+ blocks$/,
	'eytzinger: the parallel build writes the serial build\'s blocks');

# CREATE INDEX CONCURRENTLY, REINDEX, REINDEX CONCURRENTLY
build_pair(
	'cic',
	'CREATE INDEX CONCURRENTLY cic ON t USING btlayout (i4, dup) WITH (layout = none)',
	'CREATE INDEX CONCURRENTLY bt_cic ON t USING btree (i4, dup)',
	'CREATE INDEX CONCURRENTLY');
$offset = -s $node->logfile;
$node->safe_psql($db, 'REINDEX INDEX p0; REINDEX INDEX bt_p0');
is(workers_launched('p0', $offset), 2, 'REINDEX: two workers launched');
like(
	$node->safe_psql($db, q{SELECT same_blocks('bt_p0', 'p0')}),
	qr/^identical/,
	'REINDEX: same blocks as btree');
$offset = -s $node->logfile;
$node->safe_psql($db, 'REINDEX INDEX CONCURRENTLY cic; REINDEX INDEX CONCURRENTLY bt_cic');
# the new index of REINDEX CONCURRENTLY is built as cic_ccnew
is(workers_launched('cic_ccnew', $offset),
	2, 'REINDEX CONCURRENTLY: two workers launched');
like(
	$node->safe_psql($db, q{SELECT same_blocks('bt_cic', 'cic')}),
	qr/^identical/,
	'REINDEX CONCURRENTLY: same blocks as btree');
is( $node->safe_psql(
		$db, q{SELECT count(*) FROM pg_index WHERE NOT (indisvalid AND indisready)}),
	'0',
	'every index valid and ready');

#
# 2. Recently dead duplicates in a unique index
#
my $holder = $node->background_psql($db);
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM t');
$node->safe_psql(
	$db, q{
DELETE FROM t WHERE i8 % 3 = 0;
INSERT INTO t (i4, i8) SELECT g, g FROM generate_series(0, 300006, 3) g;
});
build_pair(
	'u_dead',
	'CREATE UNIQUE INDEX u_dead ON t USING btlayout (i8) WITH (layout = none)',
	'CREATE UNIQUE INDEX bt_u_dead ON t USING btree (i8)',
	'unique index over recently dead duplicates');
cmp_ok(
	$node->safe_psql($db, q{SELECT reltuples FROM pg_class WHERE relname = 'u_dead'}),
	'>',
	$node->safe_psql($db, q{SELECT count(*) FROM t}),
	'the unique index holds dead tuples beside the live ones');
$holder->query_safe('COMMIT');
$holder->quit;
my ($ret, $stdout, $stderr) = $node->psql(
	$db, q{
DROP INDEX p1, bt_p1, u_dead, bt_u_dead;
INSERT INTO t (i4, i8) VALUES (-1, 7);
INSERT INTO t (i4, i8) VALUES (-2, 7);
CREATE UNIQUE INDEX u_dup ON t USING btlayout (i8);
});
isnt($ret, 0, 'a live duplicate fails the parallel build');
like(
	$stderr,
	qr/could not create unique index "u_dup".*Key \(i8\)=\(7\) is duplicated/s,
	'with the server\'s message');
$node->safe_psql($db, q{DELETE FROM t WHERE i4 IN (-1, -2)});

# What a build leaves: no index u_dup, no temporary files, no workers
sub no_trace
{
	my ($what) = @_;
	is( $node->safe_psql(
			$db, q{SELECT count(*) FROM pg_class WHERE relname IN ('u_dup', 'slow_idx')}),
		'0',
		"$what: no index left");
	is( $node->poll_query_until(
			$db, q{SELECT count(*) = 0 FROM pg_stat_activity
			      WHERE backend_type = 'parallel worker'}),
		1,
		"$what: no worker left");
	my $tmp = $node->data_dir . '/base/pgsql_tmp';
	my @files = -d $tmp ? glob("$tmp/*") : ();
	is(scalar(@files), 0, "$what: no temporary files left");
}
no_trace('unique violation');

#
# 3. Progress and workers of a running build, 4. cancel, error, crash
#
# slow(): 2 ms per row, so that a build of 3000 rows takes seconds.  It
# lies about being parallel safe only in that it sleeps.  slower(): 20 ms
# per row, for the build a crash ends: its workers live for many seconds
# after they show in pg_stat_activity, so that the one picked is still
# there when it is killed.
# in_worker_fails(): as slow, and raises an error in a parallel worker
# (its backend is not the one whose pid the session set).
$node->safe_psql(
	$db, q{
CREATE TABLE s (k int4) WITH (parallel_workers = 2);
INSERT INTO s SELECT g FROM generate_series(1, 3000) g;
CREATE FUNCTION slow(int4) RETURNS int4 IMMUTABLE PARALLEL SAFE
LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.002); RETURN $1; END $$;
CREATE FUNCTION slower(int4) RETURNS int4 IMMUTABLE PARALLEL SAFE
LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.02); RETURN $1; END $$;
CREATE FUNCTION in_worker_fails(int4) RETURNS int4 IMMUTABLE PARALLEL SAFE
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_sleep(0.002);
  IF pg_backend_pid() <> current_setting('btl_test.leader')::int THEN
    RAISE EXCEPTION 'raised in a parallel worker';
  END IF;
  RETURN $1;
END $$;
});

my $builder = $node->background_psql($db, on_error_stop => 0);
my $pid = $builder->query_safe('SELECT pg_backend_pid()');
chomp $pid;
$builder->query_until(qr/started/,
	"\\echo started\nCREATE INDEX slow_idx ON s USING btlayout (slow(k));\n");
ok( $node->poll_query_until(
		$db, qq{SELECT phase = 'building index: scanning table'
		        FROM pg_stat_progress_create_index WHERE pid = $pid}),
	'progress: the running build is scanning the table');
ok( $node->poll_query_until(
		$db, qq{SELECT count(*) = 2 FROM pg_stat_activity WHERE leader_pid = $pid}),
	'its two workers are in pg_stat_activity');
$builder->query_safe('SELECT 1');    # waits for the build's end
is($node->safe_psql($db, q{SELECT count(*) FROM s WHERE slow(k) > 0}),
	'3000', 'the slow build finished');
$builder->query_safe('DROP INDEX slow_idx');

$builder->quit;

# An error in a worker
($ret, $stdout, $stderr) = $node->psql(
	$db, q{
SELECT set_config('btl_test.leader', pg_backend_pid()::text, false);
CREATE INDEX slow_idx ON s USING btlayout (in_worker_fails(k));
});
like(
	$stderr,
	qr/ERROR:  raised in a parallel worker/,
	'an error raised in a worker is the build\'s error');
no_trace('error in a worker');

# A cancel
($ret, $stdout, $stderr) = $node->psql(
	$db, q{
SET statement_timeout = '500ms';
CREATE INDEX slow_idx ON s USING btlayout (slow(k));
});
like(
	$stderr,
	qr/canceling statement due to statement timeout/,
	'statement_timeout cancels a parallel build');
no_trace('cancel');

# A crash: a worker killed mid-build
$builder = $node->background_psql($db, on_error_stop => 0);
$pid = $builder->query_safe('SELECT pg_backend_pid()');
chomp $pid;
$builder->query_until(qr/started/,
	"\\echo started\nCREATE INDEX slow_idx ON s USING btlayout (slower(k));\n");
ok( $node->poll_query_until(
		$db, qq{SELECT count(*) = 2 FROM pg_stat_activity WHERE leader_pid = $pid}),
	'crash: the build has its workers');
my $worker = $node->safe_psql($db,
	qq{SELECT pid FROM pg_stat_activity WHERE leader_pid = $pid LIMIT 1});
my $crash_offset = -s $node->logfile;
ok($worker =~ /^\d+$/ && kill('KILL', $worker) == 1,
	"crash: a worker killed (pid '$worker')");
eval { $builder->quit; };
# Wait for the restart in the server's log, not by polling with psql: a
# psql that finds the server refusing connections exits before reading the
# query on its standard input, and IPC::Run dies of the broken pipe
ok( eval {
		$node->wait_for_log(qr/database system is ready to accept connections/,
			$crash_offset);
		1;
	},
	'crash: the server is back after a worker was killed');
like(
	slurp_file($node->logfile, $crash_offset),
	qr/terminated by signal 9: Killed.*all server processes terminated; reinitializing/s,
	'crash: the server restarted because of the killed worker');
no_trace('crash');
$offset = -s $node->logfile;
$node->safe_psql($db,
	'CREATE INDEX slow_idx ON s USING btlayout (k) WITH (layout = none); CREATE INDEX bt_slow ON s USING btree (k)');
is(workers_launched('slow_idx', $offset), 2, 'after the crash: a parallel build');
like(
	$node->safe_psql($db, q{SELECT same_blocks('bt_slow', 'slow_idx')}),
	qr/^identical/,
	'after the crash: same blocks as btree');
is( $node->safe_psql(
		$db, q{SET enable_seqscan = off; SELECT count(*) FROM t WHERE i4 BETWEEN 1000 AND 2000}),
	$node->safe_psql(
		$db, q{SET enable_indexscan = off; SET enable_bitmapscan = off;
		       SELECT count(*) FROM t WHERE i4 BETWEEN 1000 AND 2000}),
	'after the crash: an index built before answers like the heap');

$node->stop;
done_testing();
