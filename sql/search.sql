--
-- The search path: layout-directed searches are confirmed through the line
-- pointers, stale layouts fall back to the ordinary search, and the answers
-- are the same either way, with prefetching on and off.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;

-- Lookup relayouts are part of what is tested here, whatever the
-- configuration (scripts/test.sh's second pass turns them off elsewhere)
SET btlayout.lookup_relayout = on;

SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- Counters of this backend, as differences from a snapshot
CREATE TEMP TABLE counters AS SELECT * FROM btlayout_search_stats();
CREATE FUNCTION counted(OUT walks bigint, OUT confirmed bigint, OUT fallbacks bigint,
                        OUT ordinary bigint, OUT with_inserts bigint, OUT relayouts bigint)
LANGUAGE sql AS $$
  SELECT s.layout_searches - c.layout_searches, s.layout_confirmed - c.layout_confirmed,
         s.layout_fallbacks - c.layout_fallbacks, s.ordinary_searches - c.ordinary_searches,
         s.layout_with_inserts - c.layout_with_inserts, s.lookup_relayouts - c.lookup_relayouts
  FROM btlayout_search_stats() s, counters c
$$;
CREATE PROCEDURE reset_counted() LANGUAGE sql AS $$
  DELETE FROM counters; INSERT INTO counters SELECT * FROM btlayout_search_stats();
$$;

-- Every key of a table, and every value between and around them, looked up
-- through the index; the number of wrong answers
CREATE FUNCTION wrong_answers(tbl text, n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  wrong bigint := 0;
  got bigint;
  x int;
BEGIN
  FOR x IN 0 .. 2 * n + 1 LOOP
    EXECUTE format('SELECT count(*) FROM %I WHERE k = $1', tbl) INTO got USING x;
    wrong := wrong + CASE WHEN got = (x % 2) * (CASE WHEN x < 2 * n THEN 1 ELSE 0 END) THEN 0 ELSE 1 END;
    EXECUTE format('SELECT count(*) FROM %I WHERE k >= $1', tbl) INTO got USING x;
    wrong := wrong + CASE WHEN got = GREATEST(n - x / 2, 0) THEN 0 ELSE 1 END;
  END LOOP;
  RETURN wrong;
END
$$;

-- One leaf page holding 255 odd keys (a complete binary tree of 8 levels)
CREATE TABLE one (k int4);
INSERT INTO one SELECT 2 * g + 1 FROM generate_series(0, 254) g;
-- (lookups must not rewrite the page here: that is tested further down)
CREATE INDEX one_k ON one USING btlayout (k) WITH (layout = eytzinger, lookup_relayout = off);
SELECT kind, nitems, layout, uniform_width FROM btlayout_page('one_k', 1) LIMIT 1;

-- Laid out: every search walks the layout and is confirmed
CALL reset_counted();
SELECT wrong_answers('one', 255);
SELECT walks > 0 AS walked, walks = confirmed AS all_confirmed, fallbacks, ordinary FROM counted();

-- The same with prefetching off, by setting and by option
SET btlayout.prefetch = off;
CALL reset_counted();
SELECT wrong_answers('one', 255);
SELECT walks > 0 AS walked, walks = confirmed AS all_confirmed, fallbacks FROM counted();
RESET btlayout.prefetch;
ALTER INDEX one_k SET (prefetch = off);
SELECT wrong_answers('one', 255);
ALTER INDEX one_k RESET (prefetch);

-- A stale layout: the page is in eytzinger order, the index now says veb.
-- Its slots hold tuples, so the veb walk compares real items, in the wrong
-- order: the two it ends between bracket the answer all the same, and the
-- items between them are searched through line pointers; when the walk
-- ends on items whose line pointers are not where a layout would put them,
-- the confirmation fails and the search is done again through the line
-- pointers.  Every answer is right.
ALTER INDEX one_k SET (layout = veb);
SELECT layout FROM btlayout_page('one_k', 1) LIMIT 1;
CALL reset_counted();
SELECT wrong_answers('one', 255);
SELECT walks > 0 AS walked, confirmed, fallbacks > 0 AS fell_back, ordinary = fallbacks AS all_redone FROM counted();

-- Laid out again: confirmed again
SELECT btlayout_relayout('one_k');
CALL reset_counted();
SELECT wrong_answers('one', 255);
SELECT walks = confirmed AS all_confirmed, fallbacks FROM counted();

-- Inserts into a page without a high key (the rightmost of its level, here
-- the only one) break its layout: nothing says where its laid-out items
-- begin, so it is searched through line pointers
INSERT INTO one SELECT 2 * g FROM generate_series(1, 40) g;
CALL reset_counted();
SELECT count(*) FROM one WHERE k BETWEEN 10 AND 20;
SELECT ordinary > 0 AS searched_ordinarily, with_inserts FROM counted();

-- Inserts since the layout into pages with a high key: their laid-out
-- items stay a search tree, walked as before, and the items inserted since
-- are found through their line pointers.  mismatches() compares what the
-- index answers for every value from 0 to 12001 (equality count, first key
-- >= and > it, last key < it: the three ways a scan positions itself) with
-- what a scan of the heap says.
CREATE FUNCTION mismatches(tbl text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  wrong bigint;
BEGIN
  EXECUTE format($q$
    CREATE TEMP TABLE truth AS
    SELECT x, eq,
           min(x) FILTER (WHERE eq > 0) OVER (ORDER BY x DESC ROWS UNBOUNDED PRECEDING) AS ge,
           min(x) FILTER (WHERE eq > 0) OVER (ORDER BY x DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS gt,
           max(x) FILTER (WHERE eq > 0) OVER (ORDER BY x ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS lt
    FROM (SELECT x, count(h.k) AS eq
          FROM generate_series(0, 12001) x LEFT JOIN (SELECT k + 0 AS k FROM %1$I) h ON h.k = x
          GROUP BY x) s$q$, tbl);
  EXECUTE format($q$
    SELECT count(*) FROM truth t
    WHERE (t.eq, t.ge, t.gt, t.lt) IS DISTINCT FROM
          ((SELECT count(*) FROM %1$I WHERE k = t.x),
           (SELECT k FROM %1$I WHERE k >= t.x ORDER BY k LIMIT 1),
           (SELECT k FROM %1$I WHERE k > t.x ORDER BY k LIMIT 1),
           (SELECT k FROM %1$I WHERE k < t.x ORDER BY k DESC LIMIT 1))$q$, tbl) INTO wrong;
  DROP TABLE truth;
  RETURN wrong;
END
$$;
-- The first and last key of each leaf with a high key, from its tuples
-- (an int4 key after the 8-byte tuple header, little-endian, below 2^24)
CREATE FUNCTION leaf_bounds(idx text, OUT blkno int, OUT lo int, OUT hi int)
RETURNS SETOF record LANGUAGE sql AS $$
  SELECT b, min(v) FILTER (WHERE p.role = 'data'), max(v) FILTER (WHERE p.role = 'data')
  FROM generate_series(1, pg_relation_size(idx) / 8192 - 1) b,
       LATERAL (SELECT get_raw_page(idx, b::int) AS raw) r,
       LATERAL btlayout_page(idx::regclass, b) p,
       LATERAL (SELECT get_byte(r.raw, p.lp_off + 8) + 256 * get_byte(r.raw, p.lp_off + 9) +
                       65536 * get_byte(r.raw, p.lp_off + 10) AS v) k
  WHERE p.kind = 'leaf'
  GROUP BY b
  HAVING bool_or(p.role = 'high key')
$$;
CREATE TABLE ins_results (layout text, stage text, mismatches bigint,
                          inserted_since_pages bigint, out_of_layout_pages bigint,
                          walks bigint, confirmed bigint, fallbacks bigint, with_inserts bigint,
                          relayouts bigint);
CREATE PROCEDURE ins_stage(l text, stage text) LANGUAGE plpgsql AS $$
DECLARE
  wrong bigint;
BEGIN
  CALL reset_counted();
  wrong := mismatches('ins');
  INSERT INTO ins_results
  SELECT l, stage, wrong, s.inserted_since_pages, s.out_of_layout_pages,
         c.walks, c.confirmed, c.fallbacks, c.with_inserts, c.relayouts
  FROM btlayout_stats('ins_k') s, counted() c;
END
$$;
DO $$
DECLARE
  l text;
BEGIN
  FOREACH l IN ARRAY ARRAY['eytzinger', 'veb', 'btorder', 'blocked'] LOOP
    CREATE TABLE ins (k int4);
    INSERT INTO ins SELECT 2 * g + 1 FROM generate_series(0, 5999) g;
    EXECUTE format('CREATE INDEX ins_k ON ins USING btlayout (k) WITH (layout = %s, lookup_relayout = off)', l);
    CALL ins_stage(l, 'built');
    -- On each leaf with a high key: a key below its first, one above its
    -- last, and one in between
    INSERT INTO ins SELECT v FROM leaf_bounds('ins_k'), LATERAL (VALUES (lo - 1), (hi + 1), (lo + 2 * ((hi - lo) / 6) + 1)) x(v);
    CALL ins_stage(l, 'below, above, between');
    -- Twelve more on each: still in layout with inserts since
    INSERT INTO ins SELECT lo + 1 + 2 * (g * 13 % ((hi - lo) / 2)) FROM leaf_bounds('ins_k'), generate_series(1, 12) g;
    CALL ins_stage(l, 'fifteen per leaf');
    -- Duplicates of one key, until its page deduplicates (posting lists)
    -- or splits
    INSERT INTO ins SELECT 4001 FROM generate_series(1, 300);
    CALL ins_stage(l, 'posting lists');
    -- Every even key of a range: pages split
    INSERT INTO ins SELECT 2 * g FROM generate_series(3000, 4000) g;
    CALL ins_stage(l, 'splits');
    -- Lookups that meet stale pages rewrite them when their scan ends
    ALTER INDEX ins_k SET (lookup_relayout = on);
    CALL ins_stage(l, 'lookups relayout');
    CALL ins_stage(l, 'lookups again');
    -- Laid out again
    PERFORM btlayout_relayout('ins_k');
    CALL ins_stage(l, 'relaid out');
    DROP TABLE ins;
  END LOOP;
END
$$;
-- Every answer right; inserts since the layout leave pages in layout (but
-- for duplicates and splits) and searches walking them, confirmed; lookups
-- with lookup_relayout on rewrite the stale pages they meet, once
SELECT layout, stage, mismatches, inserted_since_pages > 0 AS inserted_since,
       out_of_layout_pages > 0 AS out_of_layout, walks > 0 AS walked,
       confirmed = walks AS all_confirmed, with_inserts > 0 AS walked_with_inserts,
       relayouts > 0 AS relaid
FROM ins_results ORDER BY layout, ctid;

-- Every layout, with posting lists (items of several widths), NULLs, DESC
-- columns and several levels: each index answers as core btree does
CREATE TABLE many (a int4, b int8, c float8);
INSERT INTO many
SELECT g % 5000, (g * 7919) % 100003, CASE WHEN g % 97 = 0 THEN 'NaN' WHEN g % 89 = 0 THEN NULL ELSE g / 7.0 END
FROM generate_series(1, 60000) g;
CREATE FUNCTION digest(idx text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  out text := '';
  r text;
  q text;
BEGIN
  FOREACH q IN ARRAY ARRAY[
    'SELECT count(*)::text FROM many WHERE a = 4242',
    'SELECT count(*)::text FROM many WHERE a = 4242 AND b > 50000',
    'SELECT string_agg(b::text, '','') FROM (SELECT b FROM many WHERE a >= 4990 ORDER BY a, b DESC LIMIT 30) s',
    'SELECT string_agg(c::text, '','') FROM (SELECT c FROM many WHERE c > 8000 ORDER BY c LIMIT 30) s',
    'SELECT count(*)::text FROM many WHERE c = ''NaN''',
    'SELECT count(*)::text FROM many WHERE c IS NULL',
    'SELECT count(*)::text FROM many WHERE b = ANY (ARRAY[1, 7919, 15838, 99999])',
    'SELECT count(*)::text FROM many WHERE a = 7 AND b = 7919 * 7'] LOOP
    EXECUTE q INTO r;
    out := out || coalesce(r, '-') || '|';
  END LOOP;
  RETURN md5(out);
END
$$;
CREATE INDEX many_bt_ab ON many USING btree (a, b DESC);
CREATE INDEX many_bt_c ON many USING btree (c);
CREATE INDEX many_bt_b ON many USING btree (b);
CREATE TABLE expected AS SELECT digest('btree') AS d;
DROP INDEX many_bt_ab, many_bt_c, many_bt_b;
CREATE TABLE answers (layout text, prefetch text, d text);
DO $$
DECLARE
  l text;
BEGIN
  FOREACH l IN ARRAY ARRAY['none', 'eytzinger', 'veb', 'btorder', 'blocked'] LOOP
    EXECUTE format('CREATE INDEX many_ab ON many USING btlayout (a, b DESC) WITH (layout = %s)', l);
    EXECUTE format('CREATE INDEX many_c ON many USING btlayout (c) WITH (layout = %s)', l);
    EXECUTE format('CREATE INDEX many_b ON many USING btlayout (b) WITH (layout = %s)', l);
    PERFORM set_config('btlayout.prefetch', 'on', true);
    INSERT INTO answers VALUES (l, 'on', digest(l));
    PERFORM set_config('btlayout.prefetch', 'off', true);
    INSERT INTO answers VALUES (l, 'off', digest(l));
    DROP INDEX many_ab, many_c, many_b;
  END LOOP;
END
$$;
SELECT layout, prefetch, d = (SELECT d FROM expected) AS same_as_btree
FROM answers ORDER BY layout, prefetch;

DROP TABLE one, many, expected, answers, ins_results;
DROP FUNCTION counted(), wrong_answers(text, int), digest(text), mismatches(text), leaf_bounds(text);
DROP PROCEDURE reset_counted(), ins_stage(text, text);
