
# Copyright (c) btlayout authors

# Defects a review found, each in the state that produced it:
#
# 1. A temporary index and a permanent one with the same relation file
#    number (possible once the OID counter has wrapped: a temporary
#    relation's file number is unique only among its backend's files).
#    The collision is forced with pg_resetwal -o: the permanent index gets
#    its file number by REINDEX, the temporary one by its OID.  Lookups,
#    killed items and relayouts through either must touch only its own
#    pages: this backend's per-index state is keyed by the index's identity
#    (OID, file, backend), not by its file alone.
# 2. A lookup relayout nested in a search of the same index that holds the
#    leaf's share lock (an operator class whose comparison runs a query
#    through the index): it must not wait for the exclusive lock on itself.
# 3. A lookup relayout nested in an insert that holds the leaf's
#    exclusive lock (issue 48, item 3): the same comparison running a query,
#    now from an INSERT, while an open cursor's note on that leaf is
#    pending.  It must neither wait on its own lock (shared buffers) nor
#    rewrite the page under the insert (a temporary index: local buffers
#    have no locks to find busy).
# 4. 15 and 16 with old_snapshot_threshold: read-only lookups must not
#    rewrite pages (which would raise "snapshot too old" for an old
#    snapshot where core btree raises none).
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('defects');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
my $major = int($node->safe_psql('postgres', 'SHOW server_version_num') / 10000);

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION btlayout;
CREATE TABLE p (k int4, v text) WITH (autovacuum_enabled = off);
INSERT INTO p SELECT g, 'perm' FROM generate_series(1, 100000) g;
CREATE INDEX pi ON p USING btlayout (k);
VACUUM p;
});

#
# 1. The file-number collision
#
my $target = 2000000;

# pg_resetwal -o $oid on the stopped server
sub next_oid
{
	my ($oid) = @_;
	$node->stop;
	command_ok([ 'pg_resetwal', '-o', $oid, $node->data_dir ],
		"pg_resetwal -o $oid");
	$node->start;
}

# The permanent index gets file number $target from REINDEX
next_oid($target);
$node->safe_psql('postgres', 'REINDEX INDEX pi');
is($node->safe_psql('postgres', q{SELECT pg_relation_filenode('pi')}),
	$target, "the permanent index's file number is $target");

# How many OIDs a session takes before its temporary index's: measured in
# one session, then the counter is set back by that many for the next
my $temp_setup = q{
CREATE TEMP TABLE tt (k int4, v text) WITH (autovacuum_enabled = off);
INSERT INTO tt SELECT 100001 - g, 'temp' FROM generate_series(1, 100000) g;
CREATE INDEX ti ON tt USING btlayout (k);
};
# (twice: the first session also makes the temporary schema)
my $before;
for my $base ($target + 100000, $target + 200000)
{
	next_oid($base);
	$before = $node->safe_psql('postgres',
		$temp_setup . q{SELECT 'ti'::regclass::oid}) - $base;
}
next_oid($target - $before);

# One session holds the temporary index: it looks up the permanent index
# first, so that its state for that index is there when the temporary one
# is searched, then the other way round; then it deletes rows of the
# temporary table and scans them through its index, which marks their
# items dead (killed items) in the pages it read
my @got = split /\n/, $node->safe_psql(
	'postgres', $temp_setup . q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT pg_relation_filenode('ti');
SELECT k || ':' || v FROM p WHERE k = 77777;
SELECT string_agg(k || ':' || v, ',') FROM tt WHERE k = 77777;
SELECT count(*) FROM generate_series(1, 100000, 37) g
  WHERE (SELECT string_agg(v, ',') FROM tt WHERE k = g) IS DISTINCT FROM 'temp';
SELECT count(*) FROM generate_series(1, 100000, 41) g
  WHERE (SELECT string_agg(v, ',') FROM p WHERE k = g) IS DISTINCT FROM 'perm';
DELETE FROM tt WHERE k BETWEEN 50000 AND 50100;
SELECT count(*) FROM tt WHERE k BETWEEN 50000 AND 50100;
SELECT count(*) FROM tt WHERE k BETWEEN 50000 AND 50100;
SELECT 'clean' FROM (SELECT btlayout_check('ti', true)) c;
});
is($got[0], $target, "the temporary index has the permanent one's file number");
is($got[1], '77777:perm', 'a lookup in the permanent index');
is($got[2], '77777:temp', 'then a lookup in the temporary index finds its own row');
is($got[3], '0', 'every lookup of the temporary index finds its own rows');
is($got[4], '0', 'and, after those, every lookup of the permanent index its own');
is($got[6], '0', 'the deleted rows are gone through the temporary index');
is($got[7], 'clean', 'btlayout_check(heapallindexed) of the temporary index is clean');
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM p WHERE k BETWEEN 50000 AND 50100}), '101',
	"another session finds the permanent rows of that range through its index: the temporary index's scans killed none of its items");
is( $node->safe_psql(
		'postgres', q{SELECT 'clean' FROM (SELECT btlayout_check('pi', true)) c}),
	'clean', 'btlayout_check(heapallindexed) of the permanent index is clean');

#
# 2. A lookup relayout nested in a search holding the leaf's share lock
#
# The index's second column compares through a function that, once, looks
# the first column up through the same index: the outer lookup of (k, j)
# calls it on the leaf, holding the leaf's share lock, when it meets k's
# key, and the nested lookup (of k alone, which the layout walk serves)
# meets that leaf in nbtree's order and notes it for a relayout.
$node->safe_psql(
	'postgres', q{
CREATE TABLE n (k int4, j int4) WITH (autovacuum_enabled = off);
CREATE FUNCTION nest_cmp(a int4, b int4) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('btl_test.nest', true) = 'on' THEN
    PERFORM set_config('btl_test.nest', 'off', false);
    PERFORM count(*) FROM n WHERE k = 1000;
  END IF;
  RETURN btint4cmp(a, b);
END
$$;
CREATE OPERATOR CLASS nest_ops FOR TYPE int4 USING btlayout AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 nest_cmp(int4, int4);
-- filled after it is made: its leaves are split pages in nbtree's order,
-- which lookups note for a relayout
CREATE INDEX ni ON n USING btlayout (k, j nest_ops);
INSERT INTO n SELECT g, g FROM generate_series(1, 2000) g;
});
my $nested = $node->psql(
	'postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SET btl_test.nest = on;
SELECT count(*) FROM n WHERE k = 1000 AND j = 1000;
SELECT current_setting('btl_test.nest');
SELECT lookup_relayouts FROM btlayout_search_stats();},
	timeout => 60,
	stdout => \my $nested_out,
	stderr => \my $nested_err);
is($nested, 0, 'a lookup nested in a search holding its leaf returns')
  or diag("stdout: $nested_out\nstderr: $nested_err");
like($nested_out, qr/^1\noff\n0$/,
	'the nested lookup ran, and left the leaf the outer search holds as it was');
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM n WHERE k = 1000;
SELECT lookup_relayouts > 0 FROM btlayout_search_stats();}), "1\nt",
	'the same lookup, not nested, lays the page out');

#
# 3. A lookup relayout nested in an insert holding the leaf exclusively
#
# The second column of the index compares through a function that, when
# armed, runs a lookup of k = 1000 through the table's index: the insert of
# (1500, '00001501') calls it only on the leaf of k = 1500, under that
# leaf's exclusive lock (k is unique, so the descent's pivots, truncated
# to k, never reach the second column), with an argument pointing into
# the page.
# Before, an open cursor's lookup of k = 1500 noted that leaf (a split
# page in nbtree's order) and was fetched to its end, which gives up its
# pin (a temporary index's scans keep theirs while on a page); the nested
# lookup's scan ends and takes up the notes of its index: the leaf the
# insert holds.  Without the fix it waits for the share lock on the
# buffer this backend holds exclusively: an LWLock wait, which neither
# statement_timeout nor a cancel ends, hence IPC::Run's timeout on psql.
# On a temporary index its buffer locks do nothing, and the page was
# rewritten under the insert: the function saw its argument, the index
# tuple's key, change (to an empty string, on 15).
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION nest_text_cmp(a text, b text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  tab text := current_setting('btl_test.nest_in', true);
  was_a text;
  was_b text;
BEGIN
  IF tab <> '' THEN
    PERFORM set_config('btl_test.nest_in', '', false);
    -- copies: the index tuple's argument (a, in nbtree's order) points
    -- into the index's page
    was_a := a || '';
    was_b := b || '';
    EXECUTE format('SELECT count(*) FROM %I WHERE k = 1000', tab);
    IF a IS DISTINCT FROM was_a OR b IS DISTINCT FROM was_b THEN
      RAISE EXCEPTION 'the page was rewritten under the insert reading it: (%, %) became (%, %)',
        was_a, was_b, a, b;
    END IF;
  END IF;
  RETURN bttextcmp(a, b);
END
$$;
CREATE OPERATOR CLASS nest_text_ops FOR TYPE text USING btlayout AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 nest_text_cmp(text, text);
CREATE TABLE w (k int4, j text) WITH (autovacuum_enabled = off);
CREATE INDEX wi ON w USING btlayout (k, j nest_text_ops);
INSERT INTO w SELECT g, lpad(g::text, 8, '0') FROM generate_series(1, 2000) g;
});
# The session's steps on table $t (made by $make): the lookup of k = 1000
# first, which lays its own leaf out, so that the nested lookup notes
# nothing of its own; the counter of lookup relayouts after it, after the
# nested insert, and after a lookup of k = 1500 that meets the leaf again
sub nested_insert
{
	my ($t, $make) = @_;
	my $ret = $node->psql(
		'postgres', $make . qq{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM $t WHERE k = 1000;
SELECT lookup_relayouts FROM btlayout_search_stats();
BEGIN;
DECLARE c CURSOR FOR SELECT j FROM $t WHERE k = 1500;
FETCH ALL FROM c;
SET btl_test.nest_in = $t;
INSERT INTO $t VALUES (1500, '00001501');
SELECT 'nested: ' || (current_setting('btl_test.nest_in') = '');
SELECT lookup_relayouts FROM btlayout_search_stats();
CLOSE c;
COMMIT;
SELECT string_agg(j, ',' ORDER BY j) FROM $t WHERE k = 1500;
SELECT lookup_relayouts FROM btlayout_search_stats();
SELECT 'clean' FROM (SELECT btlayout_check('${t}i', true)) c;},
		timeout => 60,
		timed_out => \my $timed_out,
		stdout => \my $out,
		stderr => \my $err);
	return ($ret, $timed_out, $out, $err);
}

my ($ret, $timed_out, $out, $err) = nested_insert('w', '');
my $hung = $timed_out;
ok(!$timed_out, 'an insert whose comparison runs a lookup ending on a note of the leaf it holds returns')
  or diag("stdout: $out\nstderr: $err");
is($timed_out ? 'timed out' : $ret, 0, 'and succeeds') or diag("stdout: $out\nstderr: $err");
like($out // '', qr/^1\n(\d+)\n00001500\nnested: true\n\1\n00001500,00001501\n(\d+)\nclean$/,
	'the nested lookup ran and left the held leaf alone; the next lookup of it finds both rows')
  and $out =~ /^1\n(\d+)\n.*\n(\d+)\nclean$/s
  and cmp_ok($2, '>', $1, 'and lays the leaf out, the note dropped, not remembered as looked at');

($ret, $timed_out, $out, $err) = nested_insert(
	'tw', q{
CREATE TEMP TABLE tw (k int4, j text);
CREATE INDEX twi ON tw USING btlayout (k, j nest_text_ops);
INSERT INTO tw SELECT g, lpad(g::text, 8, '0') FROM generate_series(1, 2000) g;
});
ok(!$timed_out, 'the same on a temporary index returns')
  or diag("stdout: $out\nstderr: $err");
is($timed_out ? 'timed out' : $ret, 0, 'and succeeds: its page was not rewritten under the insert')
  or diag("stdout: $out\nstderr: $err");
like($out // '', qr/^1\n(\d+)\n00001500\nnested: true\n\1\n00001500,00001501\n(\d+)\nclean$/,
	'the nested lookup ran and left the leaf alone; the next lookup finds both rows')
  and $out =~ /^1\n(\d+)\n.*\n(\d+)\nclean$/s
  and cmp_ok($2, '>', $1, 'and lays the leaf out');

# A backend left waiting on its own lock ignores the fast stop of item 4's
# restart: end it the only way it ends
if ($hung)
{
	$node->stop('immediate');
	$node->start;
}

#
# 4. old_snapshot_threshold (15 and 16; 17 removed it)
#
SKIP:
{
	skip "old_snapshot_threshold does not exist in $major", 3 if $major >= 17;
	$node->append_conf('postgresql.conf', "old_snapshot_threshold = 0\n");
	$node->restart;
	$node->safe_psql(
		'postgres', q{
CREATE TABLE s (k int4) WITH (autovacuum_enabled = off);
CREATE INDEX si ON s USING btlayout (k);
INSERT INTO s SELECT g FROM generate_series(1, 20000) g;
});
	# an old snapshot, taken after the last write
	my ($sin, $sout, $serr) = ('', '', '');
	my $old = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres') ],
		'<', \$sin, '>', \$sout, '2>', \$serr);
	$sin .= "BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT count(*) FROM s;\n";
	$old->pump until $sout =~ /20000/;
	sleep 1;
	# read-only lookups in another session meet every stale page
	is( $node->safe_psql(
			'postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM generate_series(1, 20000, 7) g WHERE EXISTS (SELECT 1 FROM s WHERE k = g);
SELECT lookup_relayouts FROM btlayout_search_stats();}), "2858\n0",
		'with old_snapshot_threshold set, read-only lookups rewrite no page');
	$sin .= "SET enable_seqscan = off; SET enable_bitmapscan = off;\n"
	  . "SELECT count(*) FROM generate_series(1, 20000, 7) g WHERE EXISTS (SELECT 1 FROM s WHERE k = g);\n"
	  . "COMMIT;\n\\q\n";
	$old->finish;
	unlike($serr, qr/snapshot too old/, 'no "snapshot too old" for an old snapshot after read-only lookups');
	like($sout, qr/^2858$/m, 'the old snapshot read every key');
}

# (immediate: a backend left waiting on its own lock would hold up a fast stop)
$node->stop('immediate');
done_testing();
