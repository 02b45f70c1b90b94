--
-- The roles a unique B-tree plays for the server beyond lookups: the
-- arbiter of INSERT ... ON CONFLICT, the index a foreign key references, a
-- unique index of a partitioned table, the key of REFRESH MATERIALIZED
-- VIEW CONCURRENTLY, and the planner's ordering and uniqueness knowledge
-- (merge joins, join removal, the actual range of a column, the tree's
-- height in costs).  PostgreSQL 15 to 17 insist on btree for these;
-- PostgreSQL 18 finds an index's operators through its access method's
-- compare-type translation, which btlayout inherits from nbtree.
--
-- Expected output: roles.out on 15-17 (a clear error each, btlayout's own
-- for ON CONFLICT), roles_1.out on 18 and later (each role served, with
-- its results checked).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT current_setting('server_version_num')::int >= 180000 AS translates_compare_types;

--
-- INSERT ... ON CONFLICT, with a unique btlayout index as the arbiter and
-- as a bystander
--
CREATE TABLE up (k int, v int);
CREATE UNIQUE INDEX up_k ON up USING btlayout (k);
INSERT INTO up VALUES (1, 10), (2, 20);
INSERT INTO up VALUES (1, 11) ON CONFLICT (k) DO NOTHING;
\echo :SQLSTATE
INSERT INTO up VALUES (2, 21), (3, 30) ON CONFLICT DO NOTHING;
\echo :SQLSTATE
INSERT INTO up VALUES (1, 5), (4, 40) ON CONFLICT (k) DO UPDATE SET v = up.v + excluded.v;
\echo :SQLSTATE
WITH ins AS (INSERT INTO up VALUES (4, 1), (5, 50) ON CONFLICT (k) DO NOTHING RETURNING k)
SELECT * FROM ins;
-- a btree arbiter, the btlayout index a bystander that still checks its key
CREATE UNIQUE INDEX up_v ON up USING btree (v);
INSERT INTO up VALUES (6, 20) ON CONFLICT (v) DO NOTHING;
\echo :SQLSTATE
INSERT INTO up VALUES (1, 99) ON CONFLICT (v) DO NOTHING;
\echo :SQLSTATE
SELECT * FROM up ORDER BY k;
-- a table whose btlayout indexes are not unique is served on every version
CREATE TABLE upsert (k int UNIQUE, v int);
CREATE INDEX upsert_v ON upsert USING btlayout (v);
INSERT INTO upsert VALUES (1, 1) ON CONFLICT (k) DO UPDATE SET v = upsert.v + 1;
INSERT INTO upsert VALUES (1, 1) ON CONFLICT (k) DO UPDATE SET v = upsert.v + 1;
SELECT * FROM upsert;

--
-- A foreign key referencing a unique btlayout index, with cascades
--
CREATE TABLE parent (id int NOT NULL, name text);
CREATE UNIQUE INDEX parent_id ON parent USING btlayout (id);
INSERT INTO parent SELECT g, 'p' || g FROM generate_series(1, 100) g;
CREATE TABLE child (pid int, note text);
ALTER TABLE child ADD CONSTRAINT child_pid FOREIGN KEY (pid) REFERENCES parent (id)
	ON DELETE CASCADE ON UPDATE CASCADE;
\echo :SQLSTATE
INSERT INTO child VALUES (1, 'a'), (2, 'b'), (2, 'c'), (3, 'd');
INSERT INTO child VALUES (1000, 'no parent');
\echo :SQLSTATE
DELETE FROM parent WHERE id = 2;
UPDATE parent SET id = 101 WHERE id = 1;
SELECT * FROM child ORDER BY pid, note;
SELECT conname, conindid::regclass FROM pg_constraint WHERE conrelid = 'child'::regclass;

--
-- A unique btlayout index on a partitioned table
--
CREATE TABLE part (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE part_1 PARTITION OF part FOR VALUES FROM (0) TO (1000);
CREATE TABLE part_2 PARTITION OF part FOR VALUES FROM (1000) TO (2000);
CREATE UNIQUE INDEX part_k ON part USING btlayout (k);
\echo :SQLSTATE
INSERT INTO part SELECT g, 'v' || g FROM generate_series(0, 1999, 7) g;
INSERT INTO part VALUES (7, 'again');
\echo :SQLSTATE
INSERT INTO part VALUES (7, 'again') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
SELECT c.relname, am.amname, i.indisunique
FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
JOIN pg_index i ON i.indexrelid = c.oid JOIN pg_am am ON am.oid = c.relam
WHERE h.inhparent = 'part_k'::regclass ORDER BY 1;
SELECT * FROM part WHERE k IN (7, 1001, 1995) ORDER BY k;

--
-- REFRESH MATERIALIZED VIEW CONCURRENTLY
--
CREATE TABLE mv_src (k int, v int);
INSERT INTO mv_src SELECT g, g FROM generate_series(1, 50) g;
CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM mv_src;
CREATE UNIQUE INDEX mv_k ON mv USING btlayout (k);
UPDATE mv_src SET v = v + 1000 WHERE k % 10 = 0;
DELETE FROM mv_src WHERE k = 3;
INSERT INTO mv_src VALUES (51, 51);
REFRESH MATERIALIZED VIEW CONCURRENTLY mv;
\echo :SQLSTATE
SELECT count(*), sum(v) FROM mv;
SELECT count(*), sum(v) FROM mv_src;

--
-- The planner: merge joins ordered by btlayout indexes, a join removed by
-- a unique btlayout index, the actual range of a column, tree height
--
CREATE TABLE pa (k int NOT NULL, pad text);
CREATE TABLE pb (k int NOT NULL, pad text);
CREATE TABLE pc (k int NOT NULL, pad text);
INSERT INTO pa SELECT g, 'a' FROM generate_series(1, 20000) g;
INSERT INTO pb SELECT g, 'b' FROM generate_series(1, 20000) g;
INSERT INTO pc SELECT g, 'c' FROM generate_series(1, 20000) g;
CREATE UNIQUE INDEX pa_k ON pa USING btlayout (k);
CREATE UNIQUE INDEX pb_k ON pb USING btlayout (k);
CREATE UNIQUE INDEX pc_k ON pc USING btree (k);
VACUUM ANALYZE pa, pb, pc;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_sort = off;
-- a merge join of two btlayout indexes, with no sort
EXPLAIN (COSTS OFF) SELECT pa.k FROM pa JOIN pb USING (k) WHERE pa.k < 100;
SELECT count(*), sum(pa.k) FROM pa JOIN pb USING (k) WHERE pa.k < 100;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_sort;
-- a LEFT JOIN to a unique btlayout index that no output needs is removed
EXPLAIN (COSTS OFF) SELECT pa.k FROM pa LEFT JOIN pb ON pb.k = pa.k WHERE pa.k < 10;
-- rows past the statistics' range: estimated from the index's actual
-- range, as with btree (pc), or from the histogram's end
INSERT INTO pb SELECT g, 'b' FROM generate_series(20001, 30000) g;
INSERT INTO pc SELECT g, 'c' FROM generate_series(20001, 30000) g;
CREATE FUNCTION estimate(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
	RETURN (plan->0->'Plan'->>'Plan Rows')::int;
END $$;
SELECT estimate('SELECT * FROM pb WHERE k > 20000') =
       estimate('SELECT * FROM pc WHERE k > 20000') AS estimated_as_btree;
-- the same cost as btree's for the same lookup: the tree height is known
CREATE TABLE pd (k int NOT NULL, pad text);
INSERT INTO pd SELECT * FROM pc;
CREATE UNIQUE INDEX pd_k ON pd USING btlayout (k);
VACUUM ANALYZE pc, pd;
CREATE FUNCTION total_cost(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
	RETURN (plan->0->'Plan'->>'Total Cost')::float8;
END $$;
SELECT total_cost('SELECT * FROM pd WHERE k = 42') =
       total_cost('SELECT * FROM pc WHERE k = 42') AS costed_as_btree;

-- EXPLAIN ANALYZE's "Index Searches" (18) counts btlayout's descents as
-- nbtree's: one for a probe or a range, one per primitive scan of an IN
-- list (nbtree's own, on 18), as for btree (before 18: no such count)
CREATE FUNCTION index_searches(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
		IF line ~ 'Index Searches: ' THEN
			RETURN substring(line FROM 'Index Searches: (\d+)')::int;
		END IF;
	END LOOP;
	RETURN NULL;
END $$;
SELECT q, index_searches(format(q, 'pd')) AS searches,
       index_searches(format(q, 'pd')) IS NOT DISTINCT FROM index_searches(format(q, 'pc')) AS as_btree
FROM unnest(ARRAY['SELECT k FROM %s WHERE k = 42',
                  'SELECT k FROM %s WHERE k BETWEEN 100 AND 20000',
                  'SELECT k FROM %s WHERE k = ANY (''{5,500,5000,25000}'')',
                  'SELECT k FROM %s WHERE k > 29990 ORDER BY k DESC']) q;

--
-- INSERT ... ON CONFLICT without a conflict target in a session that has
-- not loaded btlayout yet: before 18, nothing loads the library before the
-- executor, and the server's own internal error comes first (see
-- src/conflict.c; session_preload_libraries avoids it, and so does
-- shared_preload_libraries, as in scripts/test.sh's second pass, whose
-- output on 15-17 is roles_2.out); 18 inserts
--
\c
INSERT INTO up VALUES (7, 70) ON CONFLICT DO NOTHING;
\echo :SQLSTATE
INSERT INTO up VALUES (7, 70) ON CONFLICT DO NOTHING;
\echo :SQLSTATE
SELECT count(*) FROM up;

DROP TABLE up, upsert, child, parent, part, mv_src, pa, pb, pc, pd CASCADE;
DROP FUNCTION estimate(text), total_cost(text), index_searches(text);
