--
-- In-page layouts: the layout option, laid-out builds, pages broken by
-- inserts and laid out again by VACUUM and btlayout_relayout(), and query
-- results equal to core btree's on every layout throughout.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;

-- The option: values, errors, and changes that apply to later rewrites
CREATE TABLE opt (k int);
CREATE INDEX opt_k ON opt USING btlayout (k) WITH (layout = eytzinger);
SELECT reloptions FROM pg_class WHERE relname = 'opt_k';
CREATE INDEX opt_bad ON opt USING btlayout (k) WITH (layout = sorted);
CREATE INDEX opt_bad ON opt USING btlayout (k) WITH (layout = '');
CREATE INDEX opt_bad ON opt USING btlayout (k) WITH (layout = 1);
ALTER INDEX opt_k SET (layout = bogus);
ALTER INDEX opt_k SET (layout = veb);
SELECT reloptions FROM pg_class WHERE relname = 'opt_k';
ALTER INDEX opt_k RESET (layout);
SELECT layout FROM btlayout_stats('opt_k');
DROP TABLE opt;

-- A small page in each layout: where each item's body sits.  Ten keys on
-- one leaf page; slot is the item's place in the layout's order.
CREATE TABLE ten (k int);
INSERT INTO ten SELECT generate_series(1, 10);
CREATE INDEX ten_eytzinger ON ten USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX ten_veb ON ten USING btlayout (k) WITH (layout = veb);
CREATE INDEX ten_btorder ON ten USING btlayout (k) WITH (layout = btorder);
CREATE INDEX ten_blocked ON ten USING btlayout (k) WITH (layout = blocked);
CREATE INDEX ten_none ON ten USING btlayout (k) WITH (layout = none);
SELECT i AS index, string_agg(p.slot::text, ' ' ORDER BY p.itemoffset) AS slots_in_key_order,
       min(p.layout) AS detected, min(p.uniform_width) AS width
FROM unnest(ARRAY['ten_eytzinger', 'ten_veb', 'ten_btorder', 'ten_blocked', 'ten_none']) i,
     btlayout_page(i::regclass, 1) p
GROUP BY i ORDER BY i;
-- bodies are contiguous in slot order: offset = first + 16 * slot
SELECT i AS index, count(DISTINCT p.lp_off - 16 * p.slot) AS distinct_bases
FROM unnest(ARRAY['ten_eytzinger', 'ten_veb', 'ten_btorder', 'ten_blocked']) i,
     btlayout_page(i::regclass, 1) p
GROUP BY i ORDER BY i;
-- Only placement differs: the items, in line pointer order, are nbtree's
SELECT i AS index,
       (SELECT array_agg(ctid || ' ' || data ORDER BY itemoffset)
        FROM bt_page_items(get_raw_page(i, 1))) =
       (SELECT array_agg(ctid || ' ' || data ORDER BY itemoffset)
        FROM bt_page_items(get_raw_page('ten_none', 1))) AS same_items
FROM unnest(ARRAY['ten_eytzinger', 'ten_veb', 'ten_btorder', 'ten_blocked']) i
ORDER BY i;
DROP TABLE ten;

-- The same data in one table per index: core btree and every layout
CREATE TABLE src AS SELECT (g * 7919) % 200003 AS k, g AS v
FROM generate_series(1, 200000) g;
CREATE FUNCTION each_table(stmt text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  tbl text;
BEGIN
  FOREACH tbl IN ARRAY ARRAY['lt_btree', 'lt_none', 'lt_eytzinger', 'lt_veb', 'lt_btorder', 'lt_blocked'] LOOP
    EXECUTE replace(stmt, '$T', tbl);
  END LOOP;
END
$$;
SELECT each_table('CREATE TABLE $T AS SELECT * FROM src');
CREATE INDEX lt_btree_k ON lt_btree USING btree (k);
CREATE INDEX lt_none_k ON lt_none USING btlayout (k) WITH (layout = none);
CREATE INDEX lt_eytzinger_k ON lt_eytzinger USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX lt_veb_k ON lt_veb USING btlayout (k) WITH (layout = veb);
CREATE INDEX lt_btorder_k ON lt_btorder USING btlayout (k) WITH (layout = btorder);
CREATE INDEX lt_blocked_k ON lt_blocked USING btlayout (k) WITH (layout = blocked);
SELECT format('VACUUM ANALYZE %I', t)
FROM unnest(ARRAY['lt_btree', 'lt_none', 'lt_eytzinger', 'lt_veb', 'lt_btorder', 'lt_blocked']) t \gexec

-- Pages whose tuple area (pd_upper .. pd_special) is not exactly their
-- items' bodies: nbtree's space accounting needs none (page.c)
CREATE FUNCTION inexact_pages(idx regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*)
  FROM generate_series(1, pg_relation_size(idx) / 8192 - 1) b,
       LATERAL page_header(get_raw_page(idx::text, b::int)) h,
       LATERAL (SELECT min(kind) AS kind, coalesce(sum(lp_len), 0) AS bytes
                FROM btlayout_page(idx, b)) p
  WHERE p.kind IN ('root', 'internal', 'leaf') AND h.special - h.upper <> p.bytes
$$;

-- Laid out at build, in exactly as many pages as without a layout
SELECT i AS index, s.layout, s.laid_out_percent,
       s.pages = (SELECT pages FROM btlayout_stats('lt_none_k')) AS same_pages
FROM unnest(ARRAY['lt_none_k', 'lt_eytzinger_k', 'lt_veb_k', 'lt_btorder_k', 'lt_blocked_k']) i,
     btlayout_stats(i::regclass) s
ORDER BY i;
SELECT btlayout_relayout('lt_eytzinger_k') AS rewritten_when_already_laid_out;
SELECT i AS index, inexact_pages(i::regclass) AS built_inexact
FROM unnest(ARRAY['lt_none_k', 'lt_eytzinger_k', 'lt_veb_k', 'lt_btorder_k', 'lt_blocked_k']) i
ORDER BY i;

-- What a table's index answers to a set of queries (the scan's order
-- included), as one digest; fails if the index is not the one scanned
CREATE FUNCTION results(tbl text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r text;
  q text;
  line text;
  plan text;
  out text := '';
BEGIN
  SET LOCAL enable_seqscan = off;
  FOREACH q IN ARRAY ARRAY[
    'SELECT count(*)::text FROM $T WHERE k = 4242',
    'SELECT string_agg(v::text, '','' ORDER BY v) FROM $T WHERE k IN (1, 7, 100000, 199999, -5)',
    'SELECT count(*) || '':'' || sum(v) FROM $T WHERE k BETWEEN 5000 AND 25000',
    'SELECT string_agg(k::text, '','') FROM (SELECT k FROM $T WHERE k > 150000 ORDER BY k LIMIT 50) s',
    'SELECT string_agg(k::text, '','') FROM (SELECT k FROM $T WHERE k < 150000 ORDER BY k DESC LIMIT 50) s',
    'SELECT count(*) || '':'' || sum(k) FROM $T WHERE k = ANY (ARRAY(SELECT generate_series(1, 200003, 97)))'
  ] LOOP
    q := replace(q, '$T', tbl);
    plan := '';
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
      plan := plan || line || ' ';
    END LOOP;
    IF position(tbl || '_k' IN plan) = 0 THEN
      RAISE EXCEPTION 'index of % not used: %', tbl, plan;
    END IF;
    EXECUTE q INTO r;
    out := out || r || '|';
  END LOOP;
  RETURN md5(out);
END
$$;

-- Every layout answers as core btree does: built, broken, laid out again
SELECT i AS tbl, results(i) = results('lt_btree') AS same_as_btree
FROM unnest(ARRAY['lt_none', 'lt_eytzinger', 'lt_veb', 'lt_btorder', 'lt_blocked']) i
ORDER BY i;

-- Inserts split pages and put new tuples anywhere: layouts break
SELECT each_table('INSERT INTO $T SELECT (g::int8 * 104729) % 200003, -g FROM generate_series(1, 30000) g');
SELECT each_table('DELETE FROM $T WHERE v % 10 = 3');
SELECT i AS index, s.laid_out_percent < 100 AS broken,
       inexact_pages(i::regclass) AS inexact_after_inserts
FROM unnest(ARRAY['lt_eytzinger_k', 'lt_veb_k', 'lt_btorder_k', 'lt_blocked_k']) i,
     btlayout_stats(i::regclass) s
ORDER BY i;
SELECT i AS tbl, results(i) = results('lt_btree') AS same_as_btree
FROM unnest(ARRAY['lt_none', 'lt_eytzinger', 'lt_veb', 'lt_btorder', 'lt_blocked']) i
ORDER BY i;

-- VACUUM lays every page out again
SELECT format('VACUUM (PARALLEL 0) %I', t)
FROM unnest(ARRAY['lt_btree', 'lt_none', 'lt_eytzinger', 'lt_veb', 'lt_btorder', 'lt_blocked']) t \gexec
SELECT i AS index, s.laid_out_percent,
       inexact_pages(i::regclass) AS inexact_after_vacuum
FROM unnest(ARRAY['lt_eytzinger_k', 'lt_veb_k', 'lt_btorder_k', 'lt_blocked_k']) i,
     btlayout_stats(i::regclass) s
ORDER BY i;
SELECT i AS tbl, results(i) = results('lt_btree') AS same_as_btree
FROM unnest(ARRAY['lt_none', 'lt_eytzinger', 'lt_veb', 'lt_btorder', 'lt_blocked']) i
ORDER BY i;
SELECT btlayout_relayout('lt_veb_k') AS rewritten_after_vacuum;

-- Changing the layout: later rewrites use the new one
ALTER INDEX lt_none_k SET (layout = blocked);
SELECT laid_out_percent = 100 AS already_blocked FROM btlayout_stats('lt_none_k');
SELECT btlayout_relayout('lt_none_k') =
       (SELECT root_pages + internal_pages + leaf_pages FROM btlayout_stats('lt_none_k')) AS rewrote_every_page;
SELECT laid_out_percent, inexact_pages('lt_none_k') AS inexact_after_relayout
FROM btlayout_stats('lt_none_k');
SELECT results('lt_none') = results('lt_btree') AS same_as_btree;

-- Pages of few large keys, full to the byte: each leaf holds a high key of
-- 24 bytes (the key (a, c), truncated) and three tuples of 2704 bytes
-- (incompressible text), no free space.  Every layout's rewrite must stay
-- inside each page: earlier builds placed such a page's tuples at pd_upper
-- 65528 in eytzinger, writing over other buffers.
CREATE TABLE lt_big (a int8, c int4, b text);
ALTER TABLE lt_big ALTER b SET STORAGE EXTERNAL;
CREATE INDEX lt_big_i ON lt_big USING btlayout (a, c, b)
  WITH (layout = none, deduplicate_items = off);
INSERT INTO lt_big
SELECT 1, c, (SELECT left(string_agg(md5(c || ':' || g), ''), 2680) FROM generate_series(1, 84) g)
FROM (SELECT c FROM generate_series(1, 60) c ORDER BY md5(c::text)) s;
SELECT count(*) > 0 AS full_pages_of_four_items
FROM generate_series(1, pg_relation_size('lt_big_i') / 8192 - 1) b,
     page_header(get_raw_page('lt_big_i', b::int)) h
WHERE h.lower = 40 AND h.upper = 40;
CREATE FUNCTION big_pages_sane() RETURNS bool LANGUAGE sql AS $$
  SELECT bool_and(h.lower <= h.upper AND h.upper <= h.special AND h.special = 8176
                  AND h.version = 4)
  FROM generate_series(0, pg_relation_size('lt_big_i') / 8192 - 1) b,
       page_header(get_raw_page('lt_big_i', b::int)) h
$$;
CREATE FUNCTION big_in_layout(l text)
  RETURNS TABLE (rewritten bigint, sane bool, inexact bigint, matches bigint)
  LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER INDEX lt_big_i SET (layout = %s)', l);
  rewritten := btlayout_relayout('lt_big_i');
  sane := big_pages_sane();
  inexact := inexact_pages('lt_big_i');
  PERFORM btlayout_check('lt_big_i', true);
  SET LOCAL enable_seqscan = off;
  SELECT count(*) INTO matches FROM lt_big WHERE a = 1 AND c BETWEEN 10 AND 29;
  RETURN NEXT;
END
$$;
SELECT l AS layout, b.*
FROM unnest(ARRAY['eytzinger', 'veb', 'btorder', 'blocked', 'eytzinger']) WITH ORDINALITY u(l, n),
     big_in_layout(l) b
ORDER BY n;
DROP TABLE lt_big;
DROP FUNCTION big_pages_sane(), big_in_layout(text);

-- Keys of several widths are laid out in the same order (and searched
-- through their line pointers)
CREATE TABLE lt_text AS SELECT left(md5(g::text), 1 + g % 40) AS t FROM generate_series(1, 50000) g;
CREATE INDEX lt_text_t ON lt_text USING btlayout (t COLLATE "C") WITH (layout = eytzinger);
SELECT laid_out_percent, leaf_pages, uniform_width_pages FROM btlayout_stats('lt_text_t');
SET enable_seqscan = off;
CREATE TABLE text_by_index AS
  SELECT (SELECT count(*) FROM lt_text WHERE t COLLATE "C" BETWEEN 'a' AND 'ab') AS n,
         (SELECT md5(string_agg(t, ',')) FROM (SELECT t FROM lt_text WHERE t > 'f' ORDER BY t COLLATE "C" LIMIT 500) s) AS m;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SELECT n = (SELECT count(*) FROM lt_text WHERE t COLLATE "C" BETWEEN 'a' AND 'ab') AS same_count,
       m = (SELECT md5(string_agg(t, ',')) FROM (SELECT t FROM lt_text WHERE t > 'f' ORDER BY t COLLATE "C" LIMIT 500) s) AS same_order
FROM text_by_index;
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;

-- Bad input to the functions
SELECT btlayout_relayout(NULL);
SELECT btlayout_relayout('lt_btree');
SELECT btlayout_relayout('lt_btree_k');
SELECT btlayout_stats('pg_class');
SELECT * FROM btlayout_page('lt_eytzinger_k', -1);
SELECT * FROM btlayout_page('lt_eytzinger_k', 100000000);
BEGIN TRANSACTION READ ONLY;
SELECT btlayout_relayout('lt_veb_k');
ROLLBACK;
CREATE ROLE btlayout_stranger;
SET ROLE btlayout_stranger;
SELECT btlayout_relayout('lt_veb_k');
SELECT * FROM btlayout_page('lt_veb_k', 1);
RESET ROLE;
DROP ROLE btlayout_stranger;

SELECT each_table('DROP TABLE $T');
DROP TABLE src, lt_text, text_by_index;
DROP FUNCTION results(text), each_table(text), inexact_pages(regclass);

-- A layout switched without a relayout: the new layout's walk meets pages
-- whose bodies sit in the old one's placement (veb), with items inserted
-- since, and lookups that do not rewrite them (btlayout.lookup_relayout =
-- off, as on a standby).  Every lookup must still give nbtree's answer:
-- the walk's answer counts only as far as the line pointers confirm it.
SELECT setseed(0.36);
CREATE TABLE w (k int8, pad int8) WITH (autovacuum_enabled = off);
INSERT INTO w SELECT g * 1000, 0 FROM generate_series(1, 6000) g;
CREATE INDEX wi ON w USING btlayout (k) INCLUDE (pad)
  WITH (layout = veb, fillfactor = 12, deduplicate_items = off);
INSERT INTO w SELECT g * 1000 + d, 0
  FROM generate_series(1, 6000) g, generate_series(1, 6) d ORDER BY random();
ALTER INDEX wi SET (layout = btorder);
SET btlayout.lookup_relayout = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT layout_searches AS walks_before FROM btlayout_search_stats() \gset
-- every key, equality lookups: each finds its one row
SELECT count(*) FILTER (WHERE (SELECT count(*) FROM w WHERE k = g * 1000 + d) <> 1)
       AS wrong_lookups
FROM generate_series(1, 6000) g, generate_series(0, 6) d;
-- forward and backward range scans
SELECT (SELECT array_agg(k) FROM (SELECT k FROM w WHERE k BETWEEN 1000000 AND 2000006
                                  ORDER BY k DESC) s) =
       (SELECT array_agg((g * 1000 + d)::int8 ORDER BY g DESC, d DESC)
        FROM generate_series(1000, 2000) g, generate_series(0, 6) d) AS backward_ok,
       (SELECT array_agg(k) FROM (SELECT k FROM w WHERE k > 3000500 ORDER BY k) s) =
       (SELECT array_agg((g * 1000 + d)::int8 ORDER BY g, d)
        FROM generate_series(3001, 6000) g, generate_series(0, 6) d) AS forward_ok;
-- the pages were walked in btorder, not only searched through line pointers
SELECT layout_searches - :walks_before > 40000 AS walked,
       layout_fallbacks > 0 AS some_fell_back
FROM btlayout_search_stats();
SELECT btlayout_check('wi', true);
RESET btlayout.lookup_relayout;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE w;
