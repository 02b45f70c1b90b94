--
-- The search path: layout-directed searches are confirmed through the line
-- pointers, stale layouts fall back to the ordinary search, and the answers
-- are the same either way, with prefetching on and off.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- Counters of this backend, as differences from a snapshot
CREATE TEMP TABLE counters AS SELECT * FROM btlayout_search_stats();
CREATE FUNCTION counted(OUT walks bigint, OUT confirmed bigint, OUT fallbacks bigint,
                        OUT ordinary bigint)
LANGUAGE sql AS $$
  SELECT s.layout_searches - c.layout_searches, s.layout_confirmed - c.layout_confirmed,
         s.layout_fallbacks - c.layout_fallbacks, s.ordinary_searches - c.ordinary_searches
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
CREATE INDEX one_k ON one USING btlayout (k) WITH (layout = eytzinger);
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
-- With 255 items both trees have the same first and last slots, so the
-- page passes the cheap checks, most walks go wrong, and the confirmation
-- catches each of them: those searches are done again through the line
-- pointers, and every answer is right.
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

-- Inserts break the layout: those pages are searched through line pointers
INSERT INTO one SELECT 2 * g FROM generate_series(1, 40) g;
CALL reset_counted();
SELECT count(*) FROM one WHERE k BETWEEN 10 AND 20;
SELECT ordinary > 0 AS searched_ordinarily FROM counted();

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

DROP TABLE one, many, expected, answers;
DROP FUNCTION counted(), wrong_answers(text, int), digest(text);
DROP PROCEDURE reset_counted();
