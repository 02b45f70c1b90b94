
# Copyright (c) btlayout authors

# An index's identity (OID, relation file, backend) reused by another index
# while a backend still holds an entry for the first (src/indexstate.c).
#
# A relcache invalidation makes a backend's entry for an index stale: its
# copy of the upper levels is freed, and where the next lookup begins the
# entry is checked against pg_class, kept with its recent-buffer map if the
# index with that OID is still in the entry's relation file, freed if not.
# If the index was dropped and another one made with the same OID and the
# same file number, the check cannot tell them apart: the entry is kept, and
# the map names the buffers the dropped index's blocks were in.  That is
# safe only because a map's entry is used if ReadRecentBuffer() finds the
# buffer's tag naming that very block of that very file, and no buffer
# holds a block of a dropped file: a buffer that passes holds the new
# index's block.  This test puts a backend in that state and checks its
# answers, which must be the heap's, and what it did with its state.
#
# The reuse is forced in binary-upgrade mode (postgres -b), where
# binary_upgrade_set_next_index_pg_class_oid() and
# binary_upgrade_set_next_index_relfilenode() choose the next index's OID
# and file number.  The dropped index's file must be gone first: outside
# that mode it stays, truncated, until the next checkpoint so that its
# number is not reused; in it (15 on) the DROP unlinks it at once (md.c).
#
# 0. Control: an invalidation that leaves the index in its file (an update
#    of its pg_index row) keeps the entry and its map: the very next lookup
#    pins its leaf through the map.
# 1. ia on a (k int4) dropped, ib on b (k int4, as many other keys) made
#    with ia's OID and file number.  The two have the same shape, so the
#    map session A keeps names a buffer for each block ib's lookups read:
#    the buffer ia's block was in, emptied by the DROP.  A looks keys up
#    through ib: its entry must be kept (none made or freed), and every
#    answer must be the heap's, for keys only in b and keys only in a (a
#    heap position read from ia's pages would fetch another row of b, or
#    none).  Whether a kept entry of the map passes the tag test (its buffer
#    refilled with ib's same block) is chance: the hits are noted, not
#    asserted.
# 2. ib dropped, ic on c (t text) made with the same OID and file number:
#    a different definition, so only the map can be carried over (the copy
#    of int4 pages was freed at the invalidation); answers right, no crash.
use strict;
use warnings;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('identity');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;

# Tables made before binary-upgrade mode (where a table would need its OIDs
# chosen too): a and b hold disjoint int4 keys, c text keys
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION btlayout;
CREATE TABLE a (k int4) WITH (autovacuum_enabled = off);
INSERT INTO a SELECT g FROM generate_series(1, 100000) g;
CREATE TABLE b (k int4) WITH (autovacuum_enabled = off);
INSERT INTO b SELECT g FROM generate_series(500001, 600000) g;
CREATE TABLE c (t text) WITH (autovacuum_enabled = off);
INSERT INTO c SELECT 'c' || lpad(g::text, 6, '0') FROM generate_series(1, 100000) g;
CREATE INDEX ia ON a USING btlayout (k);
VACUUM ANALYZE a, b, c;
});
my ($oid, $filenode, $filepath) = split /\|/,
  $node->safe_psql('postgres',
	q{SELECT 'ia'::regclass::oid, pg_relation_filenode('ia'), pg_relation_filepath('ia')});
note "ia: OID $oid, file number $filenode, $filepath";

# Outside binary-upgrade mode the functions refuse
my ($rc, $out, $err) = $node->psql('postgres',
	'SELECT binary_upgrade_set_next_index_pg_class_oid(0)');
isnt($rc, 0, 'before the restart, binary_upgrade_set_next_index_pg_class_oid() refuses')
  or diag("stdout: $out\nstderr: $err");

# Restart in binary-upgrade mode: as Cluster.pm's start(), with -b
$node->stop;
command_ok(
	[
		'pg_ctl', '-w', '-D', $node->data_dir, '-l', $node->logfile,
		'-o', '-b', 'start'
	],
	'pg_ctl start with -b (binary-upgrade mode)');
$node->_update_pid(1);    # so that $node->stop stops it
($rc, $out, $err) = $node->psql('postgres',
	q{SELECT binary_upgrade_set_next_index_pg_class_oid(0); SELECT 'set'});
is($rc, 0, 'the server is in binary-upgrade mode: binary_upgrade_set_next_index_pg_class_oid() runs')
  or diag("stdout: $out\nstderr: $err");

# The lookups: one per key of generate_series($series), through the index
# on $col of $table (a nested loop over a parameterized index scan under
# the settings of session A, a hash join over a sequential scan under
# $seqscan), summed up as the number of keys found and a digest of every
# key's rows
sub lookups
{
	my ($table, $col, $key, $series) = @_;
	return qq{
SELECT count(r) || ' ' || md5(string_agg(g || ':' || coalesce(r, '-'), ' ' ORDER BY g))
FROM (SELECT g, string_agg($col\::text, ',') r
      FROM generate_series($series) g LEFT JOIN $table ON $col = $key
      GROUP BY g) s};
}
my $seqscan = 'SET enable_indexscan = off; SET enable_indexonlyscan = off; '
  . 'SET enable_bitmapscan = off;';

# What a lookup query answers in session $s, checked against the heap's
# answer and the number of keys it must find; its plan must use $index
sub check_lookups
{
	my ($s, $index, $table, $col, $key, $series, $found, $what) = @_;
	my $sql = lookups($table, $col, $key, $series);
	like($s->query_safe("EXPLAIN (COSTS OFF) $sql"),
		qr/Nested Loop Left Join.*Index (Only )?Scan using $index on $table/s,
		"$what: the plan looks each key up through $index");
	my $got = $s->query_safe($sql);
	my $want = $node->safe_psql('postgres', "$seqscan $sql");
	like($want, qr/^$found /, "$what: the heap has $found of the keys");
	is($got, $want, "$what: every key's rows through $index are the heap's");
	return;
}

# Session A: looks keys up through the index, and reports its state
my $A = $node->background_psql('postgres');
$A->query_safe(
	'SET enable_seqscan = off; SET enable_bitmapscan = off; '
	  . 'SET enable_hashjoin = off; SET enable_mergejoin = off; '
	  . 'SET enable_memoize = off;');

sub state_of_A
{
	return decode_json(
		$A->query_safe(
			q{SELECT row_to_json(x) FROM (SELECT * FROM btlayout_backend_state(),
			  btlayout_search_stats()) x}));
}

# What became of A's entries between two states, an invalidation between
sub entries_kept
{
	my ($before, $after, $what) = @_;
	cmp_ok($before->{upper_copy_images}, '>', 0,
		"$what: before, A held a copy of the upper levels");
	cmp_ok($after->{copies_dropped}, '>', $before->{copies_dropped},
		"$what: the copy was freed");
	is($after->{entries_made}, $before->{entries_made},
		"$what: no entry made (the lookups found the one they had)");
	is($after->{entries_freed}, $before->{entries_freed},
		"$what: no entry freed");
	cmp_ok($after->{entries_invalidated}, '>', $before->{entries_invalidated},
		"$what: the entry was invalidated");
	is($after->{index_entries}, 1, "$what: one entry held");
	cmp_ok($after->{recent_buffer_chunks}, '>', 0,
		"$what: its recent-buffer map holds chunks");
	return;
}

# A fills its map with ia's leaves: 1,031 keys one lookup each
check_lookups($A, 'ia', 'a', 'k', 'g', '1, 100000, 97', 1031, 'ia, first');
my $s0 = state_of_A();
is($s0->{entries_made}, 1, 'A made one entry, for ia');
cmp_ok($s0->{recent_buffer_chunks}, '>', 0, "A's map of ia holds chunks");
note 'A after the first lookups: ' . encode_json($s0);

#
# 0. Control: an invalidation that leaves ia in its file
#
$node->safe_psql('postgres',
	q{UPDATE pg_index SET indisvalid = true WHERE indexrelid = 'ia'::regclass});
is($A->query_safe('SELECT string_agg(k::text, \',\') FROM a WHERE k = 4851'),
	'4851', 'control: a lookup after the invalidation');
my $s1 = state_of_A();
entries_kept($s0, $s1, 'control');
cmp_ok($s1->{recent_buffer_hits}, '>', $s0->{recent_buffer_hits},
	'control: that one lookup pinned a page through the map it kept');
check_lookups($A, 'ia', 'a', 'k', 'g', '1, 100000, 97', 1031, 'ia, again');
my $s2 = state_of_A();
cmp_ok($s2->{recent_buffer_hits} - $s1->{recent_buffer_hits}, '>=', 1031,
	'control: the lookups after it pin their leaves through the map');
is($s2->{entries_freed}, $s0->{entries_freed}, 'control: still no entry freed');

# Drop index $drop, unlink its file, and make $create with the dropped
# index's OID and file number, in one transaction
sub reuse_identity
{
	my ($drop, $create, $what) = @_;
	my $path = $node->data_dir . "/$filepath";
	$node->safe_psql('postgres', "DROP INDEX $drop");
	note "$what: right after the DROP, the dropped index's file is "
	  . (-e $path ? 'still there' : 'gone');
	# (a checkpoint would unlink a file the DROP left)
	$node->safe_psql('postgres', 'CHECKPOINT');
	ok(!-e $path, "$what: the dropped index's file is unlinked");
	$node->safe_psql(
		'postgres', qq{
BEGIN;
SELECT binary_upgrade_set_next_index_pg_class_oid('$oid'::oid);
SELECT binary_upgrade_set_next_index_relfilenode('$filenode'::oid);
$create;
COMMIT;
});
	my $name = $create =~ s/^CREATE INDEX (\w+).*/$1/sr;
	is( $node->safe_psql(
			'postgres',
			qq{SELECT to_regclass('$drop') IS NULL, '$name'::regclass::oid, pg_relation_filenode('$name')}),
		"t|$oid|$filenode",
		"$what: $drop is gone and $name has its OID ($oid) and file number ($filenode)");
	return;
}

#
# 1. The identity reused by an index of the same definition on other keys
#
reuse_identity('ia', 'CREATE INDEX ib ON b USING btlayout (k)', 'ib');

# A's first statement since: the lookup where its entry is checked
is($A->query_safe('SELECT string_agg(k::text, \',\') FROM b WHERE k = 550000'),
	'550000', 'ib: a lookup of a key of b');
my $s3 = state_of_A();
note 'ib: recent-buffer hits of the first lookup: '
  . ($s3->{recent_buffer_hits} - $s2->{recent_buffer_hits});
entries_kept($s2, $s3, 'ib');

# Keys only in a (the very keys whose leaves A's map named, all absent
# from b), keys of b, and keys on both sides of b's
$s3 = state_of_A();
check_lookups($A, 'ib', 'b', 'k', 'g', '1, 100000, 97', 0, 'ib, the keys of a');
check_lookups($A, 'ib', 'b', 'k', 'g', '500001, 600000, 13', 7693, 'ib, keys of b');
check_lookups($A, 'ib', 'b', 'k', 'g', '400003, 700000, 89', 1124,
	'ib, keys below, in and above b');
is( $A->query_safe(
		q{SELECT count(*) || ' ' || sum(k) FROM b WHERE k BETWEEN 550000 AND 550999;
		  SELECT count(*) FROM b WHERE k < 500100;
		  SELECT count(*) FROM b WHERE k > 599900}),
	"1000 550499500\n99\n100",
	'ib: range scans');

# After the lookups through $idx (A's state $since before them): still no
# entry made or freed since A's state $base, and the index clean
sub lookups_done
{
	my ($idx, $since, $base) = @_;
	my $s = state_of_A();
	note "$idx: recent-buffer hits of the lookups: "
	  . ($s->{recent_buffer_hits} - $since->{recent_buffer_hits});
	is($s->{entries_made}, $base->{entries_made}, "$idx: still no entry made");
	is($s->{entries_freed}, $base->{entries_freed}, "$idx: still no entry freed");
	is($A->query_safe(qq{SELECT 'clean' FROM (SELECT btlayout_check('$idx', true)) x}),
		'clean', "$idx: btlayout_check(heapallindexed) is clean");
	note "A after $idx: " . encode_json($s);
	return $s;
}
my $s4 = lookups_done('ib', $s3, $s2);

#
# 2. The identity reused by an index of another definition (text)
#
reuse_identity('ib', 'CREATE INDEX ic ON c USING btlayout (t)', 'ic');
is( $A->query_safe(
		q{SELECT string_agg(t, ',') FROM c WHERE t = 'c050000'}),
	'c050000', 'ic: a lookup of a key of c');
my $s5 = state_of_A();
note 'ic: recent-buffer hits of the first lookup: '
  . ($s5->{recent_buffer_hits} - $s4->{recent_buffer_hits});
entries_kept($s4, $s5, 'ic');
check_lookups($A, 'ic', 'c', 't', q{'c' || lpad(g::text, 6, '0')},
	'1, 200000, 7', 14286, 'ic, keys in and above c');
check_lookups($A, 'ic', 'c', 't', 'g::text', '1, 100000, 97', 0,
	'ic, the keys of a as text');
is( $A->query_safe(
		q{SELECT count(*) || ' ' || min(t) || ' ' || max(t) FROM c WHERE t BETWEEN 'c012345' AND 'c012444'}),
	'100 c012345 c012444', 'ic: a range scan');
lookups_done('ic', $s5, $s2);

$A->quit;
$node->stop;
done_testing();
