--
-- Collation hints (collhint.c): in-page searches of strings in an ICU
-- collation follow a hint of its order, and the collation proves each
-- answer (search.c).  Every answer is compared with a core btree index on
-- the same rows: strings that differ in case only, in punctuation the
-- collation ignores or not, outside ASCII, empty; ascending, descending,
-- bpchar and a composite key.  Then collations the hint's model does not
-- fit (numeric ordering, Czech contractions) get no hint; and a hint made
-- wrong on purpose costs only its proofs, every answer still right, and is
-- given up.  A libc collation's pages of ASCII strings take the hint in
-- place of their sort keys.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;
-- the copies of upper levels on, whatever the server's setting (the
-- second pass of scripts/test.sh turns them off)
SET btlayout.upper_copy = '4MB';

\i sql/include/answers.sql

-- This backend's hinted searches and failed proofs since the last call
CREATE TEMP TABLE hint_seen (h bigint, f bigint);
INSERT INTO hint_seen VALUES (0, 0);
CREATE FUNCTION hints_since() RETURNS TABLE (hinted bigint, failed bigint)
LANGUAGE sql AS $$
  WITH s AS (SELECT hinted_searches AS h, hint_failures AS f
             FROM btlayout_search_stats()),
       d AS (SELECT s.h - o.h AS hinted, s.f - o.f AS failed FROM s, hint_seen o),
       u AS (UPDATE hint_seen SET h = s.h, f = s.f FROM s RETURNING 1)
  SELECT hinted, failed FROM d, (SELECT count(*) FROM u) x
$$;

-- Indexes on each of cols of each table t (btlayout) and of its twin t
-- || 'b' (core btree), which holds the same rows
CREATE FUNCTION twin_indexes(tables text[], cols text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  t text;
  c text;
BEGIN
  FOREACH t IN ARRAY tables LOOP
    FOREACH c IN ARRAY cols LOOP
      EXECUTE format('CREATE INDEX ON %I USING btlayout (%s)', t, c);
      EXECUTE format('CREATE INDEX ON %I (%s)', t || 'b', c);
    END LOOP;
  END LOOP;
END
$$;

CREATE FUNCTION hint_strings() RETURNS SETOF text LANGUAGE sql AS $$
  SELECT lower(substr(md5(g::text), 1, 3 + g % 9))
         || (ARRAY['', '.', '_', '-', ' ', '+', ''''])[1 + g % 7]
         || substr(md5((g * 7)::text), 1, g % 5)
         || '@' || (ARRAY['gmail.com', 'example.org', 'mail-box.net'])[1 + g % 3]
  FROM generate_series(1, 6000) g
  UNION ALL
  SELECT s FROM unnest(ARRAY['', ' ', 'a', 'A', 'ab', 'Ab', 'aB', 'AB', 'a-b',
    'a_b', 'a b', 'a.b', 'ab-', '-ab', 'co-op', 'coop', 'Coop', 'co op',
    'éa', 'ea', 'eb', 'Éa', 'zürich', 'zurich', 'zz', 'ß', 'ss', 'st',
    'x10', 'x9', 'x-9', '9', '10', 'ch', 'h', 'ci', 'd',
    'ＡＢ', 'a' || chr(8203) || 'b', 'a' || chr(769) || 'b']) s
  UNION ALL
  SELECT upper(s) FROM (SELECT lower(substr(md5(g::text), 1, 3 + g % 9)) AS s
                        FROM generate_series(1, 6000, 37) g) u
$$;

CREATE TABLE ha (s text COLLATE "en-x-icu", b char(32) COLLATE "en-x-icu",
                 n int);
INSERT INTO ha SELECT s, s, length(s) % 3 FROM hint_strings() s;
INSERT INTO ha SELECT s, s, 7 FROM hint_strings() s WHERE length(s) % 5 = 0;
CREATE TABLE hb AS SELECT * FROM ha;
CREATE INDEX ha_s ON ha USING btlayout (s);
CREATE INDEX ha_sd ON ha USING btlayout (s DESC NULLS LAST) WITH (layout = eytzinger);
CREATE INDEX ha_b ON ha USING btlayout (b);
CREATE INDEX ha_ns ON ha USING btlayout (n, s) WITH (layout = none);
CREATE INDEX hb_s ON hb (s);
CREATE INDEX hb_sd ON hb (s DESC NULLS LAST);
CREATE INDEX hb_b ON hb (b);
CREATE INDEX hb_ns ON hb (n, s);

SET enable_bitmapscan = off;
-- the plans: each kind of probe through a btlayout index of ha (which of
-- them, where two serve, is the planner's)
CREATE FUNCTION index_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line ~ 'Index (Only )?Scan' THEN
      RETURN substring(line from 'using (\w+) on');
    END IF;
  END LOOP;
  RETURN NULL;
END
$$;
SELECT index_of('SELECT count(*) FROM ha WHERE s = ''ab''') IN ('ha_s', 'ha_sd') AS eq,
       index_of('SELECT s FROM ha WHERE s < ''ab'' ORDER BY s DESC NULLS LAST LIMIT 3') AS desc_range,
       index_of('SELECT count(*) FROM ha WHERE b = ''ab''') AS bpchar,
       index_of('SELECT count(*) FROM ha WHERE n = 1 AND s = ''ab''') AS composite;

CREATE TEMP TABLE hint_shapes AS SELECT ARRAY[
  'SELECT count(*) FROM %1$I WHERE s = %2$L',
  'SELECT string_agg(s, ''|'' ORDER BY s, n) FROM (SELECT s, n FROM %1$I WHERE s >= %2$L ORDER BY s LIMIT 4) x',
  'SELECT string_agg(s, ''|'' ORDER BY s, n) FROM (SELECT s, n FROM %1$I WHERE s > %2$L ORDER BY s LIMIT 4) x',
  'SELECT string_agg(s, ''|'' ORDER BY s DESC, n) FROM (SELECT s, n FROM %1$I WHERE s < %2$L ORDER BY s DESC NULLS LAST LIMIT 4) x',
  'SELECT string_agg(s, ''|'' ORDER BY s DESC, n) FROM (SELECT s, n FROM %1$I WHERE s <= %2$L ORDER BY s DESC NULLS LAST LIMIT 4) x',
  'SELECT count(*) FROM %1$I WHERE b = %2$L',
  'SELECT string_agg(b, ''|'' ORDER BY b, n) FROM (SELECT b, n FROM %1$I WHERE b > %2$L ORDER BY b LIMIT 4) x',
  'SELECT count(*) FROM %1$I WHERE n = mod(length(%2$L), 3) AND s = %2$L',
  'SELECT string_agg(s, ''|'' ORDER BY s) FROM (SELECT s FROM %1$I WHERE n = 7 AND s >= %2$L ORDER BY n, s LIMIT 4) x'
] AS shapes;

-- Probes: every string (at most 60 of the md5 ones), and strings just
-- beside them: a character more, one changed in case, one outside ASCII
CREATE TEMP TABLE hint_probes AS
SELECT array_agg(p ORDER BY p COLLATE "C") AS probes FROM (
  SELECT DISTINCT p FROM (
    SELECT s AS p FROM (SELECT s FROM hint_strings() s ORDER BY md5(s) LIMIT 60) a
    UNION ALL SELECT s FROM hint_strings() s WHERE s !~ '@'
    UNION ALL SELECT s || 'a' FROM hint_strings() s WHERE s !~ '@'
    UNION ALL SELECT upper(s) FROM (SELECT s FROM hint_strings() s ORDER BY md5(s) LIMIT 20) b
    UNION ALL SELECT s || 'é' FROM (SELECT s FROM hint_strings() s ORDER BY md5(s) LIMIT 20) c
    UNION ALL SELECT 'Zz' UNION ALL SELECT '~') x) y;

SELECT count(*) > 0 AS ready FROM hints_since();
SELECT answers_wrong(shapes, probes, 'ha', 'hb') AS wrong
FROM hint_shapes, hint_probes;
-- the searches followed the hint, and the collation proved every answer
SELECT hinted > 1000 AS hinted, failed AS failed FROM hints_since();

-- With hints off, the same answers and no hinted search
SET btlayout.collation_hints = off;
SELECT answers_wrong(shapes, probes, 'ha', 'hb') AS wrong_without_hints
FROM hint_shapes, hint_probes;
SELECT hinted AS hinted_when_off FROM hints_since();
RESET btlayout.collation_hints;

-- Collations the hint's model does not fit get none: numeric ordering
-- ("x9" below "x10"), Czech ("ch" a letter after "h")
CREATE COLLATION hint_num (provider = icu, locale = 'en-u-kn');
CREATE COLLATION hint_cs (provider = icu, locale = 'cs-CZ');
CREATE TABLE hn AS SELECT s COLLATE hint_num AS s, b, n FROM ha;
CREATE TABLE hnb AS SELECT * FROM hn;
CREATE TABLE hc AS SELECT s COLLATE hint_cs AS s, b, n FROM ha;
CREATE TABLE hcb AS SELECT * FROM hc;
SELECT twin_indexes(ARRAY['hn', 'hc'], ARRAY['s', 's DESC NULLS LAST']);
SELECT 'x9' < 'x10' COLLATE hint_num AS numeric_order,
       'ch' > 'h' COLLATE hint_cs AS czech_ch;
SELECT count(*) >= 0 AS reset FROM hints_since();
-- (the column b stays in "en-x-icu": only the s shapes here)
SELECT answers_wrong(shapes[1:5], probes, 'hn', 'hnb') AS wrong_numeric,
       answers_wrong(shapes[1:5], probes, 'hc', 'hcb') AS wrong_czech
FROM hint_shapes, hint_probes;
SELECT hinted AS hinted_numeric_czech FROM hints_since();

-- The property test of the ranks as normalized keys (normkey_check(), as
-- in upper and normkey): every pair of an index's tuples whose keys tell
-- them apart is ordered by the keys as by the index, and every search of
-- an image by a key chooses the item _bt_binsrch() would, on ASCII strings
-- in the ICU collation, one column, DESC NULLS FIRST with a second
-- column, and a column after an integer; a hint turned upside down makes
-- the test fail
CREATE FUNCTION normkey_check(index regclass, probes int, seed int,
  OUT tuples bigint, OUT pairs bigint, OUT decided bigint,
  OUT mismatches bigint, OUT searches bigint, OUT search_mismatches bigint)
  AS '$libdir/btlayout', 'btlayout_normkey_check' LANGUAGE C STRICT;
CREATE TABLE hx AS
SELECT lower(substr(md5(g::text), 1, 3 + g % 9))
       || (ARRAY['', '.', '_', '-', ' ', 'A', 'B'])[1 + g % 7] || (g % 3) AS s,
       g % 5 AS n
FROM generate_series(1, 60000) g;
CREATE INDEX hx_s ON hx USING btlayout (s COLLATE "en-x-icu");
CREATE INDEX hx_d ON hx USING btlayout (s COLLATE "en-x-icu" DESC NULLS FIRST, n);
CREATE INDEX hx_n ON hx USING btlayout (n, s COLLATE "en-x-icu");
SELECT i, mismatches, search_mismatches, decided > pairs * 0.9 AS decided,
       searches > 0 AS searched
FROM unnest(ARRAY['hx_s', 'hx_d', 'hx_n']) i, LATERAL normkey_check(i::regclass, 300, 7);
SET btlayout.debug_collation_hint_scramble = on;
SELECT mismatches > 0 AS scrambled_mismatches
FROM normkey_check('hx_s', 300, 7);
RESET btlayout.debug_collation_hint_scramble;
DROP TABLE hx;

-- A libc collation ("C.utf8", on every server here).  In the copy of the
-- upper levels, a collation with a hint gives its strings the hint's
-- ranks for keys, not sort keys: pages whose pivots are all ASCII are
-- searched by those keys, pages with other strings as pages (with the
-- hint), and a key with a byte outside ASCII has ranks up to it
CREATE TABLE hl AS SELECT s COLLATE "C.utf8" AS s, b, n FROM ha;
CREATE TABLE hlb AS SELECT * FROM hl;
CREATE TABLE hu AS SELECT ('é' || s) COLLATE "C.utf8" AS s, b, n FROM ha;
CREATE TABLE hub AS SELECT * FROM hu;
SELECT twin_indexes(ARRAY['hl', 'hu'], ARRAY['s']);
CREATE TEMP TABLE key_seen AS
SELECT upper_key_searches AS k FROM btlayout_search_stats();
CREATE FUNCTION key_searches_since() RETURNS bigint LANGUAGE sql AS $$
  WITH s AS (SELECT upper_key_searches AS k FROM btlayout_search_stats()),
       u AS (UPDATE key_seen SET k = s.k FROM s RETURNING 1)
  SELECT s.k - o.k FROM s, key_seen o, (SELECT count(*) FROM u) x
$$;
SELECT count(*) >= 0 AS reset FROM hints_since();
SELECT answers_wrong(shapes[1:3], probes, 'hl', 'hlb') AS wrong_libc_ascii
FROM hint_shapes, hint_probes;
SELECT key_searches_since() > 100 AS key_searches_ascii;
SELECT hinted > 1000 AS hinted, failed FROM hints_since();
SELECT answers_wrong(shapes[1:3], (SELECT array_agg('é' || p) FROM unnest(probes) p),
                     'hu', 'hub') AS wrong_libc_accented
FROM hint_shapes, hint_probes;
SELECT key_searches_since() AS key_searches_accented;

-- A wrong hint: its ranks upside down, used unchecked from the next
-- search key on.  Every answer stays right; proofs fail, and once enough
-- have, the hint is given up: no hinted search after that.
SET btlayout.debug_collation_hint_scramble = on;
SELECT answers_wrong(shapes, probes[1:40], 'ha', 'hb') AS wrong_scrambled
FROM hint_shapes, hint_probes;
SELECT hinted >= 64 AS hinted, failed > 0 AS failed FROM hints_since();
SELECT answers_wrong(shapes, probes, 'ha', 'hb') AS wrong_after_given_up
FROM hint_shapes, hint_probes;
SELECT hinted AS hinted_after_given_up FROM hints_since();
RESET btlayout.debug_collation_hint_scramble;
-- the real hint was not touched
SELECT answers_wrong(shapes[1:1], probes, 'ha', 'hb') AS wrong_again
FROM hint_shapes, hint_probes;
SELECT hinted > 0 AS hinted_again, failed AS failed_again FROM hints_since();

DROP TABLE ha, hb, hn, hnb, hc, hcb, hl, hlb, hu, hub, hint_seen, key_seen;
DROP COLLATION hint_num;
DROP COLLATION hint_cs;
DROP FUNCTION hints_since(), key_searches_since(), hint_strings(), index_of(text),
  twin_indexes(text[], text[]),
  normkey_check(regclass, int, int),
  answers_wrong(text[], text[], text, text);
