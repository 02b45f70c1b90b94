
# Copyright (c) btlayout authors
#
# Replica parity: a streaming standby (replication slot), with
# wal_consistency_checking = 'btree' on both nodes, replays
#
#   1. the pg_regress suite of btlayout (the Makefile's REGRESS list but
#      the tests of the read side, named below; sql/ and expected/ of the
#      tree), run against the primary in a database of its own: every test
#      must pass;
#   2. a relayout-heavy workload in another database: indexes in every
#      layout (unique, text, text_bin_ops, multi-column with INCLUDE,
#      duplicates, expression and partial), inserts that split pages,
#      deletes, updates, VACUUM, btlayout_relayout(), ALTER INDEX SET
#      (layout) and relayout, REINDEX (plain and CONCURRENTLY), REINDEX
#      TABLE.
#
# Once the standby has replayed up to the primary's insert LSN: it is still
# up, in recovery, and its log has no "inconsistent page found", FATAL or
# PANIC; for every btlayout index of every database, the standby reads the
# same content as the primary through a forced ordered index scan (a digest
# of keys in delivery order, of rows with heap TIDs), and its leaf pages hold
# the same items (pageinspect, LP_DEAD hints aside); btlayout_check(idx,
# true) passes on the primary and, after the standby is promoted, on the
# promoted standby; on the standby in recovery btlayout_check(idx) (each
# page on its own: see src/checker.c) passes on every index the primary
# checked.
#
# BTL_REPLICA_REGRESS, if set, replaces the list of pg_regress tests (e.g.
# "btlayout layouts" for a quicker run); the tests of the read side are
# left out of either list.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest qw(:DEFAULT btl_databases btl_indexes btl_index_digest
  btl_leaf_digest btl_check_indexes btl_compare_with_heap btl_wait_replay);

my $tree = $ENV{TESTDIR} // "$FindBin::RealBin/..";
my $pg_regress = $ENV{PG_REGRESS}
  or BAIL_OUT('PG_REGRESS is not set (run through scripts/test.sh)');

# The pg_regress tests: the Makefile's list, as scripts/test.sh takes it
my @tests;
if (($ENV{BTL_REPLICA_REGRESS} // '') =~ /\S/)
{
	@tests = split ' ', $ENV{BTL_REPLICA_REGRESS};
}
else
{
	my $list = `make -s -C '$tree' print-regress 2>/dev/null`;
	if ($? != 0 || $list !~ /\S/)
	{
		my $makefile = slurp_file("$tree/Makefile");
		($list) = $makefile =~ /^REGRESS\s*=\s*(.*)$/m;
	}
	@tests = split ' ', ($list // '');
}

# Not the tests of the read side, whose subject leaves no WAL of its
# own: the in-page search (search, recent), the copies of upper levels
# and their keys (upper, normkey, normkey_libc, collhint), per-backend
# state (manyindexes), the sort support of the BIN classes
# (sortsupport).  What they write (index builds, inserts, REINDEX,
# TRUNCATE, databases) the others write too, and so does the workload
# below; they took 228 s of this test's 425 on 15.20, which the CI's 80
# minutes over five versions cannot spare.  (bin stays: its indexes of
# the BIN classes are the ones the suite leaves behind for the standby
# to be compared on.)
my %read_side = map { $_ => 1 }
  qw(search recent upper normkey normkey_libc collhint manyindexes sortsupport);
@tests = grep { !$read_side{$_} } @tests;
ok(scalar(@tests) > 0, 'pg_regress tests to run: ' . join(' ', @tests));

#
# Primary, slot, streaming standby; both check WAL consistency of btree
# records (the primary adds the page images, the standby compares them)
#
# (shared_buffers: the regression tests count pins of pages in the buffers
# they were in last time, and a streaming node's 1MB would evict them)
my $common_conf = q{
shared_buffers = 64MB
wal_consistency_checking = 'btree'
wal_compression = lz4
max_wal_size = 4GB
autovacuum = off
max_prepared_transactions = 10
};
my ($primary, $standby) = btl_primary_and_standby($common_conf);

#
# 1. The pg_regress suite against the primary, in a database made as
#    pg_regress makes its own (UTF8, C locale, its settings)
#
my $regress_db = 'btl_regress';
$primary->safe_psql('postgres',
	qq{CREATE DATABASE $regress_db TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'});
$primary->safe_psql('postgres',
	join('', map { "ALTER DATABASE $regress_db SET $_;" }
		  ("lc_messages TO 'C'", "lc_monetary TO 'C'", "lc_numeric TO 'C'",
			  "lc_time TO 'C'", "bytea_output TO 'hex'",
			  "timezone_abbreviations TO 'Default'")));

my $outdir = PostgreSQL::Test::Utils::tempdir("regress_replica");
my $bindir = $primary->config_data('--bindir');
my @regress_cmd = (
	$pg_regress, '--use-existing',
	'--host=' . $primary->host, '--port=' . $primary->port,
	"--bindir=$bindir", "--inputdir=$tree",
	"--outputdir=$outdir", "--dbname=$regress_db",
	@tests);
my ($regress_out, $regress_err) = ('', '');
my $regress_start = time;
my $regress_ok = IPC::Run::run(\@regress_cmd, '>', \$regress_out, '2>', \$regress_err);
note("pg_regress ran in " . (time - $regress_start) . " s:\n$regress_out");
foreach my $test (@tests)
{
	# "test NAME ... ok" (15), "ok N - NAME" (16 and later)
	like($regress_out, qr/^(?:(?:test +| +)\Q$test\E +\.\.\. ok|ok \d+ +[-+] +\Q$test\E )/m,
		"pg_regress test $test passes against the primary");
}
ok($regress_ok, 'pg_regress exits with success');
if (!$regress_ok)
{
	diag("pg_regress stderr: $regress_err");
	diag(slurp_file("$outdir/regression.diffs")) if -f "$outdir/regression.diffs";
}

#
# 2. A relayout-heavy workload in another database
#
my $work_db = 'btl_work';
$primary->safe_psql('postgres',
	qq{CREATE DATABASE $work_db TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'});
$primary->safe_psql(
	$work_db, q{
CREATE EXTENSION btlayout;
CREATE TABLE w (id int NOT NULL, k int, t text, a int, b text, f float8);
INSERT INTO w
  SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE (g * 7919) % 40009 END,
         md5(g::text), g % 37, repeat(chr(65 + g % 26), 1 + g % 29), g / 7.0
  FROM generate_series(1, 40000) g;
CREATE UNIQUE INDEX w_id ON w USING btlayout (id) WITH (layout = eytzinger);
CREATE INDEX w_k ON w USING btlayout (k DESC NULLS FIRST) WITH (layout = veb);
CREATE INDEX w_t ON w USING btlayout (t) WITH (layout = btorder, fillfactor = 100);
CREATE INDEX w_tbin ON w USING btlayout (b text_bin_ops) WITH (layout = blocked);
CREATE INDEX w_ab ON w USING btlayout (a, b DESC) INCLUDE (f) WITH (layout = blocked);
CREATE INDEX w_a ON w USING btlayout (a) WITH (layout = none);
CREATE INDEX w_expr ON w USING btlayout (lower(b), id) WITH (layout = eytzinger) WHERE a < 20;
});

# One step each: a name and SQL run on the primary
my @layouts = qw(none eytzinger veb btorder blocked);
my @indexes = qw(w_id w_k w_t w_tbin w_ab w_a w_expr);
my $relayout_all =
  'SELECT ' . join(' + ', map { "btlayout_relayout('$_')" } @indexes) . ';';
my @steps = (
	[
		'inserts that split pages (random, ascending, duplicates)' => q{
INSERT INTO w
  SELECT 100000 + g, (random() * 40009)::int, md5((100000 + g)::text),
         (random() * 36)::int, repeat(chr(65 + g % 26), 1 + g % 29), g
  FROM generate_series(1, 12000) g;}
	],
	[ relayout => $relayout_all ],
	[
		'deletes, updates and VACUUM' => q{
DELETE FROM w WHERE id % 3 = 0 OR k BETWEEN 10000 AND 15000;
UPDATE w SET k = k + 1, t = t || 'u' WHERE id % 11 = 1;
VACUUM w;}
	],
	(
		map {
			my $round = $_;
			[
				"layouts switched (round $round) and relayout" => join(
					"\n",
					(
						map {
							"ALTER INDEX $indexes[$_] SET (layout = "
							  . $layouts[ ($_ + $round) % @layouts ] . ');'
						} 0 .. $#indexes
					),
					$relayout_all)
			]
		} 1 .. 2
	),
	[
		'inserts into laid-out pages' => q{
INSERT INTO w
  SELECT 200000 + g, (random() * 40009)::int, md5(g::text) || 'i',
         (random() * 36)::int, repeat('q', 1 + g % 40), g
  FROM generate_series(1, 3000) g;}
	],
	[
		'REINDEX' => q{
REINDEX INDEX w_k;
REINDEX INDEX CONCURRENTLY w_t;
ALTER INDEX w_ab SET (layout = eytzinger);
REINDEX INDEX w_ab;}
	],
	[
		'deletes, VACUUM, relayout' => qq{
DELETE FROM w WHERE a IN (3, 4, 5) OR id % 7 = 2;
VACUUM w;
$relayout_all}
	],
	[
		'REINDEX TABLE and inserts' => q{
ALTER INDEX w_a SET (layout = btorder);
REINDEX TABLE w;
INSERT INTO w
  SELECT 300000 + g, (random() * 40009)::int, md5(g::text) || 'r',
         (random() * 36)::int, repeat('z', 1 + g % 40), g
  FROM generate_series(1, 3000) g;
ANALYZE w;}
	],);
foreach my $step (@steps)
{
	my $out = $primary->safe_psql($work_db, $step->[1]);
	note("workload step done: $step->[0]");
	# these relayout passes must find pages to rewrite: inserts broke
	# them, or the layout changed
	cmp_ok((split /\n/, $out)[-1], '>', 0, "$step->[0]: pages rewritten ($out)")
	  if $step->[0] =~ /^(relayout|layouts switched)/;
}
is( $primary->safe_psql(
		$work_db,
		q{SELECT count(DISTINCT layout) FROM pg_class c,
		  LATERAL btlayout_stats(c.oid) WHERE c.relname LIKE 'w\_%' AND c.relkind = 'i'}),
	'5',
	'the workload indexes end in all five layouts');
my ($nwork, @work_problems) = btl_compare_with_heap($primary, $work_db);
is($nwork, scalar(@indexes), 'the workload has its btlayout indexes');
is(join("\n", @work_problems), '',
	'primary: every workload index reads as its heap (index and index-only scans)');

#
# 3. The standby catches up; compare it with the primary
#
# pageinspect, for the leaf page digests, wherever there are btlayout
# indexes (replayed to the standby)
foreach my $db (btl_databases($primary))
{
	$primary->safe_psql($db, 'CREATE EXTENSION IF NOT EXISTS pageinspect')
	  if btl_indexes($primary, $db);
}

# (compared with the LSN waited for: the primary may insert WAL of its
# own, a running-transactions record say, after it)
my $end_lsn = btl_wait_replay($primary, $standby);
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the standby is up and in recovery after replaying everything');
is( $standby->safe_psql('postgres', "SELECT pg_last_wal_replay_lsn() >= '$end_lsn'::pg_lsn"),
	't', "the standby's replay LSN has reached the primary's insert LSN");

# Every database, and every btlayout index in it, as the standby's
# catalogs list them (the same as the primary's)
my @databases = btl_databases($standby);
is("@databases", join(' ', btl_databases($primary)),
	"the standby has the primary's databases");
my (%indexes, @catalog_differ);
foreach my $db (@databases)
{
	my @s = btl_indexes($standby, $db);
	my @p = btl_indexes($primary, $db);
	push @catalog_differ, $db
	  if join(' ', map { "$_->{name}/$_->{valid}" } @s) ne join(' ', map { "$_->{name}/$_->{valid}" } @p);
	$indexes{$db} = [ grep { $_->{valid} && $_->{persistent} } @s ];
}
is("@catalog_differ", '', "the standby lists the primary's btlayout indexes in every database");
# The whole suite leaves some indexes behind (a chosen subset may not)
cmp_ok(scalar(@{ $indexes{$regress_db} }), '>', 0,
	'the pg_regress suite leaves btlayout indexes behind')
  unless $ENV{BTL_REPLICA_REGRESS};
note(join(', ', map { "$_: " . scalar(@{ $indexes{$_} }) . ' btlayout indexes' } @databases));

my $standby_log = slurp_file($standby->logfile);
unlike($standby_log, qr/inconsistent page found/,
	'no WAL consistency check failure on the standby');
my @bad_lines = grep { /\b(FATAL|PANIC):/ } split /\n/, $standby_log;
is(join("\n", @bad_lines), '', 'no FATAL or PANIC in the standby log');

foreach my $db (@databases)
{
	my @ixs = @{ $indexes{$db} };
	next unless @ixs;
	my (@differ, @own);
	foreach my $ix (@ixs)
	{
		my ($p, $plan) = btl_index_digest($primary, $db, $ix, 'indexscan', ctid => 1);
		my ($s, $splan) = btl_index_digest($standby, $db, $ix, 'indexscan', ctid => 1);
		push @differ, "$ix->{name}: ordered scan primary $p standby $s" if $p ne $s;
		push @differ, "$ix->{name}: plan differs on the standby" if $plan ne $splan;
		push @own, $ix->{name}
		  if $plan =~ /Index (Only )?Scan (Backward )?using \Q$ix->{relname}\E /
		  && $plan !~ /Sort/;
		my $pl = btl_leaf_digest($primary, $db, $ix->{name});
		my $sl = btl_leaf_digest($standby, $db, $ix->{name});
		push @differ, "$ix->{name}: leaf items primary $pl standby $sl" if $pl ne $sl;
	}
	is(join("\n", @differ), '',
		"$db: the standby reads the same content from its "
		  . scalar(@ixs)
		  . ' btlayout indexes as the primary (ordered scans, leaf items)');
	note("$db: " . scalar(@own) . ' of ' . scalar(@ixs)
		  . ' indexes read by an ordered scan of their own');
	if ($db eq $work_db)
	{
		is(scalar(@own), scalar(@ixs),
			"$db: each workload index is compared through an ordered scan of itself");
	}
	else
	{
		cmp_ok(scalar(@own), '>=', scalar(@ixs) / 2,
			"$db: most indexes are compared through an ordered scan of their own");
	}

	my ($checked, @failures) = btl_check_indexes($primary, $db, 1);
	is(join("\n", @failures), '',
		"$db: btlayout_check(heapallindexed) passes on the primary ($checked indexes)");
	my ($schecked, @sfailures) = btl_check_indexes($standby, $db, 0);
	is(join("\n", @sfailures), '',
		"$db: btlayout_check passes on the standby in recovery ($schecked indexes)");
	is($schecked, $checked, "$db: the standby checked every index the primary did");
}

#
# 4. Promote the standby: its replayed indexes pass the checker and take
#    writes
#
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';
foreach my $db (@databases)
{
	next unless @{ $indexes{$db} };
	my ($checked, @failures) = btl_check_indexes($standby, $db, 1);
	is(join("\n", @failures), '',
		"$db: btlayout_check(heapallindexed) passes on the promoted standby ($checked indexes)");
}
$standby->safe_psql(
	$work_db, q{
INSERT INTO w
  SELECT 400000 + g, (random() * 40009)::int, md5(g::text) || 'p',
         (random() * 36)::int, repeat('p', 1 + g % 40), g
  FROM generate_series(1, 3000) g;
});
my ($npromoted, @promoted_problems) = btl_compare_with_heap($standby, $work_db);
is(join("\n", @promoted_problems), '',
	"promoted standby: inserts work and every workload index reads as its heap ($npromoted)");
my ($pchecked, @pfailures) = btl_check_indexes($standby, $work_db, 1);
is(join("\n", @pfailures), '',
	"promoted standby: btlayout_check(heapallindexed) passes after inserts ($pchecked)");

$standby->stop;
$primary->stop;
done_testing();
