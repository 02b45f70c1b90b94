
# Copyright (c) btlayout authors
#
# Crashes at every step of a btlayout index's life.  The primary is shut
# down in "immediate" mode (SIGQUIT to the postmaster: no checkpoint, dirty
# buffers lost, every backend killed where it stands) while
#
#   1. CREATE INDEX is loading sorted tuples into pages (the bulk loader),
#      and while CREATE INDEX CONCURRENTLY builds;
#   2. an ALTER INDEX SET (layout) + btlayout_relayout() pass is rewriting
#      pages;
#   3. VACUUM is removing dead tuples from the indexes (bulk delete), and
#      while it runs its relayout pass (cleanup);
#   4. four clients insert rows that split pages of every index.
#
# The moment of each crash is chosen by a backend that polls the progress
# (pg_stat_progress_create_index, WAL written, pg_stat_progress_vacuum,
# index size) and sends the signal itself, so that the crash lands inside
# the step and not after it.  After each restart: every btlayout index passes
# btlayout_check(heapallindexed); every index read by an ordered index scan
# (rows and heap TIDs) and by an index-only scan gives what a sorted heap
# scan gives; an interrupted CREATE INDEX left no index, an interrupted
# CREATE INDEX CONCURRENTLY an invalid one that REINDEX makes valid.
#
# A streaming standby replays all of it, crashes included; at the end it is
# promoted while the primary is inserting, relaying out and vacuuming, the
# primary is stopped, and on the promoted node the same checks pass, and the
# indexes take inserts, relayout and VACUUM, and still pass.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest qw(:DEFAULT btl_check_indexes btl_compare_with_heap
  btl_wait_replay);

my $db = 'postgres';

# Every btlayout index passes the checker and (unless checker_only) reads
# as its heap
sub check_all
{
	my ($node, $label, $expected, %opts) = @_;
	my ($n, @failures) = btl_check_indexes($node, $db, 1);
	is(join("\n", @failures), '',
		"$label: btlayout_check(heapallindexed) passes on every index");
	is($n, $expected, "$label: $expected valid btlayout indexes checked");
	return if $opts{checker_only};
	my ($m, @problems) = btl_compare_with_heap($node, $db);
	is(join("\n", @problems), '',
		"$label: index and index-only scans of every index read as the heap");
	return;
}

my $background_files = 0;

# Start $sql (one or more statements, each its own transaction) in the
# background in a psql of its own; returns the handle
sub background
{
	my ($node, $sql, $appname) = @_;
	my ($out, $err) = ('', '');
	my $connstr = $node->connstr($db);
	$connstr .= " application_name=$appname" if defined $appname;
	# from a file: IPC::Run feeds stdin only when pumped
	my $file = $node->basedir . '/background_' . ++$background_files . '.sql';
	append_to_file($file, $sql);
	my $h = IPC::Run::start([ 'psql', '-X', '-q', '-d', $connstr, '-f', $file ],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

# Wait for a background psql or pgbench that lost its server
sub reap
{
	my ($job) = @_;
	eval { $job->{h}->finish; };
	return;
}

# Arm a crash of $node: a backend polls SQL condition $cond every 5 ms
# (progress views refreshed) and, $delay seconds after it holds, sends
# SIGQUIT to the postmaster itself (an immediate shutdown), so that the
# crash lands inside the step being tested.  Returns once the poller runs;
# start the step (with background()), then await_crash().
sub arm_crash
{
	my ($node, $cond, $delay) = @_;
	$delay //= 0;
	my $pid = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
	(my $lit = $cond) =~ s/'/''/g;
	my $poller = background(
		$node, qq{
DO \$\$
DECLARE deadline timestamptz := clock_timestamp() + interval '120 s';
BEGIN
  LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN ($cond);
    IF clock_timestamp() > deadline THEN
      RAISE EXCEPTION 'crash point not reached: %', '$lit';
    END IF;
    PERFORM pg_sleep(0.005);
  END LOOP;
  PERFORM pg_sleep($delay);
  COPY (SELECT 1) TO PROGRAM 'kill -QUIT $pid';
  PERFORM pg_sleep(60);
END \$\$;
}, 'btl_crash_poller');
	$poller->{pid} = $pid;
	$node->poll_query_until($db,
		q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE application_name = 'btl_crash_poller' AND state = 'active'})
	  or die 'the crash poller did not start';
	return $poller;
}

# Wait for the crash armed by arm_crash(), then tell the framework
sub await_crash
{
	my ($node, $poller) = @_;
	my $pid = $poller->{pid};
	my $waited = 0;
	while (kill(0, $pid) && $waited++ < 1500)
	{
		usleep(100_000);
		eval { $poller->{h}->pump_nb; };
		last if ${ $poller->{err} } =~ /crash point not reached/;
	}
	reap($poller);
	die "crash point not reached:\n${ $poller->{err} }"
	  if ${ $poller->{err} } =~ /crash point not reached/;
	die "postmaster $pid still running" if kill(0, $pid);
	$node->stop('immediate', fail_ok => 1);
	return;
}

sub relation_is_valid
{
	my ($node, $name) = @_;
	return $node->safe_psql($db,
		qq{SELECT coalesce((SELECT indisvalid::text FROM pg_index
		   WHERE indexrelid = to_regclass('$name')), 'absent')});
}

#
# Primary and streaming standby (slot); few buffers, so that pages are
# written and evicted before the crashes and redo meets newer pages
#
my ($primary, $standby) = btl_primary_and_standby(
	q{
shared_buffers = 8MB
autovacuum = off
checkpoint_timeout = 1h
max_wal_size = 2GB
wal_retrieve_retry_interval = 200ms
});

$primary->safe_psql(
	$db, q{
CREATE EXTENSION btlayout;
CREATE TABLE big (id int NOT NULL, k int, t text);
INSERT INTO big
  SELECT g, CASE WHEN g % 100 = 0 THEN NULL ELSE (g::int8 * 7919) % 100003 END,
         md5(g::text) || repeat('x', g % 17)
  FROM generate_series(1, 120000) g;
CREATE UNIQUE INDEX big_id ON big USING btlayout (id) WITH (layout = eytzinger);
CREATE INDEX big_t ON big USING btlayout (t) WITH (layout = veb);
VACUUM ANALYZE big;
CHECKPOINT;
});
my $nindexes = 2;

#
# 1a. CREATE INDEX, crashed while the loader writes pages
#
my $loading = q{
SELECT p.tuples_total > 0 AND p.tuples_done > p.tuples_total / 4
FROM pg_stat_progress_create_index p WHERE p.relid = 'big'::regclass};
my $crash = arm_crash($primary, $loading);
# (its transaction stays open after the build, so that however late the
# signal lands, the index it made is never committed)
my $bg = background(
	$primary, q{BEGIN;
CREATE INDEX big_kt ON big USING btlayout (k DESC, t) WITH (layout = btorder);
SELECT pg_sleep(600);
COMMIT;});
await_crash($primary, $crash);
reap($bg);
$primary->start;
is(relation_is_valid($primary, 'big_kt'), 'absent',
	'CREATE INDEX crashed while loading: no index left behind');
check_all($primary, 'crash in CREATE INDEX', $nindexes);
$primary->safe_psql($db,
	'CREATE INDEX big_kt ON big USING btlayout (k DESC, t) WITH (layout = btorder)');
$nindexes++;

#
# 1b. CREATE INDEX CONCURRENTLY, crashed while building
#
$crash = arm_crash($primary, $loading);
$bg = background($primary,
	'CREATE INDEX CONCURRENTLY big_tk ON big USING btlayout (t, k) WITH (layout = blocked);');
await_crash($primary, $crash);
reap($bg);
$primary->start;
is(relation_is_valid($primary, 'big_tk'), 'false',
	'CREATE INDEX CONCURRENTLY crashed while building: an invalid index');
check_all($primary, 'crash in CREATE INDEX CONCURRENTLY', $nindexes);
$primary->safe_psql($db, 'REINDEX INDEX big_tk');
is(relation_is_valid($primary, 'big_tk'), 'true', 'REINDEX makes the invalid index valid');
$nindexes++;
check_all($primary, 'after REINDEX of the invalid index', $nindexes, checker_only => 1);

#
# 2. Relayout passes into other layouts, crashed in the middle.  A pass
#    rewrites some thirty thousand pages a second, faster than any poller
#    can aim, so the step is two rounds of ALTER INDEX SET (layout) and a
#    btlayout_relayout() pass over each of the four indexes, crashed when
#    about an eighth of the first round's pages are rewritten (a full-page
#    image each): the crash lands inside one of the passes.
#
my @big = qw(big_id big_t big_kt big_tk);
my @rounds = ([qw(veb eytzinger blocked btorder)], [qw(btorder blocked eytzinger veb)]);
my $relayout_sql = join(
	"\n",
	map {
		my $round = $_;
		(map { "ALTER INDEX $big[$_] SET (layout = $round->[$_]);" } 0 .. $#big),
		  (map { "SELECT btlayout_relayout('$_');" } @big)
	} @rounds);
my $big_list = join(', ', map { "'$_'" } @big);
my $layout_state = qq{
SELECT sum(s.laid_out_pages) || '/' || sum(s.root_pages + s.internal_pages + s.leaf_pages)
       || ' (' || string_agg(c.relname || ' ' || s.layout || ' '
                             || round(s.laid_out_percent::numeric, 1) || '%', ', ' ORDER BY c.relname) || ')'
FROM pg_class c, LATERAL btlayout_stats(c.oid) s WHERE c.relname IN ($big_list)};
$primary->safe_psql($db, 'CHECKPOINT');
my $start_lsn = $primary->lsn('insert');
# (the sizes are read here: the poller must hold no lock on the indexes)
my $eighth = int($primary->safe_psql($db,
	"SELECT sum(pg_relation_size(c)) FROM unnest(ARRAY[$big_list]::regclass[]) c") / 8);
$crash = arm_crash(
	$primary, qq{
SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$start_lsn') > $eighth});
$bg = background($primary, $relayout_sql);
await_crash($primary, $crash);
reap($bg);
$primary->start;
my $state = $primary->safe_psql($db, $layout_state);
my ($laid, $live) = $state =~ m{^(\d+)/(\d+)};
ok($laid < $live, "the crash interrupted the relayout passes: $state pages laid out");
check_all($primary, 'crash in a relayout pass', $nindexes);
cmp_ok(
	$primary->safe_psql($db,
		'SELECT ' . join(' + ', map { "btlayout_relayout('$_')" } @big)),
	'>', 0, 'new passes rewrite the rest');
$state = $primary->safe_psql($db, $layout_state);
($laid, $live) = $state =~ m{^(\d+)/(\d+)};
is($laid, $live, "and the indexes are all in their layouts: $state");

#
# 3. VACUUM, crashed while deleting index tuples, then while relaying out
#
$primary->safe_psql($db, q{DELETE FROM big WHERE id % 5 IN (1, 2) OR k BETWEEN 40000 AND 50000});
my $rows = $primary->safe_psql($db, 'SELECT count(*) FROM big');
my $throttled = q{SET vacuum_cost_delay = '2ms'; SET vacuum_cost_limit = 100; };
$crash = arm_crash(
	$primary, q{
SELECT phase = 'vacuuming indexes' FROM pg_stat_progress_vacuum
WHERE relid = 'big'::regclass}, 0.3);
$bg = background($primary, "${throttled}VACUUM big;");
await_crash($primary, $crash);
reap($bg);
$primary->start;
is($primary->safe_psql($db, 'SELECT count(*) FROM big'), $rows,
	'rows after the crash in VACUUM');
check_all($primary, 'crash in VACUUM (index bulk delete)', $nindexes);

$crash = arm_crash(
	$primary, q{
SELECT phase = 'cleaning up indexes' FROM pg_stat_progress_vacuum
WHERE relid = 'big'::regclass}, 0.3);
$bg = background($primary, "${throttled}VACUUM big;");
await_crash($primary, $crash);
reap($bg);
$primary->start;
my $laid_out = $primary->safe_psql(
	$db, q{
SELECT min(s.laid_out_percent) < 100,
       string_agg(c.relname || ' ' || round(s.laid_out_percent::numeric, 1) || '%', ', ')
FROM pg_class c, LATERAL btlayout_stats(c.oid) s
WHERE c.relname LIKE 'big\_%' AND c.relkind = 'i'});
like($laid_out, qr/^t\|/,
	"the crash interrupted VACUUM's relayout pass ($laid_out)");
check_all($primary, "crash in VACUUM's relayout pass (index cleanup)", $nindexes);
$primary->safe_psql($db, 'VACUUM big');
check_all($primary, 'VACUUM after the crashes', $nindexes, checker_only => 1);

#
# 4. Concurrent inserts splitting pages of every index, crashed
#
$primary->safe_psql(
	$db, q{
CREATE TABLE ins (id bigserial, k int, t text);
CREATE UNIQUE INDEX ins_id ON ins USING btlayout (id) WITH (layout = veb);
CREATE INDEX ins_k ON ins USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX ins_t ON ins USING btlayout (t) WITH (layout = blocked);
CREATE INDEX ins_kt ON ins USING btlayout (k, t DESC) WITH (layout = btorder);
});
$nindexes += 4;
my $script = $primary->basedir . '/insert.sql';
append_to_file(
	$script, q{
\set r random(1, 3)
INSERT INTO ins (k, t)
  SELECT CASE :r WHEN 1 THEN (random() * 100000)::int WHEN 2 THEN (random() * 30)::int
                 ELSE 200000 + g END,
         md5(random()::text) || repeat('y', g % 20)
  FROM generate_series(1, 25) g;
});
my @pgbench = ('pgbench', '--no-vacuum', '--client=4', '--jobs=2', '--time=60',
	"--file=$script", '-h', $primary->host, '-p', $primary->port, $db);
my ($bout, $berr) = ('', '');
$crash = arm_crash($primary, q{SELECT pg_relation_size('ins_t') > 6000000});
my $bench = { h => IPC::Run::start(\@pgbench, '>', \$bout, '2>', \$berr) };
await_crash($primary, $crash);
reap($bench);
$primary->start;
my $inserted = $primary->safe_psql($db, 'SELECT count(*) FROM ins');
cmp_ok($inserted, '>', 50000, "the clients had inserted $inserted rows before the crash");
# pgbench reports each client it lost ("client N aborted in command ...",
# or "client N script M aborted in command ..." when the client was in a
# script's command);
# the server's "terminating connection" warning is sent on a best-effort
# basis only (not at all to a backend killed before it could), so it is not
# what the test looks for
isnt($bench->{h}->result, 0, 'pgbench ended with an error (the crash), not by its timer');
my %aborted = map { $_ => 1 } $berr =~ /client (\d+) (?:script \d+ )?aborted/g;
is(join(',', sort keys %aborted), '0,1,2,3', 'all four clients lost their server in the crash')
  or diag("pgbench's stderr:\n$berr");
check_all($primary, 'crash during concurrent inserts', $nindexes);
my ($ret, $out, $err) = $primary->psql($db,
	'INSERT INTO ins SELECT * FROM ins WHERE id = (SELECT max(id) FROM ins)');
like($err, qr/duplicate key value violates unique constraint "ins_id"/,
	'the unique index still rejects duplicates after the crash');

#
# 5. Promote the standby in the middle of inserts, relayout and VACUUM
#
btl_wait_replay($primary, $standby);
my $relayouts = $primary->basedir . '/relayout.sql';
append_to_file(
	$relayouts, q{
\set l random(1, 4)
SELECT CASE :l WHEN 1 THEN 'eytzinger' WHEN 2 THEN 'veb' WHEN 3 THEN 'btorder'
       ELSE 'blocked' END AS layout \gset
ALTER INDEX ins_k SET (layout = :layout);
SELECT btlayout_relayout('ins_k');
SELECT btlayout_relayout('ins_t');
ALTER INDEX big_t SET (layout = :layout);
SELECT btlayout_relayout('big_t');
});
my $vacuums = $primary->basedir . '/vacuum.sql';
append_to_file(
	$vacuums, q{
DELETE FROM ins WHERE id IN (SELECT id FROM ins ORDER BY random() LIMIT 200);
VACUUM ins;
});
my %jobs = (
	inserts => [ "--file=$script", '--client=2' ],
	relayout => [ "--file=$relayouts", '--client=1' ],
	vacuum => [ "--file=$vacuums", '--client=1' ],);
my %h;
foreach my $job (sort keys %jobs)
{
	my ($o, $e) = ('', '');
	$h{$job} = {
		h => IPC::Run::start(
			[
				'pgbench', '--no-vacuum', '--time=60', @{ $jobs{$job} },
				'-h', $primary->host, '-p', $primary->port, $db
			],
			'>', \$o, '2>', \$e)
	};
}
$start_lsn = $primary->lsn('insert');
# let the workload run and the standby replay part of it
$standby->poll_query_until($db,
	qq{SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '$start_lsn') > 20000000})
  or die 'the standby did not replay the workload';
$standby->promote;
$primary->stop('immediate');
reap($_) foreach values %h;
$standby->poll_query_until($db, 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
check_all($standby, 'standby promoted mid-workload', $nindexes);

$standby->safe_psql(
	$db, q{
INSERT INTO ins (k, t)
  SELECT (random() * 100000)::int, md5(g::text) FROM generate_series(1, 20000) g;
INSERT INTO big SELECT 1000000 + g, g, md5(g::text) FROM generate_series(1, 20000) g;
DELETE FROM ins WHERE k % 10 = 0;
});
my $rewritten = $standby->safe_psql($db,
	q{SELECT sum(btlayout_relayout(c.oid)) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
	  WHERE a.amname = 'btlayout' AND c.relkind = 'i'});
cmp_ok($rewritten, '>', 0, "the promoted node lays out pages its inserts broke ($rewritten)");
$standby->safe_psql($db, 'VACUUM big; VACUUM ins');
check_all($standby, 'promoted node after inserts, relayout and VACUUM', $nindexes);
($ret, $out, $err) = $standby->psql($db,
	'INSERT INTO big SELECT * FROM big WHERE id = (SELECT min(id) FROM big)');
like($err, qr/duplicate key value violates unique constraint "big_id"/,
	'the promoted node enforces uniqueness');

# Neither node met a PANIC (in redo, or anywhere else)
unlike(slurp_file($primary->logfile), qr/\bPANIC:/, 'no PANIC in the primary log');
unlike(slurp_file($standby->logfile), qr/\bPANIC:/, 'no PANIC in the standby log');

$standby->stop;
done_testing();
