
# Copyright (c) btlayout authors
#
# Concurrency under load.  pgbench clients (4) read and write a table with
# four btlayout indexes (a unique int, a DESC int, a text with many
# duplicates (posting lists), a multi-column (int, text) with duplicates),
# and a second table whose one index has long keys (169 bytes, three
# levels), while three other loops run for the same time:
#
#   - VACUUM of the tables (bulk deletes, and its relayout passes);
#   - ALTER INDEX SET (layout = <random>) on a random index, then
#     btlayout_relayout() of every index;
#   - one client whose copy of the upper levels is capped below what the
#     long-key index's upper levels take (btlayout.upper_copy = 8kB): its
#     lookups on that index walk from the images it holds through internal
#     pages read from their buffers
#     (search_copy() at the cap), while the other clients split those
#     pages; in one REPEATABLE READ snapshot it compares lookups, ranges
#     both ways and arrays through the index with a heap scan;
#   - many indexes: two clients whose caps are small
#     (btlayout.upper_copy = 64kB, btlayout.recent_buffers = 1024, two
#     chunks) look keys up, in windows of 8 partitions at a time, in a
#     table of 48 partitions each with its own btlayout index (a root
#     above about 75 leaves), and compare each answer with a table of the
#     same rows under a core btree index, while one more client, one
#     partition at a time and one transaction each, in turn reindexes its
#     index, truncates and refills it, drops its index and makes it
#     again, or detaches and attaches it.  Each of the two records its
#     btlayout_backend_state() after every transaction.
#
# The clients' transactions: point selects (unique and text keys), range
# scans and ordered scans (an index is forced: enable_seqscan and
# enable_bitmapscan off), inserts (new ids from a sequence), updates of
# indexed columns, deletes, and a delete and re-insert of one id (the
# unique check meets the dead duplicate), each writing statement its own
# transaction (no deadlocks to retry).  (INSERT ... ON CONFLICT is refused
# on tables with a unique btlayout index: see README.)  One script reads,
# in one REPEATABLE READ snapshot, ranges and ordered scans of every index
# through the indexes and then with index scans off, and fails the
# transaction on any difference.
#
# Asserted: no pgbench failed, aborted or errored (exit status, "failed
# transactions: 0", nothing on stderr), every loop did work (the number of
# transactions, VACUUM passes, relayout passes and pages rewritten are
# reported), then btlayout_check(heapallindexed) passes on every index, and
# each index read by an index scan (rows, heap TIDs, order) and by an
# index-only scan gives what a heap scan gives; the unique index still
# holds unique ids.  The clients' lookups went from copies of the upper
# levels, searching the int indexes' copies by their keys.  The capped
# client's lookups went from its copy to their leaf while the copy held
# fewer images than the index had pages above its leaves: lookups below a
# page it lacked read that page from its buffer.  Each of the two
# many-index clients' backends, by its last btlayout_backend_state(),
# evicted images at its cap, gave up chunks of cold recent-buffer maps,
# and had entries invalidated and freed by the other client's DDL; every
# partition's index is checked and read as the heap with the others.
#
# BTL_CONC_SECONDS sets how long the load runs (default 20).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest qw(:DEFAULT btl_check_indexes btl_compare_with_heap);

my $seconds = $ENV{BTL_CONC_SECONDS} || 20;
my $db = 'postgres';

my $node = PostgreSQL::Test::Cluster->new('conc');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
autovacuum = off
shared_buffers = 32MB
max_wal_size = 2GB
checkpoint_timeout = 1h
});
$node->start;

$node->safe_psql(
	$db, q{
CREATE EXTENSION btlayout;
CREATE SEQUENCE c_seq START 1000001;
CREATE TABLE c (id int NOT NULL DEFAULT nextval('c_seq'), k int, t text, a int, b text);
INSERT INTO c
  SELECT g, (g * 7919) % 100003, 'v' || (g % 997), g % 50, 'b' || (g % 37) || repeat('-', g % 7)
  FROM generate_series(1, 60000) g;
CREATE UNIQUE INDEX c_id ON c USING btlayout (id) WITH (layout = eytzinger);
CREATE INDEX c_k ON c USING btlayout (k DESC) WITH (layout = veb);
CREATE INDEX c_t ON c USING btlayout (t) WITH (layout = btorder);
CREATE INDEX c_ab ON c USING btlayout (a, b) WITH (layout = blocked);
CREATE TABLE w (id int, s text);
INSERT INTO w SELECT g, repeat('w', 160) || lpad((g * 5000)::text, 9, '0')
  FROM generate_series(1, 20000) g;
CREATE INDEX w_s ON w USING btlayout (s) WITH (layout = blocked);
CREATE TABLE passes (kind text, pages bigint);
VACUUM ANALYZE c;
VACUUM ANALYZE w;
});

# Many indexes: 48 partitions of 3,000 keys, each with a btlayout index of
# two levels (fillfactor 10), and the same rows under a core btree index
$node->safe_psql(
	$db, q{
CREATE TABLE mp (k int4, v int4) PARTITION BY RANGE (k);
DO $$
BEGIN
  FOR p IN 0 .. 47 LOOP
    EXECUTE format('CREATE TABLE mp%s PARTITION OF mp FOR VALUES FROM (%s) TO (%s)',
                   p, p * 3000, (p + 1) * 3000);
  END LOOP;
END
$$;
INSERT INTO mp SELECT g, g % 97 FROM generate_series(0, 143999) g;
DO $$
BEGIN
  FOR p IN 0 .. 47 LOOP
    EXECUTE format('CREATE INDEX mp%s_k ON mp%s USING btlayout (k) WITH (fillfactor = 10)', p, p);
  END LOOP;
END
$$;
CREATE TABLE mref (k int4, v int4);
INSERT INTO mref SELECT * FROM mp;
CREATE INDEX mref_k ON mref USING btree (k);
VACUUM ANALYZE mp, mref;
CREATE TABLE mstate AS SELECT 0 AS pid, * FROM btlayout_backend_state() WHERE false;
CREATE SEQUENCE ddl_seq;
CREATE SEQUENCE many_seq;
-- n lookups of keys of partitions first .. first + np - 1 (and just
-- outside), each an equality and a range, against the reference: the
-- number of answers that differ
CREATE FUNCTION many_wrong(first int, np int, n int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  wrong int := 0;
  a bigint;
  b bigint;
  x int;
BEGIN
  FOR i IN 1 .. n LOOP
    x := first * 3000 - 10 + floor(random() * (np * 3000 + 20))::int;
    SELECT count(*) INTO a FROM mp WHERE k = x;
    SELECT count(*) INTO b FROM mref WHERE k = x;
    IF a <> b THEN
      wrong := wrong + 1;
    END IF;
    SELECT coalesce(sum(k), -1) INTO a FROM (SELECT k FROM mp WHERE k >= x ORDER BY k LIMIT 3) s;
    SELECT coalesce(sum(k), -1) INTO b FROM (SELECT k FROM mref WHERE k >= x ORDER BY k LIMIT 3) s;
    IF a <> b THEN
      wrong := wrong + 1;
    END IF;
  END LOOP;
  RETURN wrong;
END
$$;
-- One change of partition p, in one transaction: lookups meet the
-- partition either as it was or as it is after
CREATE FUNCTION many_ddl(p int, op int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF op = 0 THEN
    EXECUTE format('REINDEX INDEX mp%s_k', p);
  ELSIF op = 1 THEN
    EXECUTE format('TRUNCATE mp%s', p);
    EXECUTE format('INSERT INTO mp%s SELECT g, g %% 97 FROM generate_series(%s, %s) g',
                   p, p * 3000, p * 3000 + 2999);
  ELSIF op = 2 THEN
    EXECUTE format('DROP INDEX mp%s_k', p);
    EXECUTE format('CREATE INDEX mp%s_k ON mp%s USING btlayout (k) WITH (fillfactor = 10)', p, p);
  ELSE
    EXECUTE format('ALTER TABLE mp DETACH PARTITION mp%s', p);
    EXECUTE format('ALTER TABLE mp ATTACH PARTITION mp%s FOR VALUES FROM (%s) TO (%s)',
                   p, p * 3000, (p + 1) * 3000);
  END IF;
  INSERT INTO passes VALUES ('many_ddl ' || op, 1);
END
$$;
});

#
# The clients' scripts
#
my %scripts = (
	point => [
		4, q{
\set id random(1, 120000)
\set n random(0, 996)
SELECT k, t FROM c WHERE id = :id;
SELECT count(*) FROM c WHERE t = 'v' || :n;
}
	],
	range => [
		3, q{
\set id random(1, 120000)
\set n random(0, 996)
\set a random(0, 49)
SELECT count(*), sum(k) FROM c WHERE id BETWEEN :id AND :id + 200;
SELECT t FROM c WHERE t >= 'v' || :n ORDER BY t LIMIT 50;
SELECT k FROM c WHERE k < :id ORDER BY k DESC LIMIT 50;
SELECT a, b FROM c WHERE a = :a AND b >= 'b2' ORDER BY a, b LIMIT 50;
}
	],
	# every index against the heap: the same queries twice in one
	# snapshot (REPEATABLE READ), first through the indexes, then with
	# index scans off; any difference fails the transaction
	check => [
		1, q{
\set id random(1, 120000)
\set n random(0, 996)
\set a random(0, 49)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT __DIGEST__ AS i \gset
SET LOCAL enable_seqscan = on;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_indexonlyscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT CASE WHEN h = ':i' THEN 1 ELSE ('index and heap differ: ' || h || ' / :i')::int END
FROM (SELECT __DIGEST__ AS h) s;
COMMIT;
INSERT INTO passes SELECT 'upper_copy_hits', upper_copy_hits FROM btlayout_search_stats();
INSERT INTO passes SELECT 'upper_key_searches', upper_key_searches FROM btlayout_search_stats();
}
	],
	insert => [
		3, q{
\set k random(1, 100003)
\set n random(0, 1200)
INSERT INTO c (k, t, a, b)
  SELECT :k + g, 'v' || ((:n + g) % 1200), (:k + g) % 50, 'b' || ((:n + g) % 40)
  FROM generate_series(1, 5) g;
}
	],
	# long keys: inserts between the existing ones split leaves and
	# internal pages; deletes of short ranges empty leaves for VACUUM
	wide => [
		2, q{
\set g random(1, 100000000)
INSERT INTO w SELECT -1, repeat('w', 160) || lpad((:g + h)::text, 9, '0')
  FROM generate_series(1, 8) h;
DELETE FROM w WHERE s BETWEEN repeat('w', 160) || lpad((:g / 2)::text, 9, '0')
                          AND repeat('w', 160) || lpad((:g / 2 + 3000)::text, 9, '0');
}
	],
	# delete a row and insert it again: the unique check meets the
	# deleted duplicate
	reinsert => [
		1, q{
\set id random(1, 120000)
WITH d AS (DELETE FROM c WHERE id = :id RETURNING *)
INSERT INTO c (id, k, t, a, b) SELECT id, k + 1, t, a, b || 'r' FROM d;
}
	],
	update => [
		2, q{
\set id random(1, 120000)
\set k random(1, 100003)
UPDATE c SET k = :k, t = 'v' || (:k % 997), b = b || 'x' WHERE id = :id;
}
	],
	delete => [
		1, q{
\set id random(1, 120000)
DELETE FROM c WHERE id = :id;
}
	],);

# What the check script compares: ranges and ordered scans of each index
my $digest = q{concat_ws(' ',
  (SELECT count(*) || ':' || coalesce(sum(hashint4(k)), 0) FROM c WHERE id BETWEEN :id AND :id + 300),
  (SELECT md5(string_agg(k::text, ',')) FROM (SELECT k FROM c WHERE k <= :id ORDER BY k DESC LIMIT 200) x),
  (SELECT md5(string_agg(t, ',')) FROM (SELECT t FROM c WHERE t >= 'v' || :n ORDER BY t LIMIT 300) x),
  (SELECT count(*) || ':' || coalesce(sum(hashint4(id)), 0) FROM c WHERE t = 'v' || :n),
  (SELECT md5(string_agg(b, ',')) FROM (SELECT b FROM c WHERE a = :a ORDER BY a, b) x))};
$scripts{check}[1] =~ s/__DIGEST__/$digest/g;

my @client_files;
foreach my $name (sort keys %scripts)
{
	my ($weight, $text) = @{ $scripts{$name} };
	my $file = $node->basedir . "/$name.sql";
	append_to_file($file, $text);
	push @client_files, "--file=$file\@$weight";
}

my $vacuum_file = $node->basedir . '/vacuum.sql';
append_to_file($vacuum_file, "VACUUM c;\nVACUUM w;\n");

# The capped client: lookups of present and absent keys, ranges both ways
# and an array, through the index and then by a heap scan, in one snapshot
my $wkey = q{repeat('w', 160) || lpad((%s)::text, 9, '0')};
my $wdigest = sprintf(
	q{concat_ws(' ',
  (SELECT count(*) FROM w WHERE s = %s),
  (SELECT count(*) FROM w WHERE s = %s),
  (SELECT md5(string_agg(s, ',')) FROM (SELECT s FROM w WHERE s >= %s ORDER BY s LIMIT 30) x),
  (SELECT md5(string_agg(s, ',')) FROM (SELECT s FROM w WHERE s < %s ORDER BY s DESC LIMIT 30) x),
  (SELECT count(*) FROM w WHERE s = ANY (ARRAY[%s, %s, %s])))},
	sprintf($wkey, ':p * 5000'), sprintf($wkey, ':g'), sprintf($wkey, ':g'),
	sprintf($wkey, ':g'), sprintf($wkey, ':p * 5000'), sprintf($wkey, ':g'),
	sprintf($wkey, '(:p + 7) * 5000'));
my $capped_file = $node->basedir . '/capped.sql';
append_to_file(
	$capped_file, qq{
\\set g random(1, 100000000)
\\set p random(1, 20000)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT $wdigest AS i \\gset
SET LOCAL enable_seqscan = on;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_indexonlyscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT CASE WHEN h = ':i' THEN 1 ELSE ('index and heap differ: ' || h || ' / :i')::int END
FROM (SELECT $wdigest AS h) s;
COMMIT;
INSERT INTO passes SELECT 'capped_hits', upper_copy_hits FROM btlayout_search_stats();
INSERT INTO passes SELECT 'capped_pages', btlayout_upper_copy_pages('w_s');
});

# The many-index clients: 200 lookups in a window of 8 partitions, then
# the backend's state; and their DDL, a partition at a time, each kind in
# turn.  The window moves on every 12 transactions of the two (about 6 of
# each, 1,200 lookups), so the six windows go round every 72.  Each client
# then evicts images at its cap once the windows since an image's last use
# have made more copies than 64kB holds (about 25 copies of 2.6kB: four
# windows), and gives chunks of recent-buffer maps up once a window's maps
# have gone unused for the 4,096 lookups that make them cold
# (RECENT_COLD_LOOKUPS in recent.c: four windows on).  A run of 20
# transactions a client takes both paths (BTL_CONC_SECONDS=4 on 15.20:
# each backend evicted 8 images and gave 2 chunks up).  (Windows drawn at
# random left one backend of a slow run, 96 transactions, with no chunk
# given up; a window moving every 48 left both backends of another, 92
# transactions each, with copies just under the cap and no image
# evicted.)
my $many_file = $node->basedir . '/many.sql';
append_to_file(
	$many_file, q{
SELECT nextval('many_seq') / 12 % 6 AS w \gset
SELECT CASE WHEN w = 0 THEN 1 ELSE ('many indexes: ' || w || ' answers differ from the reference')::int END
FROM (SELECT many_wrong(:w * 8, 8, 200) AS w) s;
INSERT INTO mstate SELECT pg_backend_pid(), * FROM btlayout_backend_state();
});
my $ddl_file = $node->basedir . '/ddl.sql';
append_to_file(
	$ddl_file, q{
\set p random(0, 47)
SELECT nextval('ddl_seq') % 4 AS op \gset
SELECT many_ddl(:p, :op);
\sleep 100 ms
});

my $relayout_file = $node->basedir . '/relayout.sql';
append_to_file(
	$relayout_file, q{
\set l random(1, 5)
\set i random(1, 4)
SELECT (ARRAY['none', 'eytzinger', 'veb', 'btorder', 'blocked'])[:l] AS layout,
       (ARRAY['c_id', 'c_k', 'c_t', 'c_ab'])[:i] AS ix \gset
ALTER INDEX :ix SET (layout = :layout);
INSERT INTO passes
  SELECT 'relayout', btlayout_relayout('c_id') + btlayout_relayout('c_k')
                     + btlayout_relayout('c_t') + btlayout_relayout('c_ab');
});

# Run the three pgbench processes together
my @conn = ('-h', $node->host, '-p', $node->port, $db);
my %runs = (
	clients => [ '--client=4', '--jobs=2', @client_files ],
	vacuum => [ '--client=1', "--file=$vacuum_file" ],
	relayout => [ '--client=1', "--file=$relayout_file" ],
	capped => [ '--client=1', "--file=$capped_file" ],
	many => [ '--client=2', '--jobs=2', "--file=$many_file" ],
	ddl => [ '--client=1', "--file=$ddl_file" ],);
my %h;
{
	# the clients' plans must read the indexes
	my $options = '-c enable_seqscan=off -c enable_bitmapscan=off';
	foreach my $run (sort keys %runs)
	{
		local $ENV{PGOPTIONS} =
		    $run eq 'capped' ? "$options -c btlayout.upper_copy=8kB"
		  : $run eq 'many'
		  ? "$options -c btlayout.upper_copy=64kB -c btlayout.recent_buffers=1024"
		  : $options;
		my ($out, $err) = ('', '');
		$h{$run} = {
			out => \$out,
			err => \$err,
			h => IPC::Run::start(
				[ 'pgbench', '--no-vacuum', "--time=$seconds", @{ $runs{$run} }, @conn ],
				'>', \$out, '2>', \$err)
		};
	}
}
my %done;
foreach my $run (sort keys %runs)
{
	my $ok = $h{$run}{h}->finish;
	my ($out, $err) = (${ $h{$run}{out} }, ${ $h{$run}{err} });
	ok($ok, "$run: pgbench exits with success")
	  or diag("pgbench $run: exit $?\n$out\n$err");
	like($out, qr/number of failed transactions: 0 /,
		"$run: no failed transactions");
	my @errors = grep { /ERROR|FATAL|abort|error/i } split /\n/, $err;
	is(join("\n", @errors), '', "$run: no errors, no aborted client");
	($done{$run}) = $out =~ /number of transactions actually processed: (\d+)/;
	$done{$run} //= 0;
	# the clients' transactions by script
	while ($out =~ m{SQL script \d+: \S*/(\w+)\.sql\n(?: - .*\n)*? - (\d+) transactions}g)
	{
		$done{"$run/$1"} = $2;
	}
}
note('client transactions by script: '
	  . join(', ', map { s{^clients/}{}r . " $done{$_}" } grep { m{^clients/} } sort keys %done));
cmp_ok($done{'clients/check'} // 0, '>', 0,
	'clients: ' . ($done{'clients/check'} // 0) . ' transactions compared indexes with the heap under load');
my ($relayout_passes, $pages) = split /\|/,
  $node->safe_psql($db,
	q{SELECT count(*), coalesce(sum(pages), 0) FROM passes WHERE kind = 'relayout'});
cmp_ok($done{clients}, '>', 0,
	"clients: $done{clients} transactions in $seconds s alongside VACUUM and relayout");
cmp_ok($done{vacuum}, '>', 0, "vacuum loop: $done{vacuum} VACUUM passes");
cmp_ok($relayout_passes, '>', 0,
	"relayout loop: $relayout_passes passes over the four indexes (layout switched in each)");
cmp_ok($pages, '>', 0, "relayout loop: $pages pages rewritten under load");
# the clients' lookups went through copies of the upper levels (each check
# transaction records its backend's count so far)
my $copy_hits = $node->safe_psql($db,
	q{SELECT coalesce(max(pages), 0) FROM passes WHERE kind = 'upper_copy_hits'});
cmp_ok($copy_hits, '>', 0,
	"clients: lookups from copies of the upper levels under load ($copy_hits in one backend)");
# ... and through the keys of the integer indexes' copies
my $key_searches = $node->safe_psql($db,
	q{SELECT coalesce(max(pages), 0) FROM passes WHERE kind = 'upper_key_searches'});
cmp_ok($key_searches, '>', 0,
	"clients: pages of copies searched by their integer keys under load ($key_searches in one backend)");
# the capped client: hits with a copy of a three-level index too small for
# its upper levels
my ($capped_hits, $capped_pages) = split /\|/,
  $node->safe_psql($db,
	q{SELECT coalesce(max(pages) FILTER (WHERE kind = 'capped_hits'), 0),
	         coalesce(max(pages) FILTER (WHERE kind = 'capped_pages'), 0) FROM passes});
my ($below_root, $wrows) = split /\|/,
  $node->safe_psql($db,
	q{SELECT s.internal_pages, (SELECT count(*) FROM w) FROM btlayout_stats('w_s') s});
cmp_ok($done{capped}, '>', 0,
	"capped client: $done{capped} transactions compared the long-key index with the heap");
cmp_ok($below_root, '>', 0,
	"long-key index: $below_root internal pages below the root ($wrows rows)");
cmp_ok($capped_pages, '<', $below_root + 1,
	"capped client: its copy held fewer images ($capped_pages) than the index has pages above its leaves");
cmp_ok($capped_hits, '>', 0,
	"capped client: $capped_hits lookups walked from the capped copy to their leaf, through buffers where it had no image");
note(sprintf('%d s: %d client transactions, %d VACUUM passes, %d relayout passes, %d pages rewritten',
		$seconds, $done{clients}, $done{vacuum}, $relayout_passes, $pages));

# Many indexes: the DDL of every kind ran, and each lookup client's
# backend, by the state it recorded last, took every eviction path
my %ddl = split /[|\n]/,
  $node->safe_psql($db,
	q{SELECT kind, count(*) FROM passes WHERE kind LIKE 'many_ddl %' GROUP BY kind ORDER BY kind});
note('many indexes: changes of a partition by kind (0 REINDEX, 1 TRUNCATE, 2 DROP and CREATE INDEX, 3 DETACH and ATTACH): '
	  . join(', ', map { "$_ $ddl{$_}" } sort keys %ddl));
cmp_ok($done{many}, '>', 0,
	"many indexes: $done{many} transactions of 200 lookups compared with the reference");
foreach my $op (0 .. 3)
{
	cmp_ok($ddl{"many_ddl $op"} // 0, '>', 0, "many indexes: changes of kind $op under the lookups");
}
my @sessions = split /\n/, $node->safe_psql(
	$db, q{
SELECT pid, count(*), max(index_entries), max(images_evicted), max(copies_full),
       max(chunks_given_up), max(blocks_not_remembered), max(entries_invalidated),
       max(entries_freed), max(copies_dropped), max(upper_copy_bytes)
FROM mstate GROUP BY pid ORDER BY pid});
is(scalar(@sessions), 2, 'many indexes: both lookup clients recorded their backend state');
foreach my $row (@sessions)
{
	my ($pid, $tx, $entries, $evicted, $full, $given_up, $not_remembered, $invalidated, $freed,
		$dropped, $bytes) = split /\|/, $row;
	note("many indexes, backend $pid: $tx transactions, at most $entries entries, $evicted images evicted "
		  . "($full times none cold), $given_up chunks given up ($not_remembered blocks not remembered), "
		  . "$invalidated entries invalidated, $freed freed, $dropped copies dropped, at most $bytes bytes of copies");
	cmp_ok($evicted, '>', 0, "many indexes, backend $pid: images evicted at its cap of 64kB ($evicted)");
	cmp_ok($given_up, '>', 0,
		"many indexes, backend $pid: chunks of cold recent-buffer maps given up at its cap of two ($given_up)");
	cmp_ok($invalidated, '>', 0, "many indexes, backend $pid: entries invalidated by the DDL ($invalidated)");
	cmp_ok($freed, '>', 0, "many indexes, backend $pid: entries freed ($freed), $dropped copies with them");
}

#
# After the load: the checker, and every index against the heap
#
my ($n, @failures) = btl_check_indexes($node, $db, 1);
is(join("\n", @failures), '', 'btlayout_check(heapallindexed) passes on every index');
is($n, 53, 'the five btlayout indexes and the 48 partitions\' indexes checked');
my ($m, @problems) = btl_compare_with_heap($node, $db);
is(join("\n", @problems), '',
	'index and index-only scans of every index read as the heap');
is( $node->safe_psql($db,
		"$scan_settings{seqscan} SELECT count(*) - count(DISTINCT id) FROM c"),
	'0', 'ids are still unique');
$node->safe_psql($db, 'VACUUM c');
($n, @failures) = btl_check_indexes($node, $db, 1);
is(join("\n", @failures), '', 'btlayout_check(heapallindexed) passes after a final VACUUM');

$node->stop;
done_testing();
