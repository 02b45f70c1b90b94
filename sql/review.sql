--
-- Checks a code review asked for (issue 48, item 6), each against a core
-- btree twin: a table with the same rows, inserted in the same order (so
-- the same heap TIDs, and duplicates in the same order), indexed by core
-- btree.  Every lookup is made on both and the answers compared; what is
-- printed is 'same' (or how many answers differ), never the answers, so
-- that the output is that of every server version.
--
-- (a) A table created in the transaction and truncated twice in it, with
--     lookups between: a TRUNCATE of a table created in the same
--     transaction empties its files in place, so the index keeps its OID
--     and its relation file (its identity, under which this backend keeps
--     a copy of its upper levels, recent buffers and relayout notes) while
--     its pages hold other keys.
-- (b) An ON COMMIT DELETE ROWS temporary table, emptied (in place, again)
--     at every commit, filled and probed in each transaction.
-- (c) Backward < and <= scans, with the copy of the upper levels on, over
--     duplicates that span leaf pages, so that high keys are truncated
--     right at the key a scan starts from (17 changed how nbtree starts
--     such scans; btlayout follows each version's rule).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET btlayout.upper_copy = '4MB';
SET btlayout.lookup_relayout = on;

-- The searches btlayout made in this backend so far, and the lookups that
-- went from the copy of the upper levels to their leaf
CREATE FUNCTION review_searches() RETURNS bigint LANGUAGE sql AS $$
  SELECT layout_searches + ordinary_searches FROM btlayout_search_stats()
$$;
CREATE FUNCTION review_copy_hits() RETURNS bigint LANGUAGE sql AS $$
  SELECT upper_copy_hits FROM btlayout_search_stats()
$$;

-- Every shape of lookup (a query on %1$I, table a or b, at the probe g)
-- at every probe from lo to hi by step, on a (btlayout) and b (its btree
-- twin): 'same' if every answer is, else how many differ (each one said in
-- a NOTICE); 'not searched' if btlayout made no search (a plan that left
-- the index out would prove nothing).  Each shape runs as one query, a
-- nested loop whose inner index scans are rescanned at every probe.
CREATE FUNCTION review_wrong(shapes text[], a text, b text,
                             lo int, hi int, step int)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  shape text;
  n int;
  wrong int := 0;
  searches bigint := review_searches();
BEGIN
  FOREACH shape IN ARRAY shapes LOOP
    EXECUTE format('SELECT count(*) FROM generate_series($1, $2, $3) g
                    WHERE (%s) IS DISTINCT FROM (%s)',
                   format(shape, a), format(shape, b))
      INTO n USING lo, hi, step;
    IF n > 0 THEN
      RAISE NOTICE '% probes differ: %', n, format(shape, a);
      wrong := wrong + n;
    END IF;
  END LOOP;
  IF wrong > 0 THEN
    RETURN wrong || ' differ';
  ELSIF review_searches() = searches THEN
    RETURN 'not searched';
  END IF;
  RETURN 'same';
END
$$;

-- The lookups of (a) and (b), on tables (k int4, v int4) indexed on k:
-- equality (with its rows' payloads), >= and > forward, < and <= backward,
-- a backward range, an array
CREATE FUNCTION review_lookups(a text, b text, lo int, hi int, step int)
RETURNS text LANGUAGE sql AS $$
  SELECT review_wrong(ARRAY[
    'SELECT array_agg(v) FROM (SELECT v FROM %1$I WHERE k = g) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k >= g ORDER BY k LIMIT 3) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k > g ORDER BY k LIMIT 3) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k < g ORDER BY k DESC LIMIT 3) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k <= g ORDER BY k DESC LIMIT 3) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k BETWEEN g - 4 AND g + 4 ORDER BY k DESC) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k = ANY (ARRAY[g, g + 1, g + 333]) ORDER BY k) s'],
    a, b, lo, hi, step)
$$;

--
-- (a) Created in the transaction, truncated twice in it
--
BEGIN;
CREATE TABLE review_ta (k int4, v int4) WITH (autovacuum_enabled = off);
CREATE TABLE review_tb (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO review_ta SELECT g, g FROM generate_series(1, 20000) g;
INSERT INTO review_tb SELECT g, g FROM generate_series(1, 20000) g;
CREATE INDEX review_ta_k ON review_ta USING btlayout (k);
CREATE INDEX review_tb_k ON review_tb USING btree (k);
SELECT pg_relation_filenode('review_ta_k') AS ta_file \gset
-- twice: the first lookups copy the upper levels, the next go from the copy
SELECT review_lookups('review_ta', 'review_tb', -3, 20003, 97) AS built;
SELECT review_copy_hits() AS hits \gset
SELECT review_lookups('review_ta', 'review_tb', -3, 20003, 89) AS built_again;
SELECT review_copy_hits() > :hits AS went_from_copy;
-- other keys, inserted into the emptied index (its pages split anew)
TRUNCATE review_ta, review_tb;
SELECT pg_relation_filenode('review_ta_k') = :ta_file AS same_file;
INSERT INTO review_ta SELECT 3 * g + 1, g FROM generate_series(1, 12000) g;
INSERT INTO review_tb SELECT 3 * g + 1, g FROM generate_series(1, 12000) g;
SELECT review_lookups('review_ta', 'review_tb', -3, 40003, 97) AS truncated;
SELECT review_lookups('review_ta', 'review_tb', -3, 40003, 89) AS truncated_again;
-- and again: duplicates, descending, in a narrower range
TRUNCATE review_ta, review_tb;
SELECT pg_relation_filenode('review_ta_k') = :ta_file AS same_file;
INSERT INTO review_ta SELECT (20000 - g) / 7, g FROM generate_series(1, 20000) g;
INSERT INTO review_tb SELECT (20000 - g) / 7, g FROM generate_series(1, 20000) g;
SELECT review_lookups('review_ta', 'review_tb', -3, 3003, 13) AS truncated_twice;
SELECT review_lookups('review_ta', 'review_tb', -3, 3003, 11) AS truncated_twice_again;
COMMIT;
SELECT review_lookups('review_ta', 'review_tb', -3, 40003, 97) AS committed;
INSERT INTO review_ta SELECT g, -g FROM generate_series(2000, 30000, 3) g;
INSERT INTO review_tb SELECT g, -g FROM generate_series(2000, 30000, 3) g;
SELECT review_lookups('review_ta', 'review_tb', -3, 40003, 89) AS committed_inserted;
SELECT btlayout_check('review_ta_k', true);
DROP TABLE review_ta, review_tb;

--
-- (b) ON COMMIT DELETE ROWS
--
CREATE TEMP TABLE review_da (k int4, v int4) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE review_db (k int4, v int4) ON COMMIT DELETE ROWS;
CREATE INDEX review_da_k ON review_da USING btlayout (k);
CREATE INDEX review_db_k ON review_db USING btree (k);
SELECT pg_relation_filenode('review_da_k') AS da_file \gset
SELECT review_copy_hits() AS hits \gset
BEGIN;
INSERT INTO review_da SELECT g, g FROM generate_series(1, 20000) g;
INSERT INTO review_db SELECT g, g FROM generate_series(1, 20000) g;
SELECT review_lookups('review_da', 'review_db', -3, 20003, 97) AS first;
SELECT review_lookups('review_da', 'review_db', -3, 20003, 89) AS first_again;
COMMIT;
SELECT count(*) AS emptied FROM review_da;
BEGIN;
INSERT INTO review_da SELECT 3 * g + 1, g FROM generate_series(1, 12000) g;
INSERT INTO review_db SELECT 3 * g + 1, g FROM generate_series(1, 12000) g;
SELECT review_lookups('review_da', 'review_db', -3, 40003, 97) AS second;
COMMIT;
BEGIN;
INSERT INTO review_da SELECT (20000 - g) / 7, g FROM generate_series(1, 20000) g;
INSERT INTO review_db SELECT (20000 - g) / 7, g FROM generate_series(1, 20000) g;
SELECT review_lookups('review_da', 'review_db', -3, 3003, 13) AS third;
COMMIT;
BEGIN;
-- fewer rows than before: the copy names pages beyond the index's end
INSERT INTO review_da SELECT 40000 - g, g FROM generate_series(1, 3000) g;
INSERT INTO review_db SELECT 40000 - g, g FROM generate_series(1, 3000) g;
SELECT review_lookups('review_da', 'review_db', 36000, 40003, 7) AS fourth;
SELECT review_lookups('review_da', 'review_db', -3, 40003, 97) AS fourth_wide;
COMMIT;
SELECT pg_relation_filenode('review_da_k') = :da_file AS same_file,
       review_copy_hits() > :hits AS went_from_copy;
SELECT count(*) AS emptied FROM review_da;
-- an empty index has no page to search: none is searched, nothing found
SELECT review_lookups('review_da', 'review_db', -3, 40003, 997) AS empty;
BEGIN;
-- one row: the root is the only leaf
INSERT INTO review_da VALUES (20000, 1);
INSERT INTO review_db VALUES (20000, 1);
SELECT review_lookups('review_da', 'review_db', 19000, 21000, 7) AS one_row;
COMMIT;
DROP TABLE review_da, review_db;

--
-- (c) Backward < and <= over duplicates at truncated high keys
--
-- k runs through 40 values, 700 rows each, v numbers the rows: an index
-- on (k, v) has leaves of fewer than 300 items, so each run of k spans pages.
-- A high key inside a run keeps v (a 24-byte pivot: v is an int8); one
-- between two runs is truncated to k alone (16 bytes: v is minus
-- infinity).  A scan of k < X, whose key is X alone, starts at such a
-- high key X: in 15 and 16 its key sorts after it, so it starts on the
-- page right of it and steps back across it; from 17 on a backward scan's
-- key equals it, so the descent lands on the page left of it (compat.h),
-- and the copy of the upper levels must send it there, and the leaf prove
-- it, by the same rule.  review_cba is
-- loaded and then indexed (the build ends pages wherever they are full:
-- inside runs); review_cga is filled in a scattered order into its index,
-- whose splits choose boundaries that truncate where they can.  review_cea
-- is the one-column index of k: posting lists, and high keys that keep a
-- heap TID inside runs (24 bytes) and lose it between runs (16 bytes).
CREATE TABLE review_cba (k int4, v int8) WITH (autovacuum_enabled = off);
CREATE TABLE review_cbb (k int4, v int8) WITH (autovacuum_enabled = off);
INSERT INTO review_cba SELECT g / 700, g FROM generate_series(0, 27999) g;
INSERT INTO review_cbb SELECT g / 700, g FROM generate_series(0, 27999) g;
CREATE INDEX review_cba_kv ON review_cba USING btlayout (k, v);
CREATE INDEX review_cbb_kv ON review_cbb USING btree (k, v);
CREATE TABLE review_cga (k int4, v int8) WITH (autovacuum_enabled = off);
CREATE TABLE review_cgb (k int4, v int8) WITH (autovacuum_enabled = off);
CREATE INDEX review_cga_kv ON review_cga USING btlayout (k, v);
CREATE INDEX review_cgb_kv ON review_cgb USING btree (k, v);
INSERT INTO review_cga SELECT g / 700, g FROM generate_series(0, 27999) g
  ORDER BY (g * 7919) % 28000;
INSERT INTO review_cgb SELECT g / 700, g FROM generate_series(0, 27999) g
  ORDER BY (g * 7919) % 28000;
CREATE TABLE review_cea (k int4, v int4) WITH (autovacuum_enabled = off);
CREATE TABLE review_ceb (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO review_cea SELECT g / 700, g FROM generate_series(0, 27999) g;
INSERT INTO review_ceb SELECT g / 700, g FROM generate_series(0, 27999) g;
CREATE INDEX review_cea_k ON review_cea USING btlayout (k);
CREATE INDEX review_ceb_k ON review_ceb USING btree (k);
INSERT INTO review_cea SELECT g / 700, g FROM generate_series(0, 27999, 3) g;
INSERT INTO review_ceb SELECT g / 700, g FROM generate_series(0, 27999, 3) g;

-- At every X from below the first run to past the last (each run's first
-- value, last value and its neighbours are X - 1, X, X + 1 of the
-- boundaries), backward: the first rows, and enough rows to cross pages
-- and runs (a digest); an equality backward (a run's end is at a
-- truncated high key); forward > and >= for symmetry
CREATE FUNCTION review_backward(a text, b text) RETURNS text
LANGUAGE sql AS $$
  SELECT review_wrong(ARRAY[
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k < g ORDER BY k DESC, v DESC LIMIT 3) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k <= g ORDER BY k DESC, v DESC LIMIT 3) s',
    'SELECT md5(string_agg(k || '':'' || v, '','')) FROM (SELECT k, v FROM %1$I WHERE k < g ORDER BY k DESC, v DESC LIMIT 1000) s',
    'SELECT md5(string_agg(k || '':'' || v, '','')) FROM (SELECT k, v FROM %1$I WHERE k <= g ORDER BY k DESC, v DESC LIMIT 1000) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k = g ORDER BY k DESC, v DESC LIMIT 3) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k > g ORDER BY k, v LIMIT 3) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k >= g ORDER BY k, v LIMIT 3) s'],
    a, b, -2, 41, 1)
$$;
-- (the one-column index orders duplicates by heap TID, as btree does)
CREATE FUNCTION review_backward_one(a text, b text) RETURNS text
LANGUAGE sql AS $$
  SELECT review_wrong(ARRAY[
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k < g ORDER BY k DESC LIMIT 3) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k <= g ORDER BY k DESC LIMIT 3) s',
    'SELECT md5(string_agg(k || '':'' || v, '','')) FROM (SELECT k, v FROM %1$I WHERE k < g ORDER BY k DESC LIMIT 1000) s',
    'SELECT md5(string_agg(k || '':'' || v, '','')) FROM (SELECT k, v FROM %1$I WHERE k <= g ORDER BY k DESC LIMIT 1000) s',
    'SELECT array_agg(k || '':'' || v) FROM (SELECT k, v FROM %1$I WHERE k = g ORDER BY k DESC LIMIT 3) s'],
    a, b, -2, 41, 1)
$$;

-- twice each: the first lookups copy the upper levels, the next go from
-- the copy
SELECT review_copy_hits() AS hits \gset
SELECT review_backward('review_cba', 'review_cbb') AS built,
       review_backward('review_cba', 'review_cbb') AS built_from_copy;
SELECT review_backward('review_cga', 'review_cgb') AS grown,
       review_backward('review_cga', 'review_cgb') AS grown_from_copy;
SELECT review_backward_one('review_cea', 'review_ceb') AS one_column,
       review_backward_one('review_cea', 'review_ceb') AS one_column_from_copy;
SELECT review_copy_hits() > :hits AS went_from_copy;
-- The high keys are there: of leaves that end inside a run, and of leaves
-- that end where a run does (the build ends its pages where they are full,
-- which need not be at a run's end)
CREATE FUNCTION review_high_keys(index regclass, len int) RETURNS bigint
LANGUAGE sql AS $$
  SELECT count(*)
  FROM generate_series(1, pg_relation_size(index) / current_setting('block_size')::int - 1) b,
       LATERAL btlayout_page(index, b) p
  WHERE p.kind = 'leaf' AND p.role = 'high key' AND p.lp_len = len
$$;
SELECT review_high_keys('review_cba_kv', 24) > 0 AS built_inside_runs,
       review_high_keys('review_cga_kv', 24) > 0 AS grown_inside_runs,
       review_high_keys('review_cga_kv', 16) > 0 AS grown_at_run_ends,
       review_high_keys('review_cea_k', 24) > 0 AS one_column_inside_runs,
       review_high_keys('review_cea_k', 16) > 0 AS one_column_at_run_ends;
SELECT btlayout_check('review_cba_kv', true), btlayout_check('review_cga_kv', true),
       btlayout_check('review_cea_k', true);
DROP TABLE review_cba, review_cbb, review_cga, review_cgb, review_cea, review_ceb;

DROP FUNCTION review_backward(text, text), review_backward_one(text, text),
  review_lookups(text, text, int, int, int),
  review_wrong(text[], text, text, int, int, int),
  review_searches(), review_copy_hits(), review_high_keys(regclass, int);
