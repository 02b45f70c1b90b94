--
-- BIN-collation operator classes: text_bin_ops (text, varchar),
-- bpchar_bin_ops and bytea_bin_ops answer as core btree does under
-- COLLATE "C", with every layout and at every instruction set of the
-- compare core; the default classes of text, bpchar and bytea under "C"
-- take the same inline comparison; other collations are refused.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

-- The classes, and what amvalidate says of them
SELECT c.opcname, c.opcintype::regtype, c.opcdefault, f.opfname
FROM pg_opclass c JOIN pg_opfamily f ON f.oid = c.opcfamily
JOIN pg_am a ON a.oid = c.opcmethod
WHERE a.amname = 'btlayout' AND c.opcname LIKE '%bin_ops'
ORDER BY 1;
SELECT opcname, amvalidate(c.oid)
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE a.amname = 'btlayout' AND c.opcname LIKE '%bin_ops'
ORDER BY 1;

-- Strings that tell byte order from the others: lengths 0 to 300 with long
-- common prefixes, bytes above 0x7f, characters below the space, spaces
-- inside and at the end, and bpchar padding
CREATE TABLE strs (id int, s text);
INSERT INTO strs
SELECT g, repeat('ab', (g % 151)) || chr(32 + g % 95)
  || CASE g % 5 WHEN 0 THEN 'é' WHEN 1 THEN E'\t' WHEN 2 THEN ' ' WHEN 3 THEN '' ELSE 'ÿ€' END
  || CASE WHEN g % 7 = 0 THEN repeat(' ', g % 4) ELSE '' END
FROM generate_series(1, 3000) g;
INSERT INTO strs
SELECT 3000 + g, substr(md5(g::text), 1, g % 33) FROM generate_series(1, 3000) g;
INSERT INTO strs VALUES (7001, ''), (7002, ' '), (7003, 'a'), (7004, E'a\t'),
  (7005, 'a '), (7006, 'a  '), (7007, E'a\t '), (7008, 'A'), (7009, 'é'),
  (7010, NULL), (7011, repeat('x', 5000)), (7012, repeat('x', 4999) || 'y');

-- Each class against core btree under "C", one table each so that the
-- planner cannot pick the other index
CREATE TABLE ref (id int, t text COLLATE "C", b bpchar COLLATE "C", y bytea);
INSERT INTO ref SELECT id, s, s, convert_to(s, 'UTF8') FROM strs;
CREATE INDEX ref_t ON ref USING btree (t);
CREATE INDEX ref_b ON ref USING btree (b);
CREATE INDEX ref_y ON ref USING btree (y);
CREATE TABLE bin (LIKE ref);
INSERT INTO bin SELECT * FROM ref;
CREATE INDEX bin_t ON bin USING btlayout (t text_bin_ops);
CREATE INDEX bin_b ON bin USING btlayout (b bpchar_bin_ops);
CREATE INDEX bin_y ON bin USING btlayout (y bytea_bin_ops);
-- The default classes, which compare inline too under "C"
CREATE TABLE dflt (LIKE ref);
INSERT INTO dflt SELECT * FROM ref;
CREATE INDEX dflt_t ON dflt USING btlayout (t);
CREATE INDEX dflt_b ON dflt USING btlayout (b);
CREATE INDEX dflt_y ON dflt USING btlayout (y);
ANALYZE ref, bin, dflt;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM bin WHERE t = 'a';
EXPLAIN (COSTS OFF) SELECT count(*) FROM bin WHERE b >= 'a';
EXPLAIN (COSTS OFF) SELECT y FROM bin WHERE y < '\x61' ORDER BY y DESC LIMIT 3;

-- For a probe: equality and range counts through one column's index, and
-- the first ten keys from the probe in both directions
CREATE FUNCTION answers(tbl text, col text, probe text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v text := CASE col WHEN 't' THEN '$1' WHEN 'b' THEN '$1::bpchar'
                     ELSE 'convert_to($1, ''UTF8'')' END;
  result text;
BEGIN
  EXECUTE format($q$
    SELECT concat_ws('/', (SELECT count(*) FROM %1$I WHERE %2$I = %3$s),
      (SELECT count(*) FROM %1$I WHERE %2$I < %3$s),
      (SELECT count(*) FROM %1$I WHERE %2$I >= %3$s AND %2$I <= %3$s || 'zz'),
      (SELECT md5(string_agg(%2$I::text, ',')) FROM
        (SELECT %2$I FROM %1$I WHERE %2$I >= %3$s ORDER BY %2$I LIMIT 10) x),
      (SELECT md5(string_agg(%2$I::text, ',')) FROM
        (SELECT %2$I FROM %1$I WHERE %2$I <= %3$s ORDER BY %2$I DESC LIMIT 10) x))
    $q$, tbl, col, v) INTO result USING probe;
  RETURN result;
END
$$;

-- Probes: sampled stored values, and some with a byte added or removed;
-- btree's answers to them
CREATE TABLE probes AS
SELECT s AS probe FROM strs WHERE s IS NOT NULL AND (id % 61 = 0 OR id > 7000)
UNION ALL SELECT s || ' ' FROM strs WHERE id % 211 = 0
UNION ALL SELECT left(s, -1) FROM strs WHERE id % 211 = 1
UNION ALL SELECT s || E'\x01' FROM strs WHERE id % 211 = 2;
CREATE TABLE expected AS
SELECT probe, col, answers('ref', col, probe) AS answer
FROM probes, unnest(ARRAY['t', 'b', 'y']) col;

-- The number of probes whose answers differ from btree's
CREATE FUNCTION mismatches(tbl text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  e record;
  got text;
  wrong bigint := 0;
BEGIN
  FOR e IN SELECT * FROM expected LOOP
    got := answers(tbl, e.col, e.probe);
    IF got IS DISTINCT FROM e.answer THEN
      wrong := wrong + 1;
      IF wrong <= 3 THEN
        RAISE NOTICE 'probe % column %: btree % / % %',
          quote_literal(left(e.probe, 40)), e.col, e.answer, tbl, got;
      END IF;
    END IF;
  END LOOP;
  RETURN wrong;
END
$$;
SELECT count(*) > 200 AS enough_probes FROM expected;

-- Whole contents in index order, both ways, against btree's
CREATE FUNCTION order_mismatches(tbl text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  wrong bigint := 0;
  col text;
  a text;
  b text;
  dir text;
BEGIN
  FOREACH col IN ARRAY ARRAY['t', 'b', 'y'] LOOP
    FOREACH dir IN ARRAY ARRAY['ASC', 'DESC'] LOOP
      EXECUTE format('SELECT md5(string_agg(%s::text, %L)) FROM (SELECT %s FROM ref WHERE %s IS NOT NULL ORDER BY %s %s) x',
                     col, E'\n', col, col, col, dir) INTO a;
      EXECUTE format('SELECT md5(string_agg(%s::text, %L)) FROM (SELECT %s FROM %I WHERE %s IS NOT NULL ORDER BY %s %s) x',
                     col, E'\n', col, tbl, col, col, dir) INTO b;
      IF a IS DISTINCT FROM b THEN
        wrong := wrong + 1;
      END IF;
    END LOOP;
  END LOOP;
  RETURN wrong;
END
$$;

-- Every layout with the best instruction set of the compare core; then
-- every lower one this machine has (the layout does not change what the
-- compare core is given); then the default classes, at every level
CREATE PROCEDURE check_answers(tbl text, what text) LANGUAGE plpgsql AS $$
DECLARE
  wrong bigint := mismatches(tbl) + order_mismatches(tbl);
BEGIN
  IF wrong <> 0 THEN
    RAISE WARNING '%, compare_isa %: % wrong answers', what,
      current_setting('btlayout.compare_isa'), wrong;
  END IF;
END
$$;
DO $$
DECLARE
  lay text;
  isa text;
BEGIN
  FOREACH lay IN ARRAY ARRAY['none', 'eytzinger', 'veb', 'btorder', 'blocked'] LOOP
    EXECUTE format('ALTER INDEX bin_t SET (layout = %I)', lay);
    EXECUTE format('ALTER INDEX bin_b SET (layout = %I)', lay);
    EXECUTE format('ALTER INDEX bin_y SET (layout = %I)', lay);
    PERFORM btlayout_relayout('bin_t'), btlayout_relayout('bin_b'),
            btlayout_relayout('bin_y');
    CALL check_answers('bin', 'layout ' || lay);
  END LOOP;
  FOR isa IN
    SELECT v FROM pg_settings, unnest(enumvals) WITH ORDINALITY u(v, n)
    WHERE name = 'btlayout.compare_isa'
      AND n <= array_position(enumvals, setting)
    ORDER BY n DESC
  LOOP
    PERFORM set_config('btlayout.compare_isa', isa, false);
    CALL check_answers('bin', 'layout blocked');
    CALL check_answers('dflt', 'default classes');
  END LOOP;
END
$$;
RESET btlayout.compare_isa;

-- Pages of uniform width (md5 keys of one length) are searched by walking
-- the layout, string comparisons and all
CREATE TABLE md5s (k text COLLATE "C");
INSERT INTO md5s SELECT md5(g::text) FROM generate_series(1, 20000) g;
CREATE INDEX md5s_k ON md5s USING btlayout (k text_bin_ops) WITH (layout = eytzinger);
CREATE TEMP TABLE before AS SELECT * FROM btlayout_search_stats();
-- one lookup per row (18 could merge-join through the index instead)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) FROM md5s m WHERE EXISTS (SELECT 1 FROM md5s x WHERE x.k = m.k);
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT s.layout_searches - b.layout_searches > 20000 AS walked,
       s.layout_confirmed - b.layout_confirmed = s.layout_searches - b.layout_searches AS all_confirmed
FROM btlayout_search_stats() s, before b;

-- Long keys of one width sharing long prefixes (URLs), walked in their
-- layouts.  Probes: stored keys, keys cut short inside and after the
-- shared part, keys with a byte raised or lowered at each position of it
-- and after it, and keys one byte longer; each asked what answers() asks
-- (equality, ranges from it, the keys from it in both directions), of an
-- ascending and a descending index, against core btree
CREATE TABLE urls_ref (t text COLLATE "C");
INSERT INTO urls_ref
SELECT 'https://www.example.com/catalog/category-' || lpad((g % 7)::text, 2, '0')
  || '/product/' || lpad(g::text, 9, '0') || '.html'
FROM generate_series(1, 20000) g;
CREATE INDEX urls_ref_t ON urls_ref USING btree (t);
CREATE TABLE urls_asc (LIKE urls_ref);
INSERT INTO urls_asc SELECT * FROM urls_ref;
CREATE INDEX urls_asc_t ON urls_asc USING btlayout (t text_bin_ops) WITH (layout = blocked);
CREATE TABLE urls_desc (LIKE urls_ref);
INSERT INTO urls_desc SELECT * FROM urls_ref;
CREATE INDEX urls_desc_t ON urls_desc USING btlayout (t text_bin_ops DESC) WITH (layout = eytzinger);
CREATE TABLE url_probes AS
SELECT t AS probe FROM urls_ref WHERE right(t, 7) LIKE '%00.html'
UNION ALL
SELECT left(t, len) FROM urls_ref, generate_series(30, 66, 3) len
WHERE right(t, 8) LIKE '%777.html'
UNION ALL
SELECT overlay(t placing chr(ascii(substr(t, pos, 1)) + d) from pos for 1)
FROM urls_ref, generate_series(38, 66, 2) pos, (VALUES (-1), (1)) v(d)
WHERE right(t, 8) LIKE '%531.html'
UNION ALL
SELECT t || '!' FROM urls_ref WHERE right(t, 8) LIKE '%413.html';
SELECT count(*) > 1000 AS enough_probes FROM url_probes;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE url_before AS SELECT * FROM btlayout_search_stats();
SELECT count(*) FILTER (WHERE asc_answer IS DISTINCT FROM ref) AS asc_wrong,
       count(*) FILTER (WHERE desc_answer IS DISTINCT FROM ref) AS desc_wrong
FROM (SELECT answers('urls_ref', 't', probe) AS ref,
             answers('urls_asc', 't', probe) AS asc_answer,
             answers('urls_desc', 't', probe) AS desc_answer
      FROM url_probes) a;
SELECT s.layout_searches - b.layout_searches > 10000 AS walked,
       s.layout_confirmed - b.layout_confirmed = s.layout_searches - b.layout_searches AS all_confirmed
FROM btlayout_search_stats() s, url_before b;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- bpchar pads: 'a' = 'a  ', and a character below the space sorts after
-- the end of the string
SELECT b::bytea AS bytes FROM bin WHERE b >= 'a' AND b <= E'a\t' ORDER BY b, id;
SELECT count(*) FROM bin WHERE b = 'a  ';

-- Deduplication works (equalimage): posting lists appear
CREATE TABLE dups (k text COLLATE "C");
INSERT INTO dups SELECT 'key' || (g % 10) FROM generate_series(1, 5000) g;
CREATE INDEX dups_k ON dups USING btlayout (k text_bin_ops);
SELECT leaf_items < 1000 AS deduplicated FROM btlayout_stats('dups_k');

-- The compare core's setting: only what this machine has
SET btlayout.compare_isa = 'portable';
SET btlayout.compare_isa = 'neon';

-- Collations other than "C" are refused, with a hint
CREATE TABLE coll (t text COLLATE "en-x-icu", b bpchar COLLATE "und-x-icu",
                   v varchar COLLATE "und-x-icu");
CREATE INDEX ON coll USING btlayout (t text_bin_ops);
CREATE INDEX ON coll USING btlayout (t COLLATE "und-x-icu" text_bin_ops);
CREATE INDEX ON coll USING btlayout (b bpchar_bin_ops);
CREATE INDEX ON coll USING btlayout (v text_bin_ops);
CREATE INDEX coll_posix ON coll USING btlayout (t COLLATE "POSIX" text_bin_ops);
CREATE INDEX coll_v ON coll USING btlayout (v COLLATE "C" text_bin_ops);
-- The comparison functions refuse other collations when called directly
SELECT btlayout_text_bin_cmp('a', 'b' COLLATE "und-x-icu");
SELECT btlayout_text_bin_cmp('a', 'b' COLLATE "C"), btlayout_bpchar_bin_cmp('a ', 'a' COLLATE "C"),
       btlayout_bytea_bin_cmp('\x00', '\x');
