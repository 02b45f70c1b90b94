
# Copyright (c) btlayout authors

# The copy of the upper levels on a standby: one standby session looks keys
# up (building its copy), waits while the primary deletes a key range and
# refills it elsewhere, VACUUMs (page deletion, then recycling once a
# transaction id later) and fills the freed pages again elsewhere in the
# key space, then looks the same keys up again once that is replayed, in
# every scan shape.  The index keeps its size and tuple count through those
# VACUUMs, so nothing invalidates the copy: the second round starts from a
# copy naming leaves that are gone or hold other keys.  Its answers must be
# the heap's, and the counters must show lookups from the copy (hits) and
# stale leaves refused (misses).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest qw(btl_primary_and_standby btl_wait_replay);
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

# (no autovacuum: an auto-analyze holding back the horizon would keep the
# freed pages of step 2 from being recycled)
my ($primary, $standby) = btl_primary_and_standby('autovacuum = off', '');

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION btlayout;
CREATE TABLE u (k int4) WITH (autovacuum_enabled = off);
INSERT INTO u SELECT 2 * g FROM generate_series(0, 599999) g;
CREATE INDEX u_k ON u USING btlayout (k);
CREATE TABLE v (k int4) WITH (autovacuum_enabled = off);
INSERT INTO v SELECT * FROM u;
CREATE INDEX v_k ON v USING btree (k);
CREATE TABLE marker (step int);
VACUUM u, v;
});
btl_wait_replay($primary, $standby);

# The lookups in table $t: for keys lo..hi by step, equality, >= and >
# forward, < and <= backward, one row per key and shape.  Table v has the
# same rows as u, in a core btree index: the reference.
sub lookups
{
	my ($t) = @_;
	return q{
SELECT md5(string_agg(r, ' ' ORDER BY x)) FROM (
  SELECT x, concat_ws(',',
    (SELECT count(*) FROM u WHERE k = x),
    (SELECT min(k) FROM (SELECT k FROM u WHERE k >= x ORDER BY k LIMIT 2) s),
    (SELECT max(k) FROM (SELECT k FROM u WHERE k > x ORDER BY k LIMIT 2) s),
    (SELECT min(k) FROM (SELECT k FROM u WHERE k < x ORDER BY k DESC LIMIT 2) s),
    (SELECT max(k) FROM (SELECT k FROM u WHERE k <= x ORDER BY k DESC LIMIT 2) s)) AS r
  FROM generate_series(-20001, 1200001, 997) x) t;
} =~ s/\bu\b/$t/gr;
}
my $lookups = lookups('u');
my $stats = q{SELECT upper_copy_hits || ' ' || upper_copy_misses FROM btlayout_search_stats();};

# The standby session waits for each step of the primary (one short
# statement at a time, so that no snapshot holds replay back), then looks
# the keys up.  Both statements of the wait name the step, so that
# pg_stat_activity shows which step the session waits for whichever of
# the two it ran last.
sub wait_for_step
{
	my ($step) = @_;
	return ("SELECT NOT EXISTS (SELECT FROM marker WHERE step = $step) AS waiting \\gset\n"
		  . "\\if :waiting\nSELECT pg_sleep(0.2), 'waiting for step = $step' \\g /dev/null\n\\endif\n") x 900
	  . "SELECT 'step $step: ' || EXISTS (SELECT FROM marker WHERE step = $step);\n";
}
my $script = "SET enable_seqscan = off;\nSET enable_bitmapscan = off;\n"
  . wait_for_step(1) . "$lookups$stats"
  . wait_for_step(2) . "$lookups$stats";
my $file = $standby->basedir . '/lookups.sql';
append_to_file($file, $script);
my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[
		'psql', '-X', '-Atq', '-v', 'ON_ERROR_STOP=1',
		'-h', $standby->host, '-p', $standby->port, '-d', 'postgres',
		'-f', $file
	],
	'>', \$out, '2>', \$err);

# Step 1: free pages, so that later splits need not extend the file
$primary->safe_psql(
	'postgres', q{
DELETE FROM u WHERE k BETWEEN 700000 AND 1000000;
DELETE FROM v WHERE k BETWEEN 700000 AND 1000000;
VACUUM u;
SELECT txid_current();
VACUUM u;
INSERT INTO marker VALUES (1);
});
my $ref_before = $primary->safe_psql('postgres',
	'SET enable_seqscan = off; SET enable_bitmapscan = off; ' . lookups('v'));
my $size_before = $primary->safe_psql('postgres', q{SELECT pg_relation_size('u_k')});

# Step 2, once the standby session has looked up and waits again
$standby->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE '%step = 2%' AND pid <> pg_backend_pid()})
  or die 'the standby session did not get to step 2';
$primary->safe_psql(
	'postgres', q{
CREATE TEMP TABLE gone AS
  WITH d AS (DELETE FROM u WHERE k BETWEEN 300000 AND 420000 RETURNING 1)
  SELECT count(*) AS n FROM d;
DELETE FROM v WHERE k BETWEEN 300000 AND 420000;
INSERT INTO u SELECT 2 * g + 1 FROM generate_series(260000, 260000 + (SELECT n FROM gone) - 1) g;
INSERT INTO v SELECT 2 * g + 1 FROM generate_series(260000, 260000 + (SELECT n FROM gone) - 1) g;
VACUUM u;
SELECT txid_current();
VACUUM u;
INSERT INTO u SELECT 2 * g + 1 FROM generate_series(230000, 239999) g;
INSERT INTO u SELECT -g FROM generate_series(1, 10000) g;
INSERT INTO v SELECT 2 * g + 1 FROM generate_series(230000, 239999) g;
INSERT INTO v SELECT -g FROM generate_series(1, 10000) g;
INSERT INTO marker VALUES (2);
});
is($primary->safe_psql('postgres', q{SELECT pg_relation_size('u_k')}),
	$size_before, 'step 2 reused freed pages: the index kept its size');
btl_wait_replay($primary, $standby);

ok($h->finish, 'the standby session ran without errors') or diag($err);
my @lines = split /\n/, $out;
is(scalar(@lines), 6, 'the standby session printed two rounds')
  or diag($out);
my ($step1, $before, $stats1, $step2, $after, $stats2) = @lines;
is("$step1 $step2", 'step 1: true step 2: true', 'each round ran after its step was replayed');

my $ref_after = $primary->safe_psql('postgres',
	'SET enable_seqscan = off; SET enable_bitmapscan = off; ' . lookups('v'));
isnt($ref_before, $ref_after, 'step 2 changed the answers');
is($before, $ref_before, 'standby, first round: core btree\'s answers');
is($after, $ref_after, 'standby, second round (stale copy): core btree\'s answers');

my ($hits1, $misses1) = split / /, $stats1;
my ($hits2, $misses2) = split / /, $stats2;
cmp_ok($hits1, '>', 0, "standby, first round: lookups from the copy ($hits1)");
cmp_ok($hits2 - $hits1, '>', 0,
	'standby, second round: lookups from the copy (' . ($hits2 - $hits1) . ')');
cmp_ok($misses2 - $misses1, '>', 0,
	'standby, second round: stale leaves refused (' . ($misses2 - $misses1) . ')');

# The standby's pages are the primary's, and the index is sound
$primary->safe_psql('postgres', 'CHECKPOINT');
btl_wait_replay($primary, $standby);
is($standby->safe_psql('postgres', q{SELECT btlayout_check('u_k')}), '',
	'btlayout_check on the standby');

$standby->stop;
$primary->stop;
done_testing();
