--
-- The byte-identity oracle: for the same table, every block of a btlayout
-- index built by our loader with layout = none equals the block core btree
-- builds, metapage included, once the page LSN and checksum (the first 10
-- bytes of the page header) are masked.  (Other layouts move tuple bodies
-- inside the same pages: sql/layouts.sql.)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;

-- 'identical N blocks', or the first block that differs
CREATE FUNCTION compare_blocks(bt regclass, bl regclass) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  nblocks bigint := pg_relation_size(bt) / current_setting('block_size')::int;
  blk bigint;
BEGIN
  IF pg_relation_size(bt) <> pg_relation_size(bl) THEN
    RETURN format('size differs: %s vs %s', pg_relation_size(bt), pg_relation_size(bl));
  END IF;
  FOR blk IN 0 .. nblocks - 1 LOOP
    IF substr(get_raw_page(bt::text, blk), 11) <> substr(get_raw_page(bl::text, blk), 11) THEN
      RETURN format('block %s differs', blk);
    END IF;
  END LOOP;
  RETURN format('identical %s blocks', nblocks);
END
$$;

-- The options of the btlayout index: the same, with layout = none
CREATE FUNCTION none_opts(opts text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN opts = '' THEN 'WITH (layout = none)'
              ELSE replace(opts, 'WITH (', 'WITH (layout = none, ') END
$$;

-- Build the same index with btree and with btlayout and compare; a WHERE
-- clause in def goes after the options
CREATE FUNCTION oracle(tbl text, def text, opts text DEFAULT '') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  cols text := split_part(def, ' WHERE ', 1);
  pred text := CASE WHEN strpos(def, ' WHERE ') > 0
                    THEN ' WHERE ' || split_part(def, ' WHERE ', 2) ELSE '' END;
  result text;
BEGIN
  EXECUTE format('CREATE INDEX oracle_bt ON %I USING btree %s %s%s', tbl, cols, opts, pred);
  EXECUTE format('CREATE INDEX oracle_bl ON %I USING btlayout %s %s%s', tbl, cols,
                 none_opts(opts), pred);
  result := compare_blocks('oracle_bt', 'oracle_bl');
  DROP INDEX oracle_bt, oracle_bl;
  RETURN result;
END
$$;

CREATE FUNCTION oracle_unique(tbl text, def text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  result text;
BEGIN
  EXECUTE format('CREATE UNIQUE INDEX oracle_bt ON %I USING btree %s', tbl, def);
  EXECUTE format('CREATE UNIQUE INDEX oracle_bl ON %I USING btlayout %s %s', tbl, def,
                 none_opts(''));
  result := compare_blocks('oracle_bt', 'oracle_bl');
  DROP INDEX oracle_bt, oracle_bl;
  RETURN result;
END
$$;

-- Serial builds first (both access methods), then parallel ones below
SET max_parallel_maintenance_workers = 0;

-- 1 million rows of int4, int8, text and a heavily duplicated column
CREATE TABLE big (i4 int4, i8 int8, t text, dup int4, n int4);
INSERT INTO big
SELECT (g::int8 * 7919) % 1000003, g::int8 * 1000000007, md5(g::text),
       g % 97, CASE WHEN g % 11 = 0 THEN NULL ELSE g % 1000 END
FROM generate_series(1, 1000000) g;
VACUUM ANALYZE big;

SELECT 'int4' AS "case", oracle('big', '(i4)');
SELECT 'int8 unique' AS "case", oracle_unique('big', '(i8)');
SELECT 'text C' AS "case", oracle('big', '(t COLLATE "C")');
SELECT 'text ICU' AS "case", oracle('big', '(t COLLATE "und-x-icu")');
SELECT 'posting lists' AS "case", oracle('big', '(dup)');
SELECT 'posting lists, dedup off' AS "case", oracle('big', '(dup)', 'WITH (deduplicate_items = off)');
SELECT 'multi-column DESC NULLS FIRST' AS "case", oracle('big', '(n DESC NULLS FIRST, dup, i4 DESC)');
SELECT 'INCLUDE' AS "case", oracle('big', '(dup, n NULLS FIRST) INCLUDE (t, i8)');
SELECT 'fillfactor 50' AS "case", oracle('big', '(i4)', 'WITH (fillfactor = 50)');
SELECT 'fillfactor 100' AS "case", oracle('big', '(i8 DESC)', 'WITH (fillfactor = 100)');
SELECT 'partial' AS "case", oracle('big', '(i4) WHERE dup < 10');
SELECT 'expression' AS "case", oracle('big', '((i4 % 1000), lower(t))');
SELECT 'name (stored as cstring)' AS "case", oracle('big', '((t::name))');

-- The same with two parallel workers for each access method's build
-- (t/014_parallel_build.pl checks from the server log that they came)
ALTER TABLE big SET (parallel_workers = 2);
SET max_parallel_maintenance_workers = 2;
SET maintenance_work_mem = '256MB';
SELECT 'parallel int4' AS "case", oracle('big', '(i4)');
SELECT 'parallel int8 unique' AS "case", oracle_unique('big', '(i8)');
SELECT 'parallel text C' AS "case", oracle('big', '(t COLLATE "C")');
SELECT 'parallel posting lists' AS "case", oracle('big', '(dup)');
SELECT 'parallel multi-column DESC NULLS FIRST' AS "case", oracle('big', '(n DESC NULLS FIRST, dup, i4 DESC)');
SELECT 'parallel INCLUDE' AS "case", oracle('big', '(dup, n NULLS FIRST) INCLUDE (t, i8)');
RESET maintenance_work_mem;
SET max_parallel_maintenance_workers = 0;

-- Small tables: empty, one row, one leaf page, all NULL
CREATE TABLE small (k int4, t text);
SELECT '0 rows' AS "case", oracle('small', '(k)');
INSERT INTO small VALUES (42, 'x');
SELECT '1 row' AS "case", oracle('small', '(k)');
SELECT '1 row unique' AS "case", oracle_unique('small', '(k)');
INSERT INTO small SELECT NULL, NULL FROM generate_series(1, 100);
SELECT 'NULLs' AS "case", oracle('small', '(k, t)');
SELECT 'NULLs unique' AS "case", oracle_unique('small', '(k, t)');

-- Wide keys near the size limit: few tuples per page, many levels
-- Values and keys compressed by pglz, the default before 19 (19 makes lz4
-- the default where the server has it): the numbers below are pglz's
SET default_toast_compression = pglz;
CREATE TABLE wide (t text);
INSERT INTO wide SELECT repeat(md5(g::text), 80) FROM generate_series(1, 3000) g;
SELECT 'wide keys' AS "case", oracle('wide', '(t COLLATE "C")');

-- A unique index over HOT-updated rows
CREATE TABLE updated (k int4);
INSERT INTO updated SELECT generate_series(1, 50000);
UPDATE updated SET k = k WHERE k % 3 = 0;
SELECT 'unique after updates' AS "case", oracle_unique('updated', '(k)');

-- The same holds when the relation is WAL-logged or not: an unlogged table
CREATE UNLOGGED TABLE unlogged_t AS SELECT i4, dup FROM big WHERE i4 < 200000;
SELECT 'unlogged' AS "case", oracle('unlogged_t', '(dup, i4)');

-- Oversized tuples fail with the server's message, in both
CREATE TABLE huge (t text);
INSERT INTO huge SELECT string_agg(md5(g::text), '') FROM generate_series(1, 100) g;
CREATE INDEX ON huge USING btree (t);
CREATE INDEX ON huge USING btlayout (t);

DROP TABLE big, small, wide, updated, unlogged_t, huge;
DROP FUNCTION oracle(text, text, text), oracle_unique(text, text), compare_blocks(regclass, regclass),
  none_opts(text);
