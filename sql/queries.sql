--
-- queries: differential tests, btlayout against core btree
--
-- Every query runs twice: on table t_btree (btree indexes) and on t_btlayout
-- (the same indexes USING btlayout), built from the same rows in the same
-- order, so that both heaps are identical (same TIDs, checked below) and
-- ties between equal keys come out in the same heap-TID order.  Plans are
-- forced onto the index and checked: a comparison whose btlayout plan does
-- not use the expected btlayout index node prints "NOT USED" instead of a
-- result.  A result is printed as "<n> rows: same" or "... MISMATCH".
-- expected/queries_1.out is 19's: after the deletes, updates and VACUUM
-- below, its heaps put re-inserted rows at other TIDs than 15-18 do, so a
-- few tied keys print other ids, btree and btlayout alike.
--
SET client_min_messages = warning;
-- plans forced with enable_* = off cost more than jit_above_cost: no JIT
SET jit = off;
SELECT NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'btlayout') AS create_btlayout \gset
CREATE EXTENSION IF NOT EXISTS btlayout;
CREATE SCHEMA btl_queries;
SET search_path = btl_queries, public;

--
-- Helpers
--

-- (a path from the directory pg_regress runs in, its --inputdir)
\i sql/include/twins.sql

--
-- Data: 100k rows.  k: 0..19999 with about five duplicates each, k = 5000
-- ten thousand times (posting lists over many leaf pages), 1% NULLs.
-- d: a DESC NULLS FIRST column.  (a, b DESC NULLS FIRST) INCLUDE (c): a
-- multi-column index.  Autovacuum is off so that both heaps stay identical.
--
CREATE TABLE t_btree (id int, k int, d int, a int, b int, c text)
	WITH (autovacuum_enabled = off);
CREATE TABLE t_btlayout (LIKE t_btree) WITH (autovacuum_enabled = off);
SELECT both_am($$
INSERT INTO t_%1$s
SELECT i,
	   CASE WHEN i %% 101 = 0 THEN NULL WHEN i %% 10 = 0 THEN 5000
			ELSE (i * 7919) %% 20000 END,
	   CASE WHEN i %% 37 = 0 THEN NULL ELSE (i * 9973) %% 50000 END,
	   i %% 100,
	   CASE WHEN i %% 23 = 0 THEN NULL ELSE (i * 31) %% 1000 END,
	   'c' || (i %% 1000)
FROM generate_series(1, 100000) i
$$);

-- Are the two heaps the same tuples at the same TIDs?
CREATE FUNCTION heaps_identical() RETURNS bool LANGUAGE sql AS $$
	SELECT (SELECT md5(string_agg(ctid::text || ':' || t::text, ',' ORDER BY ctid)) FROM t_btree t)
		 = (SELECT md5(string_agg(ctid::text || ':' || t::text, ',' ORDER BY ctid)) FROM t_btlayout t)
$$;

-- the btlayout indexes in three different in-page layouts
CREATE INDEX t_btree_k ON t_btree USING btree (k);
CREATE INDEX t_btlayout_k ON t_btlayout USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX t_btree_d ON t_btree USING btree (d DESC NULLS FIRST);
CREATE INDEX t_btlayout_d ON t_btlayout USING btlayout (d DESC NULLS FIRST) WITH (layout = veb);
CREATE INDEX t_btree_abc ON t_btree USING btree (a, b DESC NULLS FIRST) INCLUDE (c);
CREATE INDEX t_btlayout_abc ON t_btlayout USING btlayout (a, b DESC NULLS FIRST) INCLUDE (c)
	WITH (layout = blocked);
VACUUM ANALYZE t_btree;
VACUUM ANALYZE t_btlayout;

SELECT c.relname, am.amname, i.indisvalid, i.indisready, pg_get_indexdef(c.oid)
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam
WHERE i.indrelid = 't_btlayout'::regclass ORDER BY 1;

SELECT heaps_identical();

-- The harness can fail: different rows, the same rows in another order, and
-- a plan that does not use the expected index are all reported
SELECT cmp('index', 'Index Scan using t_btlayout_k',
	$$SELECT id, k FROM t_%1$s WHERE k < CASE WHEN '%1$s' = 'btree' THEN 100 ELSE 99 END$$);
SELECT cmp('index', 'Function Scan',
	$$SELECT x FROM unnest(CASE WHEN '%1$s' = 'btree' THEN '{1,2,3}'::int[] ELSE '{1,3,2}'::int[] END) x$$);
SELECT cmp('index', 'Function Scan',
	$$SELECT x FROM unnest(CASE WHEN '%1$s' = 'btree' THEN '{1,2,3}'::int[] ELSE '{1,3,2}'::int[] END) x$$, false);
SELECT cmp('index', 'Index Scan using t_btlayout_k', 'SELECT id, k FROM t_%s WHERE id = 5');

-- The data, briefly
SELECT count(*), count(k), count(DISTINCT k), min(k), max(k),
	   count(*) FILTER (WHERE k = 5000) AS k5000 FROM t_btlayout;

--
-- The plans the comparisons use, once per shape
--
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT id, k FROM t_btlayout WHERE k = 5000;
EXPLAIN (COSTS OFF) SELECT id, k FROM t_btlayout WHERE k = ANY ('{1,5000,NULL,1}');
EXPLAIN (COSTS OFF) SELECT id, k FROM t_btlayout ORDER BY k DESC LIMIT 20;
EXPLAIN (COSTS OFF) SELECT id, d FROM t_btlayout ORDER BY d DESC NULLS FIRST LIMIT 20;
EXPLAIN (COSTS OFF) SELECT id, d FROM t_btlayout ORDER BY d NULLS LAST LIMIT 20;
EXPLAIN (COSTS OFF) SELECT id, a, b FROM t_btlayout WHERE b = 155;
SET enable_indexonlyscan = on;
EXPLAIN (COSTS OFF) SELECT k FROM t_btlayout WHERE k BETWEEN 100 AND 300;
EXPLAIN (COSTS OFF) SELECT a, b, c FROM t_btlayout WHERE a = 42 ORDER BY a DESC, b NULLS LAST;
SELECT plan_lines('SELECT min(k), max(k) FROM t_btlayout') AS "QUERY PLAN";
-- the visibility map is set: no heap fetches
SELECT plan_lines('SELECT k FROM t_btlayout WHERE k BETWEEN 100 AND 300',
				  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF') AS "QUERY PLAN";
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT id, k FROM t_btlayout WHERE k = 5000 OR k < 10;
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
RESET enable_sort;

-- A parallel index scan, run at top level (the suite's parallel cases run
-- inside a function): count and checksum equal to btree's
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id::bigint * k) FROM t_btlayout WHERE k BETWEEN 3000 AND 9000;
SELECT count(*), sum(id::bigint * k) FROM t_btree WHERE k BETWEEN 3000 AND 9000;
SELECT count(*), sum(id::bigint * k) FROM t_btlayout WHERE k BETWEEN 3000 AND 9000;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_index_scan_size;
RESET min_parallel_table_scan_size;

-- Real values, printed (index scans on btlayout)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k FROM t_btlayout WHERE k BETWEEN 9998 AND 10001;
SELECT id, k FROM t_btlayout ORDER BY k LIMIT 6;
SELECT k FROM t_btlayout WHERE k > 19990 ORDER BY k DESC LIMIT 8;
SELECT id, d FROM t_btlayout ORDER BY d DESC NULLS FIRST LIMIT 3;
SELECT id, d FROM t_btlayout WHERE d IS NOT NULL ORDER BY d DESC LIMIT 3;
SELECT id, k FROM t_btlayout WHERE k = ANY ('{17,NULL,17,-1,19999}') ORDER BY k;
SELECT a, b, c FROM t_btlayout WHERE a = 42 ORDER BY a, b DESC NULLS FIRST LIMIT 4;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- The comparison suite, run now and after each change to the tables
--
CREATE FUNCTION suite() RETURNS TABLE (test text, result text)
LANGUAGE plpgsql AS $$
DECLARE
	ix constant text := 'Index Scan using t_btlayout_';
	bx constant text := 'Index Scan Backward using t_btlayout_';
	io constant text := 'Index Only Scan using t_btlayout_';
	iob constant text := 'Index Only Scan Backward using t_btlayout_';
	bm constant text := 'Bitmap Index Scan on t_btlayout_';
BEGIN
	-- equality and ranges, plain index scans
	test := 'eq 5000';		result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k = 5000'); RETURN NEXT;
	test := 'eq 12345';		result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k = 12345'); RETURN NEXT;
	test := 'eq absent';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k = 20001'); RETURN NEXT;
	test := 'lt';			result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k < 100'); RETURN NEXT;
	test := 'le';			result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k <= 100'); RETURN NEXT;
	test := 'gt';			result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k > 19900'); RETURN NEXT;
	test := 'ge';			result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k >= 19900'); RETURN NEXT;
	test := 'between';		result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k BETWEEN 7000 AND 7100'); RETURN NEXT;
	test := 'around dups';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k > 4990 AND k < 5010'); RETURN NEXT;
	test := 'gt, lt mixed';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k > 300 AND k >= 250 AND k < 900 AND k <= 1000'); RETURN NEXT;
	test := 'contradiction'; result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k > 10 AND k < 5'); RETURN NEXT;
	test := 'open low';		result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k < 1001'); RETURN NEXT;
	test := 'open high';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k >= 17999'); RETURN NEXT;
	test := 'any';			result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k = ANY (''{1,5000,NULL,1,19999,-5,20000,5000}'')'); RETURN NEXT;
	test := 'in';			result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k IN (3, 3, 17, 16)'); RETURN NEXT;
	test := 'any nulls';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k = ANY (''{NULL,NULL}'')'); RETURN NEXT;
	test := 'any empty';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k = ANY (''{}'')'); RETURN NEXT;
	test := 'any + range';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k = ANY (''{7,8,9,900,5000}'') AND k < 1000'); RETURN NEXT;
	test := 'lt any';		result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k < ANY (''{5,30,NULL}'')'); RETURN NEXT;
	test := 'is null';		result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k IS NULL'); RETURN NEXT;
	test := 'is not null';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k IS NOT NULL AND id %% 3 = 0'); RETURN NEXT;
	test := 'int8 const';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k >= 19990::int8 AND k < 4294967296::int8'); RETURN NEXT;
	test := 'int2 const';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k < 12::int2'); RETURN NEXT;
	-- ordered scans, forward and backward
	test := 'order asc';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s ORDER BY k'); RETURN NEXT;
	test := 'order desc';	result := cmp('index', bx || 'k', 'SELECT k FROM t_%s ORDER BY k DESC'); RETURN NEXT;
	test := 'asc limit';	result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s ORDER BY k LIMIT 20'); RETURN NEXT;
	test := 'desc limit';	result := cmp('index', bx || 'k', 'SELECT k FROM t_%s ORDER BY k DESC LIMIT 1200'); RETURN NEXT;
	test := 'gt asc';		result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k > 19990 ORDER BY k'); RETURN NEXT;
	test := 'lt desc';		result := cmp('index', bx || 'k', 'SELECT id, k FROM t_%s WHERE k < 10 ORDER BY k DESC', true, 'k'); RETURN NEXT;
	test := 'ge 5000 limit'; result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s WHERE k >= 5000 ORDER BY k LIMIT 30'); RETURN NEXT;
	test := 'le 5000 desc';	result := cmp('index', bx || 'k', 'SELECT k FROM t_%s WHERE k <= 5000 ORDER BY k DESC LIMIT 12000'); RETURN NEXT;
	test := 'eq desc';		result := cmp('index', bx || 'k', 'SELECT id, k FROM t_%s WHERE k >= 5000 AND k <= 5000 ORDER BY k DESC', true, 'k'); RETURN NEXT;
	test := 'any desc';		result := cmp('index', bx || 'k', 'SELECT id, k FROM t_%s WHERE k = ANY (''{19999,5000,2,NULL}'') ORDER BY k DESC', true, 'k'); RETURN NEXT;
	test := 'offset';		result := cmp('index', ix || 'k', 'SELECT id, k FROM t_%s ORDER BY k OFFSET 50000 LIMIT 100'); RETURN NEXT;
	-- the DESC NULLS FIRST column
	test := 'd desc nf';	result := cmp('index', ix || 'd', 'SELECT id, d FROM t_%s ORDER BY d DESC NULLS FIRST'); RETURN NEXT;
	test := 'd asc nl';		result := cmp('index', bx || 'd', 'SELECT id, d FROM t_%s WHERE d < 10000 ORDER BY d ASC NULLS LAST', true, 'd'); RETURN NEXT;
	test := 'd limit';		result := cmp('index', ix || 'd', 'SELECT id, d FROM t_%s ORDER BY d DESC NULLS FIRST LIMIT 3000'); RETURN NEXT;
	test := 'd lt desc';	result := cmp('index', ix || 'd', 'SELECT id, d FROM t_%s WHERE d < 100 ORDER BY d DESC'); RETURN NEXT;
	test := 'd gt asc';		result := cmp('index', bx || 'd', 'SELECT id, d FROM t_%s WHERE d > 49900 ORDER BY d', true, 'd'); RETURN NEXT;
	test := 'd between';	result := cmp('index', ix || 'd', 'SELECT id, d FROM t_%s WHERE d BETWEEN 20000 AND 20300'); RETURN NEXT;
	test := 'd is null';	result := cmp('index', ix || 'd', 'SELECT id, d FROM t_%s WHERE d IS NULL'); RETURN NEXT;
	test := 'd not null';	result := cmp('index', ix || 'd', 'SELECT id, d FROM t_%s WHERE d IS NOT NULL ORDER BY d DESC LIMIT 50'); RETURN NEXT;
	-- index-only scans
	test := 'ios range';	result := cmp('ios', io || 'k', 'SELECT k FROM t_%s WHERE k BETWEEN 100 AND 300'); RETURN NEXT;
	test := 'ios desc';		result := cmp('ios', iob || 'k', 'SELECT k FROM t_%s ORDER BY k DESC'); RETURN NEXT;
	test := 'ios count';	result := cmp('ios', io || 'k', 'SELECT count(*) FROM t_%s WHERE k > 10000'); RETURN NEXT;
	test := 'ios minmax';	result := cmp('ios', 'Index Only Scan Backward using t_btlayout_k', 'SELECT min(k), max(k) FROM t_%s'); RETURN NEXT;
	test := 'ios any';		result := cmp('ios', io || 'k', 'SELECT k FROM t_%s WHERE k = ANY (''{5000,4,4,NULL}'')'); RETURN NEXT;
	test := 'ios d';		result := cmp('ios', iob || 'd', 'SELECT d FROM t_%s WHERE d < 1000 ORDER BY d NULLS LAST'); RETURN NEXT;
	test := 'ios include';	result := cmp('ios', io || 'abc', 'SELECT a, b, c FROM t_%s WHERE a = 7 ORDER BY a, b DESC NULLS FIRST'); RETURN NEXT;
	test := 'ios incl back'; result := cmp('ios', iob || 'abc', 'SELECT a, b, c FROM t_%s WHERE a BETWEEN 7 AND 9 ORDER BY a DESC, b NULLS LAST', true, 'a, b'); RETURN NEXT;
	-- bitmap scans (heap order: compared in the order returned too)
	test := 'bitmap range';	result := cmp('bitmap', bm || 'k', 'SELECT id, k FROM t_%s WHERE k BETWEEN 1000 AND 2000'); RETURN NEXT;
	test := 'bitmap eq';	result := cmp('bitmap', bm || 'k', 'SELECT id, k FROM t_%s WHERE k = 5000'); RETURN NEXT;
	test := 'bitmap or';	result := cmp('bitmap', 'BitmapOr.*' || bm || 'k', 'SELECT id, k FROM t_%s WHERE k = 5000 OR k < 10 OR k IS NULL'); RETURN NEXT;
	test := 'bitmap any';	result := cmp('bitmap', bm || 'k', 'SELECT id, k FROM t_%s WHERE k = ANY (''{1,5000,NULL,1}'')'); RETURN NEXT;
	test := 'bitmap and';	result := cmp('bitmap', 'BitmapAnd', 'SELECT id, k, d FROM t_%s WHERE k BETWEEN 1000 AND 1300 AND d BETWEEN 20000 AND 23000'); RETURN NEXT;
	test := 'bitmap multi';	result := cmp('bitmap', bm || 'abc', 'SELECT id, a, b FROM t_%s WHERE a = 5 AND b < 100'); RETURN NEXT;
	-- multi-column (a, b DESC NULLS FIRST) INCLUDE (c)
	test := 'a prefix';		result := cmp('index', ix || 'abc', 'SELECT id, a, b, c FROM t_%s WHERE a = 5'); RETURN NEXT;
	test := 'a range';		result := cmp('index', ix || 'abc', 'SELECT id, a, b, c FROM t_%s WHERE a > 97'); RETURN NEXT;
	test := 'a, b gt';		result := cmp('index', ix || 'abc', 'SELECT id, a, b, c FROM t_%s WHERE a = 5 AND b > 500'); RETURN NEXT;
	test := 'a, b null';	result := cmp('index', ix || 'abc', 'SELECT id, a, b, c FROM t_%s WHERE a BETWEEN 3 AND 5 AND b IS NULL'); RETURN NEXT;
	test := 'a, b any';		result := cmp('index', ix || 'abc', 'SELECT id, a, b, c FROM t_%s WHERE a = 5 AND b = ANY (''{155,NULL,155,5,995}'')'); RETURN NEXT;
	test := 'a any, b eq';	result := cmp('index', ix || 'abc', 'SELECT id, a, b, c FROM t_%s WHERE a = ANY (''{1,5,50}'') AND b = 155'); RETURN NEXT;
	test := 'b only';		result := cmp('index', ix || 'abc', 'SELECT id, a, b, c FROM t_%s WHERE b = 155'); RETURN NEXT;
	test := 'b only range';	result := cmp('index', ix || 'abc', 'SELECT id, a, b, c FROM t_%s WHERE b > 990'); RETURN NEXT;
	test := 'a, b order';	result := cmp('index', ix || 'abc', 'SELECT id, a, b FROM t_%s ORDER BY a, b DESC NULLS FIRST LIMIT 5000'); RETURN NEXT;
	test := 'a, b backward'; result := cmp('index', bx || 'abc', 'SELECT a, b FROM t_%s ORDER BY a DESC, b NULLS LAST LIMIT 5000'); RETURN NEXT;
	test := 'a eq, b order'; result := cmp('index', ix || 'abc', 'SELECT id, a, b FROM t_%s WHERE a = 42 ORDER BY b DESC NULLS FIRST'); RETURN NEXT;
	test := 'a eq, b back';	result := cmp('index', bx || 'abc', 'SELECT id, a, b FROM t_%s WHERE a = 42 AND b < 500 ORDER BY b NULLS LAST', true, 'a, b'); RETURN NEXT;
	test := 'row compare';	result := cmp('index', ix || 'abc', 'SELECT id, a, b FROM t_%s WHERE a >= 50 AND (a, b) > (50, 10) ORDER BY a LIMIT 300'); RETURN NEXT;
	-- joins: index probes from a nested loop, ordered input of a merge join
	test := 'nestloop';		result := cmp('nestloop', 'Nested Loop.*' || ix || 'k', 'SELECT g, t.id FROM generate_series(-3, 20003, 7) g JOIN t_%s t ON t.k = g', false); RETURN NEXT;
	-- parallel scans (rows from several processes: compared as multisets)
	test := 'parallel range'; result := cmp('parallel', 'Parallel Index Scan using t_btlayout_k', 'SELECT id, k FROM t_%s WHERE k BETWEEN 3000 AND 9000', false); RETURN NEXT;
	test := 'parallel ios';	result := cmp('parallel', 'Parallel Index Only Scan using t_btlayout_k', 'SELECT count(*), sum(k) FROM t_%s WHERE k > 100'); RETURN NEXT;
	test := 'parallel ios rows'; result := cmp('parallel', 'Parallel Index Only Scan using t_btlayout_k', 'SELECT k FROM t_%s WHERE k BETWEEN 4000 AND 6000', false); RETURN NEXT;
	test := 'merge join';	result := cmp('merge', 'Merge Join.*' || io || 'k', 'SELECT x.k, count(*) FROM t_%1$s x JOIN t_%1$s y ON x.k = y.k WHERE x.k < 3000 GROUP BY x.k', false); RETURN NEXT;
END $$;

SELECT * FROM suite();

--
-- Scrollable cursors, compared move by move
--
SELECT cursor_cmp('index', 'Index Scan using t_btlayout_k',
	'SELECT id, k FROM t_%s WHERE k BETWEEN 4990 AND 5010 ORDER BY k');
SELECT cursor_cmp('index', 'Index Scan Backward using t_btlayout_k',
	'SELECT k FROM t_%s WHERE k < 400 ORDER BY k DESC');
SELECT cursor_cmp('index', 'Index Scan using t_btlayout_d',
	'SELECT id, d FROM t_%s ORDER BY d DESC NULLS FIRST');
SELECT cursor_cmp('ios', 'Index Only Scan using t_btlayout_abc',
	'SELECT a, b, c FROM t_%s WHERE a BETWEEN 3 AND 4 ORDER BY a, b DESC NULLS FIRST');

-- and the same by hand, printed
SET enable_seqscan = off;
SET enable_bitmapscan = off;
BEGIN;
EXPLAIN (COSTS OFF)
DECLARE c SCROLL CURSOR FOR SELECT id, k FROM t_btlayout WHERE k BETWEEN 4999 AND 5001 ORDER BY k;
DECLARE cb SCROLL CURSOR FOR SELECT id, k FROM t_btree WHERE k BETWEEN 4999 AND 5001 ORDER BY k;
DECLARE cl SCROLL CURSOR FOR SELECT id, k FROM t_btlayout WHERE k BETWEEN 4999 AND 5001 ORDER BY k;
FETCH NEXT FROM cb;
FETCH NEXT FROM cl;
FETCH ABSOLUTE 5000 FROM cb;
FETCH ABSOLUTE 5000 FROM cl;
FETCH RELATIVE -3 FROM cb;
FETCH RELATIVE -3 FROM cl;
FETCH PRIOR FROM cb;
FETCH PRIOR FROM cl;
FETCH LAST FROM cb;
FETCH LAST FROM cl;
FETCH FIRST FROM cb;
FETCH FIRST FROM cl;
FETCH BACKWARD 3 FROM cb;
FETCH BACKWARD 3 FROM cl;
COMMIT;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- Change both tables the same way: 50k inserts into the middle of the key
-- range (many page splits), deletes of ranges (whole leaf pages become
-- empty and are deleted by VACUUM), non-HOT updates, VACUUM.
--
CREATE TEMP TABLE sizes AS
	SELECT c.relname, pg_relation_size(c.oid) AS size
	FROM pg_class c WHERE relname LIKE 't\_%\_%' AND relkind = 'i';

SELECT both_am($$
INSERT INTO t_%1$s
SELECT 100000 + i,
	   CASE WHEN i %% 50 = 0 THEN NULL WHEN i %% 9 = 0 THEN 5000
			ELSE 8000 + (i * 13) %% 4000 END,
	   CASE WHEN i %% 41 = 0 THEN NULL ELSE 24000 + (i * 7) %% 2000 END,
	   (i * 3) %% 100,
	   CASE WHEN i %% 29 = 0 THEN NULL ELSE (i * 17) %% 1000 END,
	   'n' || i
FROM generate_series(1, 50000) i
$$);
SELECT both_am('DELETE FROM t_%s WHERE k BETWEEN 15000 AND 17000');
SELECT both_am('DELETE FROM t_%s WHERE id %% 7 = 0 AND k < 5000');
SELECT both_am('DELETE FROM t_%s WHERE k = 5000 AND id %% 3 = 0');
SELECT both_am('DELETE FROM t_%s WHERE a BETWEEN 60 AND 62');
SELECT both_am('UPDATE t_%s SET k = k + 1, d = d - 1 WHERE id %% 11 = 0 AND k BETWEEN 100 AND 200');

-- before VACUUM: the indexes still point to dead tuples, and pages split
-- by the inserts are out of their layout
SELECT * FROM suite_summary('suite');
-- lay the pages out again on demand, then compare again
SELECT btlayout_relayout('t_btlayout_k') > 0 AS relaid_k,
	   btlayout_relayout('t_btlayout_d') > 0 AS relaid_d;
SELECT * FROM suite_summary('suite');

VACUUM t_btree;
VACUUM t_btlayout;

-- the indexes grew by many pages (page splits)
SELECT s.relname, pg_relation_size(s.relname::regclass) / 8192 - s.size / 8192 > 50 AS grew
FROM sizes s WHERE s.relname LIKE 't\_btlayout\_%' ORDER BY 1;

-- more inserts after VACUUM, into freed pages, with posting-list splits
SELECT both_am($$
INSERT INTO t_%1$s
SELECT 200000 + i, CASE WHEN i %% 3 = 0 THEN 5000 ELSE 15000 + i %% 2000 END,
	   i, i %% 100, i %% 1000, 'm' || i
FROM generate_series(1, 20000) i
$$);
SELECT heaps_identical();
SELECT * FROM suite();

--
-- REINDEX of the btlayout indexes: our loader again, now on a heap with
-- tuples deleted and (non-HOT) updated by the same transaction, which the
-- build scan hands over as not alive
--
BEGIN;
SELECT both_am('DELETE FROM t_%s WHERE k BETWEEN 12000 AND 12500');
SELECT both_am('UPDATE t_%s SET d = d + 1, b = b + 1 WHERE k BETWEEN 3000 AND 3300');
ALTER INDEX t_btlayout_k SET (layout = btorder);
ALTER INDEX t_btlayout_d SET (layout = none);
REINDEX INDEX t_btlayout_k;
REINDEX TABLE t_btlayout;
SELECT * FROM suite_summary('suite');
COMMIT;

-- REINDEX CONCURRENTLY and CREATE INDEX CONCURRENTLY, after VACUUM has
-- removed the dead tuples' entries from the indexes built above
VACUUM t_btree;
VACUUM t_btlayout;
SELECT heaps_identical();
ALTER INDEX t_btlayout_k SET (layout = veb);
REINDEX INDEX CONCURRENTLY t_btlayout_k;
REINDEX TABLE CONCURRENTLY t_btlayout;
DROP INDEX t_btlayout_abc;
CREATE INDEX CONCURRENTLY t_btlayout_abc ON t_btlayout
	USING btlayout (a, b DESC NULLS FIRST) INCLUDE (c) WITH (layout = eytzinger);
SELECT c.relname, am.amname, i.indisvalid, i.indisready, c.reloptions
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam
WHERE i.indrelid = 't_btlayout'::regclass ORDER BY 1;
SELECT both_am('UPDATE t_%s SET k = k - 1 WHERE id %% 13 = 0 AND k BETWEEN 7000 AND 9000');
VACUUM ANALYZE t_btree;
VACUUM ANALYZE t_btlayout;
SELECT * FROM suite_summary('suite');

-- fillfactor and deduplicate_items are honoured by the build
CREATE INDEX t_btree_k_ff ON t_btree USING btree (k) WITH (fillfactor = 30, deduplicate_items = off);
CREATE INDEX t_btlayout_k_ff ON t_btlayout USING btlayout (k)
	WITH (fillfactor = 30, deduplicate_items = off, layout = eytzinger);
SELECT pg_relation_size('t_btlayout_k_ff') > 2 * pg_relation_size('t_btlayout_k') AS bigger;
SELECT both_am('DROP INDEX t_%1$s_k');
VACUUM ANALYZE t_btree;
VACUUM ANALYZE t_btlayout;
SELECT cmp('index', 'Index Scan using t_btlayout_k_ff', 'SELECT id, k FROM t_%s ORDER BY k');
SELECT cmp('index', 'Index Scan Backward using t_btlayout_k_ff', 'SELECT id, k FROM t_%s WHERE k <= 5000 ORDER BY k DESC', true, 'k');
SELECT cmp('ios', 'Index Only Scan using t_btlayout_k_ff', 'SELECT k FROM t_%s WHERE k = ANY (''{5000,8001,NULL}'')');

--
-- Unique indexes
--
CREATE TABLE u (k int, v text);
INSERT INTO u SELECT i, 'v' || i FROM generate_series(1, 50000) i;
INSERT INTO u VALUES (31337, 'dup'), (NULL, 'n1'), (NULL, 'n2');
-- a build over data with one duplicate fails the same way for both
CREATE UNIQUE INDEX u_k ON u USING btree (k);
CREATE UNIQUE INDEX u_k ON u USING btlayout (k);
DELETE FROM u WHERE v = 'dup';
-- NULLs do not collide, unless NULLS NOT DISTINCT
CREATE UNIQUE INDEX u_k ON u USING btree (k) NULLS NOT DISTINCT;
CREATE UNIQUE INDEX u_k ON u USING btlayout (k) NULLS NOT DISTINCT;
CREATE UNIQUE INDEX u_k ON u USING btlayout (k);
SELECT amname FROM pg_am WHERE oid = (SELECT relam FROM pg_class WHERE relname = 'u_k');
-- enforcement on insert: the server's nbtree code
INSERT INTO u VALUES (31337, 'again');
INSERT INTO u VALUES (1, 'first');
INSERT INTO u VALUES (50001, 'new');
INSERT INTO u VALUES (50001, 'new again');
INSERT INTO u VALUES (NULL, 'n3');
UPDATE u SET k = k + 1 WHERE k = 49999;
-- a deleted duplicate may be reinserted
DELETE FROM u WHERE k = 777;
INSERT INTO u VALUES (777, 'back');
SELECT count(*), count(k), count(DISTINCT k) FROM u;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM u WHERE k = 777;
SELECT * FROM u WHERE k = 777;
SELECT * FROM u WHERE k IS NULL ORDER BY v;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP INDEX u_k;
-- NULLS NOT DISTINCT: build and insert
DELETE FROM u WHERE k IS NULL AND v <> 'n1';
CREATE UNIQUE INDEX u_k ON u USING btlayout (k) NULLS NOT DISTINCT;
INSERT INTO u VALUES (NULL, 'n4');
INSERT INTO u VALUES (49998, 'dup');
DROP INDEX u_k;
-- a duplicate deleted (or updated) by the building transaction itself is
-- not alive for the build's uniqueness check
INSERT INTO u VALUES (31337, 'dup');
BEGIN;
DELETE FROM u WHERE v = 'dup';
CREATE UNIQUE INDEX u_k ON u USING btree (k);
ROLLBACK;
BEGIN;
DELETE FROM u WHERE v = 'dup';
UPDATE u SET v = v || '!' WHERE k BETWEEN 100 AND 102;
CREATE UNIQUE INDEX u_k ON u USING btlayout (k);
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT * FROM u WHERE k IN (31337, 100, 101, 102) ORDER BY k;
INSERT INTO u VALUES (101, 'dup');
ROLLBACK;
DELETE FROM u WHERE v = 'dup';
BEGIN;
UPDATE u SET v = v || '!' WHERE k BETWEEN 100 AND 102;
CREATE UNIQUE INDEX u_k ON u USING btlayout (k);
ROLLBACK;
CREATE UNIQUE INDEX CONCURRENTLY u_k ON u USING btlayout (k);
INSERT INTO u VALUES (31337, 'dup');
DROP INDEX u_k;
-- multi-column unique, with NULLs
CREATE TABLE u2 (a int, b int);
INSERT INTO u2 VALUES (1, 1), (1, 2), (1, NULL), (1, NULL), (2, NULL);
CREATE UNIQUE INDEX u2_ab ON u2 USING btlayout (a, b);
INSERT INTO u2 VALUES (1, NULL);
INSERT INTO u2 VALUES (1, 2);
DROP INDEX u2_ab;
CREATE UNIQUE INDEX u2_ab ON u2 USING btree (a, b) NULLS NOT DISTINCT;
CREATE UNIQUE INDEX u2_ab ON u2 USING btlayout (a, b) NULLS NOT DISTINCT;
DELETE FROM u2 WHERE a = 1 AND b IS NULL AND ctid <> (SELECT min(ctid) FROM u2 WHERE a = 1 AND b IS NULL);
CREATE UNIQUE INDEX u2_ab ON u2 USING btlayout (a, b) NULLS NOT DISTINCT;
INSERT INTO u2 VALUES (2, NULL);
INSERT INTO u2 VALUES (3, NULL);
SELECT * FROM u2 ORDER BY a, b;
-- unique index on a DESC column with a text key
CREATE TABLE u3 (s text);
INSERT INTO u3 SELECT 'key ' || i FROM generate_series(1, 5000) i;
INSERT INTO u3 VALUES ('key 4321');
CREATE UNIQUE INDEX u3_s ON u3 USING btree (s DESC);
CREATE UNIQUE INDEX u3_s ON u3 USING btlayout (s DESC);
DELETE FROM u3 WHERE ctid = (SELECT max(ctid) FROM u3);
CREATE UNIQUE INDEX u3_s ON u3 USING btlayout (s DESC);
INSERT INTO u3 VALUES ('key 4321');
SELECT count(*) FROM u3;

--
-- Partial and expression indexes
--
CREATE TABLE p_btree (id int, k int, s text) WITH (autovacuum_enabled = off);
CREATE TABLE p_btlayout (LIKE p_btree) WITH (autovacuum_enabled = off);
SELECT both_am($$
INSERT INTO p_%1$s
SELECT i, CASE WHEN i %% 97 = 0 THEN NULL ELSE (i * 7919) %% 10000 END,
	   CASE i %% 4 WHEN 0 THEN 'Key' WHEN 1 THEN 'KEY' WHEN 2 THEN 'key' ELSE 'kEy' END
	   || ((i * 13) %% 3000)
FROM generate_series(1, 30000) i
$$);
SELECT both_am('CREATE INDEX p_%1$s_even ON p_%1$s USING %1$s (k) WHERE k %% 2 = 0');
SELECT both_am('CREATE INDEX p_%1$s_lower ON p_%1$s USING %1$s (lower(s) COLLATE "C")');
CREATE INDEX p_btree_k2 ON p_btree USING btree ((k * 2) DESC);
CREATE INDEX p_btlayout_k2 ON p_btlayout USING btlayout ((k * 2) DESC) WITH (layout = btorder);
VACUUM ANALYZE p_btree;
VACUUM ANALYZE p_btlayout;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id, k FROM p_btlayout WHERE k % 2 = 0 AND k < 100;
EXPLAIN (COSTS OFF) SELECT id, s FROM p_btlayout WHERE lower(s) COLLATE "C" = 'key17';
EXPLAIN (COSTS OFF) SELECT id, k FROM p_btlayout WHERE k * 2 > 19000 ORDER BY k * 2;
SELECT id, s FROM p_btlayout WHERE lower(s) COLLATE "C" = 'key17';
SELECT id, k FROM p_btlayout WHERE k * 2 BETWEEN 100 AND 106 ORDER BY k * 2 DESC;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT cmp('index', 'Index Scan using p_btlayout_even', 'SELECT id, k FROM p_%s WHERE k %% 2 = 0 AND k < 1000');
SELECT cmp('index', 'Index Scan using p_btlayout_even', 'SELECT id, k FROM p_%s WHERE k %% 2 = 0 ORDER BY k');
SELECT cmp('index', 'Index Scan Backward using p_btlayout_even', 'SELECT id, k FROM p_%s WHERE k %% 2 = 0 AND k > 9000 ORDER BY k DESC', true, 'k');
SELECT cmp('ios', 'Index Only Scan using p_btlayout_even', 'SELECT k FROM p_%s WHERE k %% 2 = 0 AND k = ANY (''{2,4,5,NULL,9998}'')');
SELECT cmp('bitmap', 'Bitmap Index Scan on p_btlayout_even', 'SELECT id, k FROM p_%s WHERE k %% 2 = 0 AND k BETWEEN 500 AND 700');
SELECT cmp('index', 'Index Scan using p_btlayout_lower', 'SELECT id, s FROM p_%s WHERE lower(s) COLLATE "C" = ''key17''');
SELECT cmp('index', 'Index Scan using p_btlayout_lower', 'SELECT id, s FROM p_%s WHERE lower(s) COLLATE "C" BETWEEN ''key1'' AND ''key2'' ORDER BY lower(s) COLLATE "C"');
SELECT cmp('index', 'Index Scan Backward using p_btlayout_lower', 'SELECT id, s FROM p_%s ORDER BY lower(s) COLLATE "C" DESC', true, 'lower(s) COLLATE "C"');
SELECT cmp('index', 'Index Scan using p_btlayout_k2', 'SELECT id, k FROM p_%s WHERE k * 2 > 19000 ORDER BY k * 2 DESC');
SELECT cmp('index', 'Index Scan Backward using p_btlayout_k2', 'SELECT id, k FROM p_%s ORDER BY k * 2', true, 'k');
SELECT cmp('index', 'Index Scan using p_btlayout_k2', 'SELECT id, k FROM p_%s WHERE k * 2 = ANY (''{0, 2, 3, 19998}'')');
SELECT both_am($$UPDATE p_%s SET k = k + 1, s = upper(s) WHERE id %% 5 = 0$$);
SELECT cmp('index', 'Index Scan using p_btlayout_even', 'SELECT id, k FROM p_%s WHERE k %% 2 = 0 ORDER BY k');
SELECT cmp('index', 'Index Scan Backward using p_btlayout_lower', 'SELECT id, s FROM p_%s ORDER BY lower(s) COLLATE "C" DESC', true, 'lower(s) COLLATE "C"');
SELECT cmp('index', 'Index Scan Backward using p_btlayout_k2', 'SELECT id, k FROM p_%s ORDER BY k * 2', true, 'k');

--
-- Unlogged table
--
CREATE UNLOGGED TABLE ul_btree (id int, k int) WITH (autovacuum_enabled = off);
CREATE UNLOGGED TABLE ul_btlayout (LIKE ul_btree) WITH (autovacuum_enabled = off);
SELECT both_am('INSERT INTO ul_%s SELECT i, (i * 7919) %% 3000 FROM generate_series(1, 20000) i');
CREATE INDEX ul_btree_k ON ul_btree USING btree (k);
CREATE INDEX ul_btlayout_k ON ul_btlayout USING btlayout (k) WITH (layout = veb);
SELECT relname, relpersistence FROM pg_class WHERE relname LIKE 'ul\_btlayout%' ORDER BY 1;
VACUUM ANALYZE ul_btree;
VACUUM ANALYZE ul_btlayout;
SELECT cmp('index', 'Index Scan using ul_btlayout_k', 'SELECT id, k FROM ul_%s WHERE k BETWEEN 10 AND 200');
SELECT cmp('ios', 'Index Only Scan Backward using ul_btlayout_k', 'SELECT k FROM ul_%s ORDER BY k DESC');
SELECT both_am('INSERT INTO ul_%s SELECT i, 1500 FROM generate_series(1, 5000) i');
SELECT cmp('index', 'Index Scan using ul_btlayout_k', 'SELECT id, k FROM ul_%s WHERE k >= 1499 ORDER BY k LIMIT 6000');
-- an empty unlogged index (init fork) and one on an empty table
CREATE UNLOGGED TABLE ul_empty (k int);
CREATE INDEX ul_empty_k ON ul_empty USING btlayout (k);
SELECT count(*) FROM ul_empty WHERE k = 1;
INSERT INTO ul_empty VALUES (1), (1), (NULL);
SET enable_seqscan = off;
SELECT k FROM ul_empty WHERE k = 1;
RESET enable_seqscan;

--
-- CLUSTER ... USING a btlayout index
--
CREATE TABLE cl_btree (id int, k int, d int) WITH (autovacuum_enabled = off);
CREATE TABLE cl_btlayout (LIKE cl_btree) WITH (autovacuum_enabled = off);
SELECT both_am($$
INSERT INTO cl_%s
SELECT i, CASE WHEN i %% 71 = 0 THEN NULL ELSE (i * 7919) %% 4000 END,
	   CASE WHEN i %% 43 = 0 THEN NULL ELSE (i * 31) %% 5000 END
FROM generate_series(1, 20000) i
$$);
CREATE INDEX cl_btree_d ON cl_btree USING btree (d DESC NULLS FIRST);
CREATE INDEX cl_btlayout_d ON cl_btlayout USING btlayout (d DESC NULLS FIRST) WITH (layout = eytzinger);
SELECT both_am('CREATE INDEX cl_%1$s_k ON cl_%1$s USING %1$s (k)');
CREATE TEMP TABLE cl_old AS SELECT id, ctid AS old_tid FROM cl_btlayout;
CLUSTER cl_btree USING cl_btree_d;
CLUSTER cl_btlayout USING cl_btlayout_d;
SELECT relname, indisclustered FROM pg_index JOIN pg_class ON oid = indexrelid
WHERE relname LIKE 'cl\_btlayout%' ORDER BY 1;
-- the table comes out in index order: d DESC NULLS FIRST in ctid order
SELECT (SELECT array_agg(d ORDER BY ctid) FROM cl_btlayout)
	 = (SELECT array_agg(d ORDER BY d DESC NULLS FIRST) FROM cl_btlayout) AS in_index_order;
SELECT (SELECT array_agg(d ORDER BY ctid) FROM cl_btlayout)
	 = (SELECT array_agg(d ORDER BY ctid) FROM cl_btree) AS same_as_btree;
SELECT d FROM cl_btlayout ORDER BY ctid LIMIT 5;
-- CLUSTER read the btlayout index forward: rows with equal d come in the
-- order of their TIDs in the old heap
SELECT count(*) AS rows, bool_and(ok) AS ties_in_old_tid_order FROM (
	SELECT coalesce(d IS DISTINCT FROM lag(d) OVER w OR old_tid > lag(old_tid) OVER w, true) AS ok
	FROM cl_btlayout JOIN cl_old USING (id) WINDOW w AS (ORDER BY cl_btlayout.ctid)) s;
-- the indexes were rebuilt by CLUSTER and still agree with btree
VACUUM ANALYZE cl_btlayout;
VACUUM ANALYZE cl_btree;
SELECT cmp('index', 'Index Scan using cl_btlayout_k', 'SELECT id, k FROM cl_%s WHERE k < 300', false);
SELECT cmp('ios', 'Index Only Scan Backward using cl_btlayout_k', 'SELECT k FROM cl_%s ORDER BY k DESC');
SELECT cmp('ios', 'Index Only Scan using cl_btlayout_d', 'SELECT d FROM cl_%s ORDER BY d DESC NULLS FIRST');
-- CLUSTER by the (already clustered) index again
CLUSTER cl_btlayout;
SELECT (SELECT array_agg(d ORDER BY ctid) FROM cl_btlayout)
	 = (SELECT array_agg(d ORDER BY d DESC NULLS FIRST) FROM cl_btlayout) AS in_index_order;

RESET search_path;
DROP SCHEMA btl_queries CASCADE;
\if :create_btlayout
DROP EXTENSION btlayout;
\endif
