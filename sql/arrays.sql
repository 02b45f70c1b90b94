--
-- arrays: scans with array keys (IN lists, = ANY) and the shapes that are
-- skip scans on 18 and later, btlayout against core btree (issue 46)
--
-- Two tables, ar_btree and ar_btlayout, get the same rows in the same order
-- (so the same heap TIDs, checked below, and ties between equal keys in
-- the same order) and the same indexes, USING btree on one and USING
-- btlayout, in several layouts, on the other.  Each query runs on both,
-- forced onto the index by enable_* settings; cmp() checks the btlayout
-- plan against a pattern ("NOT USED" instead of a result when it does not
-- match) and prints "<n> rows: same" or the first difference, never the
-- rows themselves, so that the output is that of every server version.
--
-- On 15 and 16 btlayout's drivers run the arrays and position every
-- primitive scan with btlayout's search.  On 17 and later nbtree's array
-- logic advances the arrays inside _bt_checkkeys() and schedules the
-- primitive scans, each of which descends through btlayout's search; on
-- 18 and later the shapes with no qual on a leading column (b = x on an
-- index of (a, b)) are skip scans, the same way, and before 18 they are
-- scans of the whole index (or of the range of a).  The answers must be
-- btree's on every version; the last part checks that btlayout's search
-- really served the array scans.
--
SET client_min_messages = warning;
-- plans forced with enable_* = off cost more than jit_above_cost: no JIT
SET jit = off;
SELECT NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'btlayout') AS create_btlayout \gset
CREATE EXTENSION IF NOT EXISTS btlayout;
CREATE SCHEMA btl_arrays;
SET search_path = btl_arrays, public;

--
-- Helpers
--

-- (a path from the directory pg_regress runs in, its --inputdir)
\i sql/include/twins.sql

-- A fixed walk of a scroll cursor: forward, backward, absolute and
-- relative moves, direction changes in the middle of the result (and of
-- leaf pages), past either end and back.  Each FETCH adds its row (or
-- "none"); the MOVEs add how many rows they moved.
CREATE FUNCTION ar_walk(c refcursor) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
	r record;
	n bigint;
	res text[] := '{}';
BEGIN
	FETCH PRIOR FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH PRIOR FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH RELATIVE 150 FROM c INTO r;	res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH PRIOR FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH ABSOLUTE 400 FROM c INTO r;	res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	MOVE BACKWARD 120 FROM c;
	GET DIAGNOSTICS n = ROW_COUNT;		res := res || ('moved ' || n);
	FETCH NEXT FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH RELATIVE -250 FROM c INTO r;	res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH LAST FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH PRIOR FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	MOVE BACKWARD 500 FROM c;
	GET DIAGNOSTICS n = ROW_COUNT;		res := res || ('moved ' || n);
	FETCH PRIOR FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH ABSOLUTE -40 FROM c INTO r;	res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH FIRST FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH PRIOR FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	MOVE FORWARD ALL FROM c;
	GET DIAGNOSTICS n = ROW_COUNT;		res := res || ('moved ' || n);
	FETCH PRIOR FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH ABSOLUTE 2 FROM c INTO r;		res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH RELATIVE 0 FROM c INTO r;		res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	MOVE BACKWARD ALL FROM c;
	GET DIAGNOSTICS n = ROW_COUNT;		res := res || ('moved ' || n);
	FETCH NEXT FROM c INTO r;			res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	RETURN res;
END $$;

--
-- Data: 60,000 rows.
--   k   int4: 0..14999, about four rows each, k = 5000 six thousand times
--       (posting lists over many leaf pages), 1% NULLs
--   k8  int8: -20000..19999 and values above 2^32, NULLs
--   s   text (the database's default collation) and sc (COLLATE "C"): the
--       same strings of several lengths, three rows each, NULLs
--   a, b: a = 0..19 (few values, no NULLs), b = 0..999 with NULLs, every
--       (a, b) three times; indexed on (a, b)
--   x, y: x = 0..7 with NULLs, y = 0..499 with NULLs; indexed on
--       (x DESC NULLS FIRST, y NULLS FIRST)
-- Autovacuum is off so that the heaps stay identical.
--
CREATE TABLE ar_btree (id int, k int4, k8 int8, s text, sc text COLLATE "C",
					   a int, b int, x int, y int)
	WITH (autovacuum_enabled = off);
CREATE TABLE ar_btlayout (LIKE ar_btree) WITH (autovacuum_enabled = off);
SELECT both_am($$
INSERT INTO ar_%1$s
SELECT i,
	   CASE WHEN i %% 97 = 0 THEN NULL WHEN i %% 10 = 3 THEN 5000
			ELSE (i * 7919) %% 15000 END,
	   CASE WHEN i %% 89 = 0 THEN NULL WHEN i %% 7 = 0 THEN 4294967296 + i
			ELSE (i * 31) %% 40000 - 20000 END,
	   CASE WHEN i %% 83 = 0 THEN NULL ELSE 'v' || (i * 7) %% 20000 || repeat('x', (i * 7) %% 20000 %% 5) END,
	   CASE WHEN i %% 83 = 0 THEN NULL ELSE 'v' || (i * 7) %% 20000 || repeat('x', (i * 7) %% 20000 %% 5) END,
	   i %% 20,
	   CASE WHEN i %% 41 = 0 THEN NULL ELSE (i / 20) %% 1000 END,
	   CASE WHEN i %% 17 = 0 THEN NULL ELSE i %% 8 END,
	   CASE WHEN i %% 29 = 0 THEN NULL ELSE (i / 8) %% 500 END
FROM generate_series(1, 60000) i
$$);

-- Are the two heaps the same tuples at the same TIDs?
CREATE FUNCTION ar_heaps_identical() RETURNS bool LANGUAGE sql AS $$
	SELECT (SELECT md5(string_agg(ctid::text || ':' || t::text, ',' ORDER BY ctid)) FROM ar_btree t)
		 = (SELECT md5(string_agg(ctid::text || ':' || t::text, ',' ORDER BY ctid)) FROM ar_btlayout t)
$$;

CREATE INDEX ar_btree_k ON ar_btree USING btree (k);
CREATE INDEX ar_btree_k8 ON ar_btree USING btree (k8);
CREATE INDEX ar_btree_s ON ar_btree USING btree (s);
CREATE INDEX ar_btree_sc ON ar_btree USING btree (sc);
CREATE INDEX ar_btree_ab ON ar_btree USING btree (a, b);
CREATE INDEX ar_btree_xy ON ar_btree USING btree (x DESC NULLS FIRST, y NULLS FIRST);
CREATE INDEX ar_btlayout_k ON ar_btlayout USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX ar_btlayout_k8 ON ar_btlayout USING btlayout (k8) WITH (layout = veb);
CREATE INDEX ar_btlayout_s ON ar_btlayout USING btlayout (s) WITH (layout = btorder);
CREATE INDEX ar_btlayout_sc ON ar_btlayout USING btlayout (sc) WITH (layout = blocked);
CREATE INDEX ar_btlayout_ab ON ar_btlayout USING btlayout (a, b) WITH (layout = eytzinger);
CREATE INDEX ar_btlayout_xy ON ar_btlayout USING btlayout (x DESC NULLS FIRST, y NULLS FIRST)
	WITH (layout = none);
VACUUM ANALYZE ar_btree;
VACUUM ANALYZE ar_btlayout;

SELECT ar_heaps_identical();
SELECT count(*), count(k), count(DISTINCT k), min(k), max(k),
	   count(*) FILTER (WHERE k = 5000) AS k5000, count(DISTINCT k8) AS k8s,
	   count(DISTINCT s) AS s, count(DISTINCT (a, b)) AS ab, count(DISTINCT (x, y)) AS xy
FROM ar_btlayout;
-- the indexes have many leaf pages: arrays of 100 and 1000 elements span them
SELECT c.relname, s.layout, s.leaf_pages > 40 AS many_leaves
FROM pg_class c, btlayout_stats(c.oid) s
WHERE c.relname LIKE 'ar\_btlayout\_%' ORDER BY 1;

-- The harness can fail: other rows, the same rows in another order, a
-- different key sequence, a plan without the index, and a cursor that
-- walks differently are all reported
SELECT cmp('index', 'Index Scan using ar_btlayout_k',
	$$SELECT id, k FROM ar_%1$s WHERE k = ANY (CASE WHEN '%1$s' = 'btree' THEN '{3,17}' ELSE '{3,18}' END::int[])$$);
SELECT cmp('index', 'Function Scan',
	$$SELECT x FROM unnest(CASE WHEN '%1$s' = 'btree' THEN '{1,2,3}' ELSE '{1,3,2}' END::int[]) x$$);
SELECT cmp('index', 'Function Scan',
	$$SELECT x FROM unnest(CASE WHEN '%1$s' = 'btree' THEN '{1,2,3}' ELSE '{1,3,2}' END::int[]) x$$, false);
SELECT cmp('index', 'Function Scan',
	$$SELECT x, y FROM unnest(CASE WHEN '%1$s' = 'btree' THEN '{1,2,3}' ELSE '{1,3,2}' END::int[],
							  CASE WHEN '%1$s' = 'btree' THEN '{7,8,9}' ELSE '{7,9,8}' END::int[]) u(x, y)$$,
	true, 'x');
-- (while ties in another order are not: keys compares x alone)
SELECT cmp('index', 'Function Scan',
	$$SELECT x, y FROM unnest('{1,1,2}'::int[],
							  CASE WHEN '%1$s' = 'btree' THEN '{7,8,9}' ELSE '{8,7,9}' END::int[]) u(x, y)$$,
	true, 'x');
SELECT cmp('index', 'Index Scan using ar_btlayout_k', 'SELECT id FROM ar_%s WHERE id IN (5, 6)');
SELECT cursor_cmp('index', 'Function Scan',
	$$SELECT x FROM generate_series(1, CASE WHEN '%1$s' = 'btree' THEN 1000 ELSE 999 END) x$$,
	'ar_walk', true);

--
-- The plans, once per kind of scan (the same text on every version)
--
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SET enable_sort = off;
SELECT plan_lines($$SELECT id, k FROM ar_btlayout WHERE k IN (17, 5000, NULL, 3)$$) AS "QUERY PLAN";
SELECT plan_lines($$SELECT id, k8 FROM ar_btlayout WHERE k8 = ANY ('{1,-5,70}'::int4[])$$) AS "QUERY PLAN";
SELECT plan_lines($$SELECT id, k FROM ar_btlayout WHERE k = ANY ('{9,3,5000}') ORDER BY k DESC LIMIT 5$$) AS "QUERY PLAN";
SELECT plan_lines($$SELECT id, a, b FROM ar_btlayout WHERE a = ANY ('{4,2}') AND b = 9$$) AS "QUERY PLAN";
SELECT plan_lines($$SELECT id, a, b FROM ar_btlayout WHERE b = 77$$) AS "QUERY PLAN";
SET enable_indexonlyscan = on;
SELECT plan_lines($$SELECT x, y FROM ar_btlayout WHERE y = 3$$) AS "QUERY PLAN";
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = on;
SELECT plan_lines($$SELECT id, s FROM ar_btlayout WHERE s = ANY ('{v14,v21x}')$$) AS "QUERY PLAN";
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
RESET enable_sort;

-- A few answers, printed (index scans on btlayout; keys only, so that no
-- heap position shows)
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k, count(*) FROM ar_btlayout WHERE k IN (14999, 0, 7, 7, NULL, -1, 15000) GROUP BY k ORDER BY k;
SELECT k8 FROM ar_btlayout WHERE k8 = ANY ('{-20000,19999,4294967303,-20001}') ORDER BY k8 DESC;
SELECT s FROM ar_btlayout WHERE s IN ('v14', 'v14xxxx', 'v7xx', 'v19999xxxx', 'v', '') ORDER BY s;
SELECT a, b FROM ar_btlayout WHERE a = ANY ('{19,0}') AND b = ANY ('{999,0,NULL}') ORDER BY a, b;
SELECT x, y, count(*) FROM ar_btlayout WHERE y = ANY ('{499,0}') GROUP BY x, y ORDER BY x DESC NULLS FIRST, y;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- The comparisons, run now and after each change to the tables
--
CREATE FUNCTION ar_suite() RETURNS TABLE (test text, result text)
LANGUAGE plpgsql AS $$
DECLARE
	ix constant text := 'Index Scan using ar_btlayout_';
	bx constant text := 'Index Scan Backward using ar_btlayout_';
	io constant text := 'Index Only Scan using ar_btlayout_';
	iob constant text := 'Index Only Scan Backward using ar_btlayout_';
	bm constant text := 'Bitmap Index Scan on ar_btlayout_';
	-- 100 keys over the whole range of k, unsorted, none of them 5000
	a100 constant text := (SELECT array_agg((g * 8111) % 15000 + 1 ORDER BY g)::text
						   FROM generate_series(1, 100) g);
	-- 1000 keys, unsorted, with duplicates and keys beyond the range of k
	a1000 constant text := (SELECT array_agg((g * 7919) % 16000 ORDER BY g)::text
							FROM generate_series(1, 1000) g);
	-- 100 strings, unsorted, some absent (five x, and numbers from 20000)
	s100 constant text := (SELECT array_agg('v' || n || repeat('x', CASE WHEN g % 9 = 0 THEN 5 ELSE n % 5 END)
											ORDER BY g)::text
						   FROM generate_series(1, 100) g, LATERAL (SELECT (g * 211) % 20003 AS n) n);
	-- 100 values of b, and all 20 of a with absent ones
	b100 constant text := (SELECT array_agg((g * 37) % 1003 ORDER BY g)::text
						   FROM generate_series(1, 100) g);
BEGIN
	--
	-- int4: IN lists and = ANY
	--
	test := 'in dups nulls';	result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k IN (17, 17, NULL, 3, 14999, 3)'); RETURN NEXT;
	test := 'any unsorted';		result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{900,3,77,3,12000,1,0}'')'); RETURN NEXT;
	test := 'any hot key';		result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{5001,4999,5000}'')'); RETURN NEXT;
	test := 'any absent';		result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{-7,15000,20000,-1}'')'); RETURN NEXT;
	test := 'any ends';			result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{14999,0,-1,15000,-2147483648,2147483647}'')'); RETURN NEXT;
	test := 'any some absent';	result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{-3,8,15001,8,9,30000}'')'); RETURN NEXT;
	test := 'any nulls only';	result := cmp('index', 'ar_btlayout_k|One-Time Filter', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{NULL,NULL}'')'); RETURN NEXT;
	test := 'any empty';		result := cmp('index', 'ar_btlayout_k|One-Time Filter', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{}'')'); RETURN NEXT;
	test := 'any 100';			result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a100 || ''')'); RETURN NEXT;
	test := 'any 1000';			result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a1000 || ''')'); RETURN NEXT;
	test := 'any + lt';			result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{7,8,900,5000,9000}'') AND k < 5000'); RETURN NEXT;
	test := 'any + between';	result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a1000 || ''') AND k BETWEEN 4000 AND 6000'); RETURN NEXT;
	test := 'two arrays';		result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{1,2,3,5000,7}'') AND k IN (3, 5000, 8, 7)'); RETURN NEXT;
	test := 'lt any';			result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k < ANY (''{40,NULL,12}'')'); RETURN NEXT;
	test := 'int8 array';		result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{5000,4294967296,-4294967296,12,9223372036854775807}''::int8[])'); RETURN NEXT;
	-- ordered, forward and backward, with LIMIT
	test := 'any asc';			result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a1000 || ''') ORDER BY k'); RETURN NEXT;
	test := 'any asc limit';	result := cmp('index', ix || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a100 || ''') ORDER BY k LIMIT 37'); RETURN NEXT;
	test := 'any desc';			result := cmp('index', bx || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a1000 || ''') ORDER BY k DESC', true, 'k'); RETURN NEXT;
	test := 'any desc hot';		result := cmp('index', bx || 'k', 'SELECT id, k FROM ar_%s WHERE k IN (4999, 5000, 5001, 14999) ORDER BY k DESC', true, 'k'); RETURN NEXT;
	test := 'any desc limit';	result := cmp('index', bx || 'k', 'SELECT k FROM ar_%s WHERE k = ANY (''' || a100 || ''') ORDER BY k DESC LIMIT 25'); RETURN NEXT;
	test := 'any desc ends';	result := cmp('index', bx || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{0,14999,-1,15000,NULL}'') ORDER BY k DESC', true, 'k'); RETURN NEXT;
	test := 'any desc + gt';	result := cmp('index', bx || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a1000 || ''') AND k > 10000 ORDER BY k DESC', true, 'k'); RETURN NEXT;
	-- index-only and bitmap scans
	test := 'ios any';			result := cmp('ios', io || 'k', 'SELECT k FROM ar_%s WHERE k = ANY (''' || a1000 || ''')'); RETURN NEXT;
	test := 'ios any desc';		result := cmp('ios', iob || 'k', 'SELECT k FROM ar_%s WHERE k IN (4999, 5000, 3, 14999, -1) ORDER BY k DESC'); RETURN NEXT;
	test := 'ios count';		result := cmp('ios', io || 'k', 'SELECT count(*) FROM ar_%s WHERE k = ANY (''' || a100 || ''')'); RETURN NEXT;
	test := 'bitmap any';		result := cmp('bitmap', bm || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a1000 || ''')'); RETURN NEXT;
	test := 'bitmap in hot';	result := cmp('bitmap', bm || 'k', 'SELECT id, k FROM ar_%s WHERE k IN (5000, 3, NULL, 15000)'); RETURN NEXT;
	-- (18 and later may merge the two arrays into one Bitmap Index Scan)
	test := 'bitmap or';		result := cmp('bitmap', bm || 'k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''{3,9,14999}'') OR k = ANY (''{5000,9,-1}'')'); RETURN NEXT;
	--
	-- int8, and int4 arrays on it (cross-type)
	--
	test := 'int8 any';			result := cmp('index', ix || 'k8', 'SELECT id, k8 FROM ar_%s WHERE k8 = ANY (''{4294967303,-20000,19999,0,4294967296,NULL}''::int8[])'); RETURN NEXT;
	test := 'int8 int4 array';	result := cmp('index', ix || 'k8', 'SELECT id, k8 FROM ar_%s WHERE k8 = ANY (''{-20000,19999,-20001,20000,2147483647,-2147483648,5,5}''::int4[])'); RETURN NEXT;
	test := 'int8 int2 array';	result := cmp('index', ix || 'k8', 'SELECT id, k8 FROM ar_%s WHERE k8 = ANY (''{-32768,32767,100,-100,NULL}''::int2[])'); RETURN NEXT;
	test := 'int8 int4 100';	result := cmp('index', ix || 'k8', 'SELECT id, k8 FROM ar_%s WHERE k8 = ANY (''' || a100 || '''::int4[])'); RETURN NEXT;
	test := 'int8 int4 desc';	result := cmp('index', bx || 'k8', 'SELECT k8 FROM ar_%s WHERE k8 = ANY (''' || a1000 || '''::int4[]) ORDER BY k8 DESC'); RETURN NEXT;
	test := 'int8 in mixed';	result := cmp('index', ix || 'k8', 'SELECT id, k8 FROM ar_%s WHERE k8 IN (1::int4, 4294967310::int8, -3::int2, 17)'); RETURN NEXT;
	test := 'int8 any + gt';	result := cmp('index', ix || 'k8', 'SELECT id, k8 FROM ar_%s WHERE k8 = ANY (''' || a1000 || '''::int4[]) AND k8 > 12000::int4 ORDER BY k8 LIMIT 50'); RETURN NEXT;
	test := 'int8 ios';			result := cmp('ios', io || 'k8', 'SELECT k8 FROM ar_%s WHERE k8 = ANY (''{-1,-2,-3,4294967303}''::int8[])'); RETURN NEXT;
	test := 'int8 bitmap';		result := cmp('bitmap', bm || 'k8', 'SELECT id, k8 FROM ar_%s WHERE k8 = ANY (''' || a1000 || '''::int4[])'); RETURN NEXT;
	--
	-- text, in the default collation and in "C"
	--
	test := 'text in';			result := cmp('index', ix || 's', 'SELECT id, s FROM ar_%s WHERE s IN (''v14xxxx'', ''v14xxxx'', NULL, ''v7xx'', ''v15'', ''v'', '''', ''zzz'')'); RETURN NEXT;
	test := 'text any 100';		result := cmp('index', ix || 's', 'SELECT id, s FROM ar_%s WHERE s = ANY (''' || s100 || ''')'); RETURN NEXT;
	test := 'text any desc';	result := cmp('index', bx || 's', 'SELECT s FROM ar_%s WHERE s = ANY (''' || s100 || ''') ORDER BY s DESC'); RETURN NEXT;
	test := 'text any + range';	result := cmp('index', ix || 's', 'SELECT id, s FROM ar_%s WHERE s = ANY (''' || s100 || ''') AND s > ''v3'' ORDER BY s LIMIT 40'); RETURN NEXT;
	test := 'text ios';			result := cmp('ios', io || 's', 'SELECT s FROM ar_%s WHERE s = ANY (''{v9999xxxx,v10xxx,v10,v1x,v19998xxx,v19999xxxx}'')'); RETURN NEXT;
	test := 'C in';				result := cmp('index', ix || 'sc', 'SELECT id, sc FROM ar_%s WHERE sc IN (''v14xxxx'', ''v14xxxx'', NULL, ''v7xx'', ''v15'', ''v'', '''', ''zzz'')'); RETURN NEXT;
	test := 'C any 100';		result := cmp('index', ix || 'sc', 'SELECT id, sc FROM ar_%s WHERE sc = ANY (''' || s100 || ''')'); RETURN NEXT;
	test := 'C any desc';		result := cmp('index', bx || 'sc', 'SELECT sc FROM ar_%s WHERE sc = ANY (''' || s100 || ''') ORDER BY sc DESC LIMIT 150'); RETURN NEXT;
	test := 'C bitmap';			result := cmp('bitmap', bm || 'sc', 'SELECT id, sc FROM ar_%s WHERE sc = ANY (''' || s100 || ''')'); RETURN NEXT;
	--
	-- (a, b): arrays on a, on b, on both, with inequalities, several at once
	--
	test := 'a any';			result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = ANY (''{7,3,3,-1,25,19}'')'); RETURN NEXT;
	test := 'a any, b eq';		result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = ANY (''{7,3,0}'') AND b = 500'); RETURN NEXT;
	test := 'a eq, b any';		result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = 4 AND b = ANY (''' || b100 || ''')'); RETURN NEXT;
	test := 'a any, b any';		result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = ANY (''{19,0,8,21,NULL}'') AND b = ANY (''' || b100 || ''')'); RETURN NEXT;
	test := 'a any, b gt';		result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = ANY (''{2,5,7}'') AND b > 990'); RETURN NEXT;
	test := 'a any, b range';	result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a IN (11, 1, 6) AND b BETWEEN 200 AND 230'); RETURN NEXT;
	test := 'a gt, b any';		result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a > 15 AND b = ANY (''{3,500,999,NULL,1000}'')'); RETURN NEXT;
	test := 'a le, b any';		result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a <= 2 AND b IN (0, 1, 998)'); RETURN NEXT;
	test := 'a any any, b any';	result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = ANY (''{1,2,3,4}'') AND a IN (3, 4, 5) AND b = ANY (''{10,20,30}'') AND b < 25'); RETURN NEXT;
	test := 'a any, b null';	result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = ANY (''{0,1,2}'') AND b IS NULL'); RETURN NEXT;
	test := 'a any asc';		result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = ANY (''{13,2,9}'') ORDER BY a, b LIMIT 4000'); RETURN NEXT;
	test := 'a any desc';		result := cmp('index', bx || 'ab', 'SELECT a, b FROM ar_%s WHERE a = ANY (''{13,2,9}'') ORDER BY a DESC, b DESC'); RETURN NEXT;
	test := 'a any desc, b lt';	result := cmp('index', bx || 'ab', 'SELECT a, b FROM ar_%s WHERE a IN (0, 19, 10) AND b < 100 ORDER BY a DESC, b DESC LIMIT 120'); RETURN NEXT;
	test := 'a eq, b any desc';	result := cmp('index', bx || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = 6 AND b = ANY (''' || b100 || ''') ORDER BY b DESC', true, 'a, b'); RETURN NEXT;
	test := 'ab ios any any';	result := cmp('ios', io || 'ab', 'SELECT a, b FROM ar_%s WHERE a = ANY (''{5,15}'') AND b = ANY (''' || b100 || ''')'); RETURN NEXT;
	test := 'ab ios desc';		result := cmp('ios', iob || 'ab', 'SELECT a, b FROM ar_%s WHERE a = ANY (''{5,15,20}'') AND b > 900 ORDER BY a DESC, b DESC'); RETURN NEXT;
	test := 'ab bitmap';		result := cmp('bitmap', bm || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a = ANY (''{1,3}'') AND b = ANY (''' || b100 || ''')'); RETURN NEXT;
	--
	-- Skip-scan shapes (no qual on a, or a range on it): skip scans on 18
	-- and later, whole-index or range scans before
	--
	test := 'b eq';				result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE b = 77'); RETURN NEXT;
	test := 'b eq asc';			result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE b = 999 ORDER BY a, b'); RETURN NEXT;
	test := 'b eq desc';		result := cmp('index', bx || 'ab', 'SELECT a, b FROM ar_%s WHERE b = 0 ORDER BY a DESC, b DESC'); RETURN NEXT;
	test := 'b in';				result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE b IN (5, 500, NULL, 999, 1000)'); RETURN NEXT;
	test := 'b any 100';		result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE b = ANY (''' || b100 || ''')'); RETURN NEXT;
	test := 'a between, b eq';	result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a BETWEEN 3 AND 8 AND b = 321'); RETURN NEXT;
	test := 'a between, b in';	result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a BETWEEN 3 AND 8 AND b IN (321, 0, 17)'); RETURN NEXT;
	test := 'a gt, b lt';		result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE a > 16 AND b < 5'); RETURN NEXT;
	test := 'a lt, b gt desc';	result := cmp('index', bx || 'ab', 'SELECT a, b FROM ar_%s WHERE a < 4 AND b > 995 ORDER BY a DESC, b DESC'); RETURN NEXT;
	test := 'b null';			result := cmp('index', ix || 'ab', 'SELECT id, a, b FROM ar_%s WHERE b IS NULL'); RETURN NEXT;
	test := 'b ios';			result := cmp('ios', io || 'ab', 'SELECT a, b FROM ar_%s WHERE b = ANY (''{1,2,3,998}'')'); RETURN NEXT;
	test := 'b ios count';		result := cmp('ios', io || 'ab', 'SELECT count(*) FROM ar_%s WHERE a >= 10 AND b = 250'); RETURN NEXT;
	test := 'b bitmap';			result := cmp('bitmap', bm || 'ab', 'SELECT id, a, b FROM ar_%s WHERE b IN (5, 6, 7)'); RETURN NEXT;
	-- (x DESC NULLS FIRST, y NULLS FIRST), NULLs in both
	test := 'y eq';				result := cmp('index', ix || 'xy', 'SELECT id, x, y FROM ar_%s WHERE y = 250'); RETURN NEXT;
	test := 'y eq order';		result := cmp('index', ix || 'xy', 'SELECT id, x, y FROM ar_%s WHERE y = 0 ORDER BY x DESC NULLS FIRST, y NULLS FIRST'); RETURN NEXT;
	test := 'y eq backward';	result := cmp('index', bx || 'xy', 'SELECT x, y FROM ar_%s WHERE y = 499 ORDER BY x NULLS LAST, y DESC NULLS LAST'); RETURN NEXT;
	test := 'y in';				result := cmp('index', ix || 'xy', 'SELECT id, x, y FROM ar_%s WHERE y IN (0, 1, 250, 499, 500, NULL)'); RETURN NEXT;
	test := 'y null';			result := cmp('index', ix || 'xy', 'SELECT id, x, y FROM ar_%s WHERE y IS NULL'); RETURN NEXT;
	test := 'x between, y eq';	result := cmp('index', ix || 'xy', 'SELECT id, x, y FROM ar_%s WHERE x BETWEEN 2 AND 5 AND y = 100'); RETURN NEXT;
	test := 'x gt, y lt';		result := cmp('index', ix || 'xy', 'SELECT id, x, y FROM ar_%s WHERE x > 4 AND y < 3'); RETURN NEXT;
	test := 'x lt, y any back';	result := cmp('index', bx || 'xy', 'SELECT x, y FROM ar_%s WHERE x < 3 AND y = ANY (''{7,8,400}'') ORDER BY x NULLS LAST, y DESC NULLS LAST'); RETURN NEXT;
	test := 'x null, y any';	result := cmp('index', ix || 'xy', 'SELECT id, x, y FROM ar_%s WHERE x IS NULL AND y = ANY (''{1,2,3,NULL}'')'); RETURN NEXT;
	test := 'x any, y any';		result := cmp('index', ix || 'xy', 'SELECT id, x, y FROM ar_%s WHERE x = ANY (''{7,0,3,9}'') AND y = ANY (''{1,2,3,499}'')'); RETURN NEXT;
	test := 'x any, y null';	result := cmp('index', ix || 'xy', 'SELECT id, x, y FROM ar_%s WHERE x = ANY (''{6,1}'') AND y IS NULL'); RETURN NEXT;
	test := 'xy ios';			result := cmp('ios', io || 'xy', 'SELECT x, y FROM ar_%s WHERE y = ANY (''{10,20,30}'')'); RETURN NEXT;
	test := 'xy ios backward';	result := cmp('ios', iob || 'xy', 'SELECT x, y FROM ar_%s WHERE x IS NOT NULL AND y = 42 ORDER BY x NULLS LAST, y DESC NULLS LAST'); RETURN NEXT;
	--
	-- Merge joins: the inner side's scan marks its position and goes back
	-- to it for every outer row with the key of the row before.  Both sides
	-- are array scans of the btlayout index, so whichever the planner
	-- makes the inner side restores.  Around k = 5000 the inner side goes
	-- back over many leaf pages.
	--
	test := 'merge';			result := cmp('merge', 'Merge Join(.|\n)*' || ix || 'k(.|\n)*' || ix || 'k',
		'SELECT p.id, q.id FROM ar_%1$s p JOIN ar_%1$s q ON p.k = q.k WHERE p.k = ANY (''' || a100 || ''') AND q.k = ANY (''' || a100 || ''')'); RETURN NEXT;
	test := 'merge hot';		result := cmp('merge', 'Merge Join(.|\n)*' || ix || 'k(.|\n)*' || ix || 'k',
		'SELECT p.id, q.id FROM ar_%1$s p JOIN ar_%1$s q ON p.k = q.k WHERE p.k IN (4999, 5000, 5001) AND q.k IN (4999, 5000, 5001) AND p.id %% 10000 = 3'); RETURN NEXT;
	test := 'merge ios';		result := cmp('merge', 'Merge Join(.|\n)*' || io || 'k(.|\n)*' || io || 'k',
		'SELECT p.k, count(*) FROM ar_%1$s p JOIN ar_%1$s q ON p.k = q.k WHERE p.k = ANY (''' || a1000 || ''') AND q.k = ANY (''' || a1000 || ''') GROUP BY p.k'); RETURN NEXT;
	test := 'merge ab';			result := cmp('merge', 'Merge Join(.|\n)*' || ix || 'ab(.|\n)*' || ix || 'ab',
		'SELECT p.id, q.id FROM ar_%1$s p JOIN ar_%1$s q ON p.a = q.a AND p.b = q.b WHERE p.a = ANY (''{2,4}'') AND q.a = ANY (''{2,4}'') AND p.b = ANY (''' || b100 || ''') AND q.b = ANY (''' || b100 || ''')'); RETURN NEXT;
END $$;

-- The scroll cursors over array scans and skip-scan shapes, compared step
-- by step
CREATE FUNCTION ar_cursors() RETURNS TABLE (test text, result text)
LANGUAGE plpgsql AS $$
DECLARE
	a100 constant text := (SELECT array_agg((g * 8111) % 15000 + 1 ORDER BY g)::text
						   FROM generate_series(1, 100) g);
	a1000 constant text := (SELECT array_agg((g * 7919) % 16000 ORDER BY g)::text
							FROM generate_series(1, 1000) g);
BEGIN
	test := 'any';				result := cursor_cmp('index', 'Index Scan using ar_btlayout_k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a100 || ''') ORDER BY k', 'ar_walk', true); RETURN NEXT;
	test := 'any 1000';			result := cursor_cmp('index', 'Index Scan using ar_btlayout_k', 'SELECT id, k FROM ar_%s WHERE k = ANY (''' || a1000 || ''') ORDER BY k', 'ar_walk', true); RETURN NEXT;
	test := 'any backward';		result := cursor_cmp('index', 'Index Scan Backward using ar_btlayout_k', 'SELECT k FROM ar_%s WHERE k = ANY (''' || a1000 || ''') ORDER BY k DESC', 'ar_walk', true); RETURN NEXT;
	test := 'in hot';			result := cursor_cmp('index', 'Index Scan using ar_btlayout_k', 'SELECT id, k FROM ar_%s WHERE k IN (4999, 5000, 5001, 3) ORDER BY k', 'ar_walk', true); RETURN NEXT;
	test := 'ios any';			result := cursor_cmp('ios', 'Index Only Scan using ar_btlayout_k', 'SELECT k FROM ar_%s WHERE k = ANY (''' || a1000 || ''') ORDER BY k', 'ar_walk', true); RETURN NEXT;
	test := 'ios backward';		result := cursor_cmp('ios', 'Index Only Scan Backward using ar_btlayout_k8', 'SELECT k8 FROM ar_%s WHERE k8 = ANY (''' || a1000 || '''::int4[]) ORDER BY k8 DESC', 'ar_walk', true); RETURN NEXT;
	test := 'text';				result := cursor_cmp('index', 'Index Scan using ar_btlayout_sc', 'SELECT id, sc FROM ar_%s WHERE sc = ANY (ARRAY(SELECT ''v'' || g || repeat(''x'', g %% 5) FROM generate_series(1, 19999, 7) g)) ORDER BY sc', 'ar_walk', true); RETURN NEXT;
	test := 'a any, b any';		result := cursor_cmp('index', 'Index Scan using ar_btlayout_ab', 'SELECT id, a, b FROM ar_%s WHERE a = ANY (''{1,5,9,13}'') AND b = ANY (''' || a100 || ''')', 'ar_walk', true); RETURN NEXT;
	test := 'a any backward';	result := cursor_cmp('index', 'Index Scan Backward using ar_btlayout_ab', 'SELECT a, b FROM ar_%s WHERE a IN (1, 5, 9) AND b > 850 ORDER BY a DESC, b DESC', 'ar_walk', true); RETURN NEXT;
	test := 'b any (skip)';		result := cursor_cmp('index', 'Index Scan using ar_btlayout_ab', 'SELECT id, a, b FROM ar_%s WHERE b = ANY (''{1,100,200,300,400,500,600,700,800,900}'')', 'ar_walk', true); RETURN NEXT;
	test := 'b eq (skip) back';	result := cursor_cmp('ios', 'Index Only Scan Backward using ar_btlayout_ab', 'SELECT a, b FROM ar_%s WHERE a BETWEEN 2 AND 17 AND b >= 990 ORDER BY a DESC, b DESC', 'ar_walk', true); RETURN NEXT;
	test := 'y any (skip)';		result := cursor_cmp('ios', 'Index Only Scan using ar_btlayout_xy', 'SELECT x, y FROM ar_%s WHERE y = ANY (''{0,5,50,499}'') ORDER BY x DESC NULLS FIRST, y NULLS FIRST', 'ar_walk', true); RETURN NEXT;
END $$;

SELECT * FROM ar_suite();
SELECT * FROM ar_cursors();

-- A scroll cursor by hand, printed: an IN list over the hot key, crossing
-- its leaf pages forward, then back, on btree and btlayout side by side
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
BEGIN;
DECLARE cb SCROLL CURSOR FOR SELECT k FROM ar_btree WHERE k IN (14999, 4999, 5000, 5001, 0) ORDER BY k;
DECLARE cl SCROLL CURSOR FOR SELECT k FROM ar_btlayout WHERE k IN (14999, 4999, 5000, 5001, 0) ORDER BY k;
FETCH 3 FROM cb;
FETCH 3 FROM cl;
MOVE FORWARD 5945 IN cb;
MOVE FORWARD 5945 IN cl;
FETCH 5 FROM cb;
FETCH 5 FROM cl;
FETCH BACKWARD 4 FROM cb;
FETCH BACKWARD 4 FROM cl;
FETCH ABSOLUTE 6 FROM cb;
FETCH ABSOLUTE 6 FROM cl;
FETCH RELATIVE -2 FROM cb;
FETCH RELATIVE -2 FROM cl;
MOVE LAST IN cb;
MOVE LAST IN cl;
FETCH BACKWARD 3 FROM cb;
FETCH BACKWARD 3 FROM cl;
COMMIT;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;

--
-- Change both tables the same way: inserts into the middle of the key
-- ranges and of the hot key's posting lists (page and posting-list
-- splits: pages with items inserted since their layout, and pages out of
-- it), deletes of ranges and of scattered rows, non-HOT updates.  Then
-- before VACUUM (dead tuples in the indexes), after a relayout into other
-- layouts, and after VACUUM.
--
SELECT both_am($$
INSERT INTO ar_%1$s
SELECT 100000 + i,
	   CASE WHEN i %% 50 = 0 THEN NULL WHEN i %% 4 = 0 THEN 5000 ELSE 6000 + (i * 13) %% 3000 END,
	   CASE WHEN i %% 9 = 0 THEN 4294967296 + i ELSE (i * 7) %% 2000 END,
	   'v' || (5000 + i * 7 %% 3000) || repeat('x', (5000 + i * 7 %% 3000) %% 5),
	   'v' || (5000 + i * 7 %% 3000) || repeat('x', (5000 + i * 7 %% 3000) %% 5),
	   i %% 20,
	   CASE WHEN i %% 37 = 0 THEN NULL ELSE 400 + i %% 200 END,
	   CASE WHEN i %% 13 = 0 THEN NULL ELSE i %% 8 END,
	   CASE WHEN i %% 31 = 0 THEN NULL ELSE 240 + i %% 20 END
FROM generate_series(1, 30000) i
$$);
SELECT both_am('DELETE FROM ar_%s WHERE k BETWEEN 12000 AND 12600');
SELECT both_am('DELETE FROM ar_%s WHERE id %% 7 = 0 AND k < 3000');
SELECT both_am('DELETE FROM ar_%s WHERE k = 5000 AND id %% 5 = 1');
SELECT both_am('DELETE FROM ar_%s WHERE a = 9 AND b < 300');
SELECT both_am('UPDATE ar_%s SET k = k + 1, b = b + 1, y = y - 1 WHERE id %% 11 = 0 AND k BETWEEN 100 AND 400');
SELECT ar_heaps_identical();

SELECT * FROM suite_summary('ar_suite');
SELECT * FROM ar_cursors() WHERE result !~ 'same$';

-- other layouts, laid out again
ALTER INDEX ar_btlayout_k SET (layout = veb);
ALTER INDEX ar_btlayout_k8 SET (layout = blocked);
ALTER INDEX ar_btlayout_s SET (layout = eytzinger);
ALTER INDEX ar_btlayout_sc SET (layout = none);
ALTER INDEX ar_btlayout_ab SET (layout = btorder);
ALTER INDEX ar_btlayout_xy SET (layout = veb);
SELECT c.relname, btlayout_relayout(c.oid) > 0 AS relaid
FROM pg_class c WHERE c.relname LIKE 'ar\_btlayout\_%' AND c.relkind = 'i' ORDER BY 1;
SELECT * FROM suite_summary('ar_suite');

VACUUM ANALYZE ar_btree;
VACUUM ANALYZE ar_btlayout;
SELECT * FROM suite_summary('ar_suite');
SELECT * FROM ar_cursors() WHERE result !~ 'same$';

-- and one more round of layouts
ALTER INDEX ar_btlayout_k SET (layout = btorder);
ALTER INDEX ar_btlayout_k8 SET (layout = eytzinger);
ALTER INDEX ar_btlayout_s SET (layout = none);
ALTER INDEX ar_btlayout_sc SET (layout = veb);
ALTER INDEX ar_btlayout_ab SET (layout = blocked);
ALTER INDEX ar_btlayout_xy SET (layout = eytzinger);
SELECT count(*) AS relaid FROM pg_class c
WHERE c.relname LIKE 'ar\_btlayout\_%' AND c.relkind = 'i' AND btlayout_relayout(c.oid) > 0;
SELECT * FROM suite_summary('ar_suite');
SELECT btlayout_check(c.oid, true) FROM pg_class c
WHERE c.relname LIKE 'ar\_btlayout\_%' AND c.relkind = 'i' ORDER BY c.relname;

--
-- btlayout's own search served the array scans.  btlayout_search_stats()
-- counts this backend's in-page searches by btlayout's search (walks of
-- the layout and searches through line pointers): every descent of a scan
-- through btlayout's search ends with one on its leaf, so the sum grows by
-- at least one per primitive scan, whatever the copy of the upper levels
-- did above the leaf.  A scan handed to nbtree's own code adds nothing.
--
-- ar_wide has the keys 1..100000 once each; a leaf holds at most 407 int4
-- keys, so the keys 1000, 2000, .., 100000 are each on a leaf of their own
-- and no two on neighbouring leaves: a scan of all of them touches 100
-- leaf pages, and must descend to each of them anew, on every version (15
-- and 16 position the scan for each element, 17 and later start a new
-- primitive scan when the next element is beyond the page's high key).
-- So each of these scans grows the sum by at least 100.
--
CREATE TABLE ar_wide (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO ar_wide SELECT g, g FROM generate_series(1, 100000) g;
CREATE INDEX ar_wide_k ON ar_wide USING btlayout (k) WITH (layout = eytzinger);
VACUUM ANALYZE ar_wide;
SELECT leaf_pages >= 100000 / 407 AS enough_leaves FROM btlayout_stats('ar_wide_k');

CREATE FUNCTION ar_searches() RETURNS bigint LANGUAGE sql AS $$
	SELECT layout_searches + ordinary_searches FROM btlayout_search_stats()
$$;
-- The growth of ar_searches() over query q, forced onto plans by scan_mode(mode)
-- and checked against pattern; and the query's result (a count)
CREATE FUNCTION ar_searched(mode text, pattern text, q text,
							OUT searches bigint, OUT answer bigint)
LANGUAGE plpgsql AS $$
DECLARE
	plan text;
	before bigint;
BEGIN
	PERFORM scan_mode(mode);
	plan := plan_of(q);
	IF plan !~ pattern THEN
		RAISE EXCEPTION 'plan without %: %', pattern, plan;
	END IF;
	before := ar_searches();
	EXECUTE q INTO answer;
	searches := ar_searches() - before;
END $$;

SELECT '{' || string_agg((g * 1000)::text, ',' ORDER BY (g * 37) % 100) || '}' AS wide100
FROM generate_series(1, 100) g \gset
SELECT answer, searches >= 100 AS searched_each_leaf FROM ar_searched('index', 'Index Scan using ar_wide_k',
	$$SELECT sum(v) FROM ar_wide WHERE k IN ($$ || trim(:'wide100', '{}') || ')');
SELECT answer, searches >= 100 AS searched_each_leaf FROM ar_searched('index', 'Index Scan Backward using ar_wide_k',
	$$SELECT sum(v) FROM (SELECT v FROM ar_wide WHERE k = ANY ('$$ || :'wide100' || $$') ORDER BY k DESC) s$$);
SELECT answer, searches >= 100 AS searched_each_leaf FROM ar_searched('ios', 'Index Only Scan using ar_wide_k',
	$$SELECT sum(k) FROM ar_wide WHERE k = ANY ('$$ || :'wide100' || $$')$$);
SELECT answer, searches >= 100 AS searched_each_leaf FROM ar_searched('bitmap', 'Bitmap Index Scan on ar_wide_k',
	$$SELECT sum(v) FROM ar_wide WHERE k = ANY ('$$ || :'wide100' || $$')$$);
-- the same on the twins' indexes: several arrays, arrays with
-- inequalities, and a skip-scan shape (on 15-17 a scan of the range of a,
-- which starts with a descent too)
SELECT answer, searches > 0 AS searched FROM ar_searched('index', 'Index Scan using ar_btlayout_ab',
	$$SELECT count(*) FROM ar_btlayout WHERE a = ANY ('{1,5,9}') AND b IN (7, 70, 700)$$);
SELECT answer, searches > 0 AS searched FROM ar_searched('index', 'Index Scan using ar_btlayout_ab',
	$$SELECT count(*) FROM ar_btlayout WHERE a BETWEEN 3 AND 8 AND b = 321$$);
SELECT answer, searches > 0 AS searched FROM ar_searched('ios', 'Index Only Scan using ar_btlayout_xy',
	$$SELECT count(*) FROM ar_btlayout WHERE x BETWEEN 2 AND 5 AND y IN (100, 241)$$);
SELECT answer, searches > 0 AS searched FROM ar_searched('index', 'Index Scan using ar_btlayout_s',
	$$SELECT count(*) FROM ar_btlayout WHERE s IN ('v14', 'v5001x', 'v7xx')$$);
-- and none on the btree twin, whose scans are nbtree's alone
SELECT answer, searches AS searched FROM ar_searched('index', 'Index Scan using ar_btree_k',
	$$SELECT count(*) FROM ar_btree WHERE k IN (3, 5000, 14999)$$);

RESET search_path;
DROP SCHEMA btl_arrays CASCADE;
\if :create_btlayout
DROP EXTENSION btlayout;
\endif
