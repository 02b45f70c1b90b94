--
-- btlayout_check(): clean indexes of many shapes pass, with and without
-- heapallindexed; bad arguments and missing privileges are refused.
-- Corrupt indexes are tested in t/005_check_corruption.pl.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

-- int4 with duplicates (posting lists), text, multi-column DESC NULLS
-- FIRST with INCLUDE, unique, expression and partial indexes
CREATE TABLE chk (id int, k int, v text, w int);
INSERT INTO chk
SELECT i, i % 500,
       CASE WHEN i % 97 = 0 THEN NULL ELSE md5(i::text) || repeat('x', i % 40) END,
       i * 3
FROM generate_series(1, 30000) i;
CREATE INDEX chk_k ON chk USING btlayout (k);
CREATE INDEX chk_v ON chk USING btlayout (v);
CREATE INDEX chk_multi ON chk USING btlayout (k DESC NULLS FIRST, v) INCLUDE (w);
CREATE UNIQUE INDEX chk_id ON chk USING btlayout (id);
CREATE INDEX chk_expr ON chk USING btlayout ((k % 7), lower(v)) WHERE id % 3 = 0;
CREATE INDEX chk_nodedup ON chk USING btlayout (k) WITH (deduplicate_items = off);
SELECT btlayout_check('chk_k');
SELECT btlayout_check('chk_k', heapallindexed => true);
SELECT btlayout_check('chk_v', true);
SELECT btlayout_check('chk_multi', true);
SELECT btlayout_check('chk_id', true);
SELECT btlayout_check('chk_expr', true);
SELECT btlayout_check('chk_nodedup', true);

-- Every layout
CREATE INDEX chk_eytzinger ON chk USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX chk_veb ON chk USING btlayout (v) WITH (layout = veb);
CREATE INDEX chk_btorder ON chk USING btlayout (id) WITH (layout = btorder);
CREATE INDEX chk_blocked ON chk USING btlayout (k, v) WITH (layout = blocked);
SELECT i AS index, btlayout_check(i::regclass, true) AS result
FROM unnest(ARRAY['chk_eytzinger', 'chk_veb', 'chk_btorder', 'chk_blocked']) i;

-- After inserts that split pages, deletes, page deletion by VACUUM, and
-- relayout
INSERT INTO chk
SELECT 30000 + i, (i * 7919) % 800, md5((i * 31)::text), i
FROM generate_series(1, 20000) i;
DELETE FROM chk WHERE id BETWEEN 2000 AND 25000 OR id % 5 = 0;
VACUUM chk;
SELECT deleted_pages > 0 AS has_deleted_pages FROM btlayout_stats('chk_id');
SELECT btlayout_relayout('chk_veb') >= 0 AS relaid_out;
SELECT i AS index, btlayout_check(i::regclass, true) AS result
FROM unnest(ARRAY['chk_k', 'chk_v', 'chk_multi', 'chk_id', 'chk_expr',
                  'chk_nodedup', 'chk_eytzinger', 'chk_veb', 'chk_btorder',
                  'chk_blocked']) i;

-- Items killed by index scans (LP_DEAD) are not expected to match rows
DELETE FROM chk WHERE id BETWEEN 40000 AND 41000;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM chk WHERE id BETWEEN 40000 AND 41000;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT btlayout_check('chk_id', true);

-- Long values: compressed in the index, in the heap, in both, or neither
-- Values and keys compressed by pglz, the default before 19 (19 makes lz4
-- the default where the server has it): the numbers below are pglz's
SET default_toast_compression = pglz;
CREATE TABLE chk_long (id int, v text);
INSERT INTO chk_long
SELECT i, repeat(md5(i::text), CASE WHEN i % 3 = 0 THEN 150 ELSE 20 + i % 10 END)
FROM generate_series(1, 600) i;
CREATE INDEX chk_long_v ON chk_long USING btlayout (v);
CREATE INDEX chk_long_e ON chk_long USING btlayout (v) WITH (layout = eytzinger);
ALTER TABLE chk_long ALTER COLUMN v SET STORAGE main;
INSERT INTO chk_long SELECT i, repeat(md5(i::text), 100) FROM generate_series(601, 700) i;
SELECT pg_column_compression(v) AS compression, count(*) FROM chk_long GROUP BY 1 ORDER BY 1;
SELECT btlayout_check('chk_long_v', true), btlayout_check('chk_long_e', true);

-- Empty and one-row indexes
CREATE TABLE chk_small (k int);
CREATE INDEX chk_small_k ON chk_small USING btlayout (k);
SELECT btlayout_check('chk_small_k', true);
INSERT INTO chk_small VALUES (1);
SELECT btlayout_check('chk_small_k', true);
CREATE INDEX chk_small_k2 ON chk_small USING btlayout (k) WITH (layout = veb);
SELECT btlayout_check('chk_small_k2', true);

-- Bad arguments
SELECT btlayout_check(NULL) IS NULL AS is_null;
SELECT btlayout_check('chk_k', NULL) IS NULL AS is_null;
CREATE INDEX chk_btree ON chk USING btree (k);
SELECT btlayout_check('chk_btree');
SELECT btlayout_check('chk');

-- Only superusers, or roles granted the function
CREATE ROLE btlayout_checker;
SET ROLE btlayout_checker;
SELECT btlayout_check('chk_k');
RESET ROLE;
GRANT EXECUTE ON FUNCTION btlayout_check(regclass, bool) TO btlayout_checker;
SET ROLE btlayout_checker;
SELECT btlayout_check('chk_k', true);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION btlayout_check(regclass, bool) FROM btlayout_checker;
DROP ROLE btlayout_checker;

DROP TABLE chk, chk_long, chk_small;
