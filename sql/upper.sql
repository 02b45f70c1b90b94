--
-- The copy of the upper levels: a lookup goes down this backend's copy of
-- the index's internal pages to a leaf, which must prove under its lock
-- that it holds the key's position, else the ordinary descent runs.  Every
-- scan shape is checked against a sequential scan, on a fresh copy and on
-- copies made stale by page splits, by page deletion and by the reuse of
-- deleted pages elsewhere in the key space (VACUUM without an invalidation
-- of the index), and after REINDEX and TRUNCATE; the counters show which
-- way the lookups went.  Then the memory cap, eviction, and the setting
-- and the option that turn it off.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

SET enable_bitmapscan = off;
SET btlayout.upper_copy = '4MB';

CREATE TEMP TABLE uc0 AS
  SELECT upper_copy_hits AS hits, upper_copy_misses AS misses
  FROM btlayout_search_stats();
CREATE FUNCTION uc_hits() RETURNS bigint LANGUAGE sql AS $$
  SELECT s.upper_copy_hits - u.hits FROM btlayout_search_stats() s, uc0 u
$$;
CREATE FUNCTION uc_misses() RETURNS bigint LANGUAGE sql AS $$
  SELECT s.upper_copy_misses - u.misses FROM btlayout_search_stats() s, uc0 u
$$;
CREATE PROCEDURE uc_reset() LANGUAGE sql AS $$
  UPDATE uc0 SET hits = s.upper_copy_hits, misses = s.upper_copy_misses
  FROM btlayout_search_stats() s;
$$;

\i sql/include/answers.sql

-- The scan shapes at key x: equality, >=, > (nextkey), < and <= backward,
-- a backward range, an array, an equality over duplicates that span pages
-- (forward and backward), on u (btlayout) and on v, which holds the same
-- rows in a core btree index; the number of shapes whose answers differ,
-- over keys from lo to hi by step.
CREATE FUNCTION shapes_wrong(lo int, hi int, step int) RETURNS int
LANGUAGE sql AS $$
  SELECT answers_wrong(ARRAY[
    'SELECT array_agg(k) FROM (SELECT k FROM %1$I WHERE k = %2$s) s',
    'SELECT array_agg(k) FROM (SELECT k FROM %1$I WHERE k >= %2$s ORDER BY k LIMIT 3) s',
    'SELECT array_agg(k) FROM (SELECT k FROM %1$I WHERE k > %2$s ORDER BY k LIMIT 3) s',
    'SELECT array_agg(k) FROM (SELECT k FROM %1$I WHERE k < %2$s ORDER BY k DESC LIMIT 3) s',
    'SELECT array_agg(k) FROM (SELECT k FROM %1$I WHERE k <= %2$s ORDER BY k DESC LIMIT 3) s',
    'SELECT array_agg(k) FROM (SELECT k FROM %1$I WHERE k BETWEEN %2$s - 5 AND %2$s + 5 ORDER BY k DESC) s',
    'SELECT array_agg(k) FROM (SELECT k FROM %1$I WHERE k = ANY (ARRAY[%2$s, %2$s + 1, %2$s + 700]) ORDER BY k) s',
    'SELECT count(*) FROM %1$I WHERE d = (%2$s / 7) %% 40',
    'SELECT array_agg(d) FROM (SELECT d FROM %1$I WHERE d = (%2$s / 7) %% 40 ORDER BY d DESC LIMIT 2) s'],
    ARRAY(SELECT g::text FROM generate_series(lo, hi, step) g), 'u', 'v')
$$;

-- 600,000 even keys: three levels, the root and three or more internal
-- pages above the leaves; d has 40 values whose duplicates span pages.
-- v is u with core btree indexes, the reference; each change is made to
-- both.
CREATE TABLE u (k int4, d int4) WITH (autovacuum_enabled = off);
INSERT INTO u SELECT 2 * g, (g / 7) % 40 FROM generate_series(0, 599999) g;
CREATE INDEX u_k ON u USING btlayout (k);
CREATE INDEX u_d ON u USING btlayout (d) WITH (deduplicate_items = off);
CREATE TABLE v (LIKE u) WITH (autovacuum_enabled = off);
INSERT INTO v SELECT * FROM u;
CREATE INDEX v_k ON v USING btree (k);
CREATE INDEX v_d ON v USING btree (d) WITH (deduplicate_items = off);
VACUUM u, v;
SET enable_seqscan = off;

-- Fresh: the first lookups copy the pages they pass, later ones use them
CALL uc_reset();
SELECT shapes_wrong(0, 1199998, 2999) AS wrong;
SELECT btlayout_upper_copy_pages('u_k') >= 4 AS k_copied,
       btlayout_upper_copy_pages('u_d') >= 2 AS d_copied;
SELECT uc_hits() > 1000 AS went_from_copy;

-- Page splits: odd keys into two regions, and no lookup in between
SELECT pg_relation_size('u_k') AS size_before_splits \gset
INSERT INTO u SELECT 2 * g + 1, 40 FROM generate_series(100000, 160000) g;
INSERT INTO u SELECT 2 * g + 1, 40 FROM generate_series(500000, 540000) g;
INSERT INTO v SELECT 2 * g + 1, 40 FROM generate_series(100000, 160000) g;
INSERT INTO v SELECT 2 * g + 1, 40 FROM generate_series(500000, 540000) g;
SELECT pg_relation_size('u_k') > :size_before_splits AS split;
CALL uc_reset();
SELECT shapes_wrong(150000, 1199998, 1999) AS wrong;
SELECT uc_misses() > 0 AS stale_after_splits, uc_hits() > 0 AS still_used;

-- Page deletion and reuse elsewhere, between lookups of this backend:
-- first free pages (so later splits need not extend the file), then copy,
-- then delete a region and fill the same number of rows elsewhere, VACUUM
-- (deleting the region's pages, and, once a transaction id later, putting
-- them in the free space map), and fill pages above the region and below
-- the smallest key, which reuse them.  The index keeps its size and its tuple
-- count, so VACUUM does not update its pg_class row: no invalidation, and
-- the copy is still there, naming leaves that are gone or hold other keys.
DELETE FROM u WHERE k BETWEEN 700000 AND 1000000;
DELETE FROM v WHERE k BETWEEN 700000 AND 1000000;
VACUUM u, v;
SELECT txid_current() > 0 AS xid_for_the_horizon;
VACUUM u, v;
SELECT shapes_wrong(0, 1199998, 4999) AS wrong;
SELECT pg_relation_size('u_k') AS size_before \gset
SELECT count(*) + 20000 AS rows_before FROM u \gset
WITH gone AS (DELETE FROM u WHERE k BETWEEN 300000 AND 420000 RETURNING 1)
SELECT count(*) AS deleted FROM gone \gset
DELETE FROM v WHERE k BETWEEN 300000 AND 420000;
INSERT INTO u SELECT 2 * g + 1, 41 FROM generate_series(260000, 260000 + :deleted - 1) g;
INSERT INTO v SELECT 2 * g + 1, 41 FROM generate_series(260000, 260000 + :deleted - 1) g;
VACUUM u, v;
SELECT txid_current() > 0 AS xid_for_the_horizon;
VACUUM u, v;
INSERT INTO u SELECT 2 * g + 1, 42 FROM generate_series(230000, 239999) g;
INSERT INTO v SELECT 2 * g + 1, 42 FROM generate_series(230000, 239999) g;
INSERT INTO u SELECT -g, 42 FROM generate_series(1, 10000) g;
INSERT INTO v SELECT -g, 42 FROM generate_series(1, 10000) g;
SELECT pg_relation_size('u_k') = :size_before AS reused_pages,
       (SELECT count(*) FROM u) = :rows_before AS same_rows;
SELECT btlayout_upper_copy_pages('u_k') >= 4 AS copy_kept;
CALL uc_reset();
SELECT shapes_wrong(-30000, 1199998, 1999) AS wrong;
SELECT uc_misses() > 0 AS stale_after_deletion;
SELECT btlayout_check('u_k', true);

-- REINDEX and TRUNCATE: a new relation file, the copy dropped
REINDEX INDEX u_k;
SELECT btlayout_upper_copy_pages('u_k') AS copy_after_reindex;
SELECT shapes_wrong(-30000, 1199998, 9973) AS wrong;
SELECT btlayout_upper_copy_pages('u_k') > 0 AS copied_again;
TRUNCATE u, v;
SELECT btlayout_upper_copy_pages('u_k') AS copy_after_truncate;
INSERT INTO u SELECT 3 * g, g % 40 FROM generate_series(0, 299999) g;
INSERT INTO v SELECT * FROM u;
SELECT shapes_wrong(0, 899997, 9973) AS wrong;

-- The cap: 12kB holds three images (an image holds what its page holds,
-- not its free space, and the keys of its pivots), with the copies' hash
-- tables; a lookup below an internal page the copy has no room for
-- searches that page in its buffer, then goes to the leaf, which must
-- prove itself as before
SET btlayout.upper_copy = '12kB';
SELECT btlayout_upper_copy_pages('u_k') AS copy_after_new_cap;
CALL uc_reset();
SELECT shapes_wrong(0, 899997, 9973) AS wrong;
SELECT btlayout_upper_copy_pages('u_k') + btlayout_upper_copy_pages('u_d')
  AS pages_at_8kb, uc_hits() > 0 AS went_below_the_cap;
-- Lookups of u_k alone: the first makes its copy (the root's image and
-- the image of the internal page below it), the next ones go from it,
-- through an internal page in its buffer where the copy has no image (but
-- for a key that is its leaf's first item, which is not before the key:
-- that leaf cannot prove itself, and the ordinary descent runs)
CREATE PROCEDURE k_lookups(step int) LANGUAGE plpgsql AS $$
DECLARE
  a bigint;
  b bigint;
BEGIN
  FOR i IN 0 .. 999 LOOP
    SELECT count(*) INTO a FROM u WHERE k = i * step;
    SELECT count(*) INTO b FROM v WHERE k = i * step;
    IF a <> b THEN
      RAISE NOTICE 'k = %: % rows instead of %', i * step, a, b;
    END IF;
  END LOOP;
END
$$;
SET btlayout.upper_copy = '12kB';
CALL uc_reset();
CALL k_lookups(897);
SELECT s.internal_pages > 0 AS pages_below_root, s.root_pages
FROM btlayout_stats('u_k') s;
SELECT btlayout_upper_copy_pages('u_k') AS pages, uc_hits() >= 990 AS hits,
       uc_misses() <= 9 AS misses;
-- Splits below the root's image: the internal pages it names have split,
-- and the lookups whose leaf moved to a new page miss once, then the
-- ordinary descent refreshes the image
INSERT INTO u SELECT 3 * g + 1, 43 FROM generate_series(0, 299999) g;
INSERT INTO v SELECT 3 * g + 1, 43 FROM generate_series(0, 299999) g;
CALL uc_reset();
CALL k_lookups(898);
SELECT btlayout_upper_copy_pages('u_k') AS pages, uc_hits() > 900 AS hits,
       uc_misses() > 0 AS misses_after_splits;

-- Two indexes in 12kB: the lookups of u_d's keys need the room u_k's
-- images take.  Those were used a moment ago, so at first none is evicted
-- (the lookups of u_d search its internal pages in their buffers); once
-- u_k's images have gone unused for a while (eight times the images held,
-- at least 64 lookups) the eviction hand takes them, page by page, and
-- u_d's are made.  (One lookup per key, through a nested loop: 17 and
-- later hand scans with array keys to nbtree's own search.)
SET btlayout.upper_copy = '12kB';
SELECT count(*) FROM u WHERE k = 300000;
SELECT btlayout_upper_copy_pages('u_k') > 0 AS k_copied;
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) FROM generate_series(0, 439) g JOIN u ON u.d = g % 44;
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT btlayout_upper_copy_pages('u_d') > 0 AS d_copied,
       btlayout_upper_copy_pages('u_k') AS k_pages_after_d;
SET btlayout.upper_copy = '4MB';

-- No copy is begun while no image may be made.  In 1kB, the second
-- lookups of the first of twenty new indexes of two levels make a copy or
-- two and an image or none before the cap is reached and no image used
-- lately can go: no image is made for the next 256 lookups, and the
-- others, looked up twice each meanwhile, begin no copy (each a header and
-- a hash table of about 250 bytes counted against the cap, holding
-- nothing): the bytes grow by less than 2 kB, where twenty copies take 5
DO $$
BEGIN
  FOR i IN 1 .. 20 LOOP
    EXECUTE format('CREATE TABLE bo%s (k int4) WITH (autovacuum_enabled = off);
                    INSERT INTO bo%s SELECT generate_series(1, 2000);
                    CREATE INDEX bo%s_k ON bo%s USING btlayout (k)', i, i, i, i);
  END LOOP;
END
$$;
SET btlayout.upper_copy = '1kB';
SET enable_seqscan = off;
CREATE TEMP TABLE bo_before AS
  SELECT upper_copy_bytes AS bytes, copies_full FROM btlayout_backend_state();
DO $$
DECLARE
  n bigint;
BEGIN
  FOR i IN 1 .. 20 LOOP
    FOR j IN 1 .. 2 LOOP
      EXECUTE format('SELECT count(*) FROM bo%s WHERE k = %s', i, 100 * j) INTO n;
    END LOOP;
  END LOOP;
END
$$;
RESET enable_seqscan;
SELECT s.copies_full > b.copies_full AS no_room_for_images,
       s.upper_copy_bytes - b.bytes < 2048 AS no_copies_begun_meanwhile
FROM btlayout_backend_state() s, bo_before b;
DO $$
BEGIN
  FOR i IN 1 .. 20 LOOP
    EXECUTE format('DROP TABLE bo%s', i);
  END LOOP;
END
$$;
DROP TABLE bo_before;
SET btlayout.upper_copy = '4MB';

-- Out of memory anywhere in the making of a copy: for n = 1 .. 24 the n-th
-- allocation of the copies' memory fails (the copy's header, its hash
-- table, an image, the table grown, the eviction ring), each time from
-- copies dropped; the lookup that met it fails with the error, and every
-- lookup after it is right, from whatever the copies were left holding
CREATE FUNCTION oom_rounds() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  failed int := 0;
  wrong int := 0;
BEGIN
  FOR n IN 1 .. 24 LOOP
    PERFORM set_config('btlayout.upper_copy', '4MB', false);
    PERFORM set_config('btlayout.debug_fail_upper_alloc', n::text, false);
    BEGIN
      wrong := wrong + shapes_wrong(0, 899997, 99991);
    EXCEPTION WHEN out_of_memory THEN
      failed := failed + 1;
    END;
    PERFORM set_config('btlayout.debug_fail_upper_alloc', '0', false);
    wrong := wrong + shapes_wrong(0, 899997, 49991);
  END LOOP;
  RETURN format('%s of 24 rounds failed, %s wrong', failed, wrong);
END
$$;
SELECT oom_rounds();
SELECT shapes_wrong(0, 899997, 9973) AS wrong_after;
SELECT btlayout_upper_copy_pages('u_k') > 0 AS copied_after;
DROP FUNCTION oom_rounds();

-- Switched off: by the setting, then by the index's option.  The setting
-- frees every copy when its transaction ends, before any lookup
SELECT count(*) FROM u WHERE k = 300000;
SELECT btlayout_upper_copy_pages('u_k') > 0 AS copy_before_off;
CALL uc_reset();
SET btlayout.upper_copy = 0;
SELECT btlayout_upper_copy_pages('u_k') AS pages_with_setting_off,
       (SELECT coalesce(sum(total_bytes), 0) <= 8192
        FROM pg_backend_memory_contexts
        WHERE name = 'btlayout upper levels') AS memory_freed;
SELECT shapes_wrong(0, 899997, 19997) AS wrong;
SELECT uc_hits() AS hits_with_setting_off, uc_misses() AS misses_with_setting_off;
SET btlayout.upper_copy = '4MB';
ALTER INDEX u_k SET (upper_copy = off);
ALTER INDEX u_d SET (upper_copy = off);
SELECT shapes_wrong(0, 899997, 19997) AS wrong;
SELECT uc_hits() AS hits_with_option_off;
ALTER INDEX u_k RESET (upper_copy);
ALTER INDEX u_d RESET (upper_copy);

-- Keys compared as bytes (text under "C"): the images hold each key
-- without the bytes its page's keys share.  Keys of 66 bytes sharing 55
-- or so within a page, duplicates whose pivots carry heap TIDs, keys of
-- 207 bytes (whose rest needs a 4-byte header), probed by existing keys,
-- by keys between, below and above them, and by keys that are proper
-- prefixes of a page's shared bytes, against a core btree index.
CREATE TABLE ut (s text COLLATE "C") WITH (autovacuum_enabled = off);
INSERT INTO ut
  SELECT 'https://www.example.com/catalog/category-' ||
         lpad((g % 5)::text, 2, '0') || '/product/' ||
         lpad(g::text, 9, '0') || '.html'
  FROM generate_series(1, 200000) g;
INSERT INTO ut SELECT 'https://www.example.com/catalog/category-50/product/'
  FROM generate_series(1, 3000);
INSERT INTO ut SELECT repeat('long-', 40) || lpad(g::text, 7, '0')
  FROM generate_series(1, 20000) g;
CREATE INDEX ut_s ON ut USING btlayout (s);
-- (utv gets core btree's index only: the reference must not be ours)
CREATE TABLE utv (LIKE ut) WITH (autovacuum_enabled = off);
INSERT INTO utv SELECT * FROM ut;
CREATE INDEX utv_s ON utv USING btree (s);
VACUUM ut, utv;
CREATE FUNCTION text_shapes_wrong(step int) RETURNS int
LANGUAGE sql AS $$
  SELECT answers_wrong(ARRAY[
    'SELECT count(*) FROM %1$I WHERE s = %2$L',
    'SELECT string_agg(s, '','') FROM (SELECT s FROM %1$I WHERE s >= %2$L ORDER BY s LIMIT 3) x',
    'SELECT string_agg(s, '','') FROM (SELECT s FROM %1$I WHERE s > %2$L ORDER BY s LIMIT 3) x',
    'SELECT string_agg(s, '','') FROM (SELECT s FROM %1$I WHERE s < %2$L ORDER BY s DESC LIMIT 3) x',
    'SELECT string_agg(s, '','') FROM (SELECT s FROM %1$I WHERE s <= %2$L ORDER BY s DESC LIMIT 3) x'],
    ARRAY(SELECT p FROM (SELECT s, row_number() OVER (ORDER BY s) AS n FROM utv) k,
            LATERAL (VALUES (s), (s || '!'), (left(s, -1)), (left(s, -6)),
                            (left(s, 30)), (left(s, 50)), (left(s, -1) || '~')) v(p)
          WHERE n % step = 0
          UNION ALL
          SELECT unnest(ARRAY['', 'a', 'https://', 'https://www.example.com/catalog/category-',
                              'https://www.example.com/catalog/category-50/product/',
                              'https://www.example.com/catalog/category-50/product/0',
                              repeat('long-', 40), 'm', 'zzz'])),
    'ut', 'utv')
$$;
CALL uc_reset();
SELECT text_shapes_wrong(499) AS wrong;
SELECT s.internal_pages + s.root_pages = btlayout_upper_copy_pages('ut_s')
       AS all_copied, uc_hits() > 1000 AS went_from_copy,
       uc_hits() > 20 * uc_misses() AS few_misses
FROM btlayout_stats('ut_s') s;
-- 64kB would hold eight whole pages, or ten without their free space;
-- it holds more than twice that many images (and lookups below the pages
-- it has no room for search those in their buffers)
SET btlayout.upper_copy = '64kB';
SELECT text_shapes_wrong(1999) AS wrong;
SELECT btlayout_upper_copy_pages('ut_s') > 20 AS more_than_twice,
       btlayout_upper_copy_pages('ut_s') < s.internal_pages + s.root_pages
       AS not_all
FROM btlayout_stats('ut_s') s;
-- A key that does not compare as bytes (name against text) takes the
-- ordinary descent: the copy serves bytewise keys only
CALL uc_reset();
SELECT count(*) FROM ut WHERE s = 'https://www.example.com/catalog/category-50/product/'::name;
SELECT uc_hits() AS hits_by_name, uc_misses() AS misses_by_name;
SET btlayout.upper_copy = '4MB';
-- The copy's shape is the index's, whatever search made it: a copy made
-- by lookups by name (changing an option drops the old one) keeps its
-- keys without their prefix all the same, and a second lookup by name
-- still takes the ordinary descent
ALTER INDEX ut_s SET (upper_copy = on);
CALL uc_reset();
SELECT count(*) FROM ut WHERE s = 'https://www.example.com/catalog/category-50/product/'::name;
SELECT count(*) FROM ut WHERE s = 'https://www.example.com/catalog/category-50/product/'::name;
SELECT uc_hits() AS hits_by_name_first, uc_misses() AS misses_by_name_first,
       btlayout_upper_copy_pages('ut_s') > 0 AS copied_by_name;
SELECT text_shapes_wrong(4999) AS wrong_copy_made_by_name;

-- Images made again as their pages change leave holes in the blocks of
-- a copy's memory, and a copy whose blocks hold more than twice what it
-- keeps (and a block) starts over.  300 rounds of inserts that split
-- leaves all over ut's key space, each followed by lookups of the new
-- keys, those under a split leaf through the ordinary descent, which
-- makes the images of the changed parents again; then the copy's memory
-- against that of a fresh copy of the same pages.  (Without the restart,
-- the churned copy took 2.2 times the fresh one's memory on 18: 752 kB.)
CREATE PROCEDURE ut_churn(rounds int) LANGUAGE plpgsql AS $$
DECLARE
  found bigint;
BEGIN
  FOR r IN 1 .. rounds LOOP
    INSERT INTO ut
      SELECT 'https://www.example.com/catalog/category-' ||
             lpad((g % 5)::text, 2, '0') || '/product/' ||
             lpad(g::text, 9, '0') || '-' || r || '.html'
      FROM generate_series(r, 200000, 97) g;
    SELECT count(*) INTO found FROM generate_series(r, 200000, 97) g
      JOIN ut ON ut.s = 'https://www.example.com/catalog/category-' ||
                        lpad((g % 5)::text, 2, '0') || '/product/' ||
                        lpad(g::text, 9, '0') || '-' || r || '.html';
    IF found <> (200000 - r) / 97 + 1 THEN
      RAISE EXCEPTION 'round %: % new keys found', r, found;
    END IF;
  END LOOP;
END
$$;
CREATE TEMP TABLE churned (bytes bigint, pages int);
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET btlayout.upper_copy = '4MB';
CALL uc_reset();
CALL ut_churn(300);
SELECT uc_misses() > 1000 AS descents_after_splits;
INSERT INTO churned SELECT c.total_bytes, btlayout_upper_copy_pages('ut_s')
  FROM pg_backend_memory_contexts c WHERE c.name = 'btlayout upper levels';
-- a fresh copy: the setting drops every copy, then every key is looked up
-- (in this backend: parallel workers would have copies of their own)
SET btlayout.upper_copy = '4MB';
SET max_parallel_workers_per_gather = 0;
SELECT count(*) FROM ut t1 WHERE EXISTS (SELECT 1 FROM ut t2 WHERE t2.s = t1.s);
RESET max_parallel_workers_per_gather;
SELECT ch.bytes <= 2 * c.total_bytes + 65536 AS bounded,
       ch.pages <= btlayout_upper_copy_pages('ut_s') AS same_pages_or_fewer
FROM churned ch, pg_backend_memory_contexts c
WHERE c.name = 'btlayout upper levels';
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- A temporary index (local buffers) is served the same way
CREATE TEMP TABLE tu (k int4);
INSERT INTO tu SELECT g FROM generate_series(0, 299999) g;
CREATE INDEX tu_k ON tu USING btlayout (k);
CALL uc_reset();
DO $$
DECLARE
  n int;
BEGIN
  FOR i IN 0 .. 2000 LOOP
    SELECT count(*) INTO n FROM tu WHERE k = i * 101;
  END LOOP;
END
$$;
SELECT uc_hits() > 1000 AS temp_went_from_copy;

-- Indexes that are not WAL-logged (unlogged: shared buffers; temporary:
-- local buffers), whose pages change without their LSN changing: an
-- ordinary descent keeps the image of a page whose digest is unchanged
-- and makes again that of a page that changed.  URL keys under "C" (images
-- without their pages' shared bytes).  Lookups of every key take one
-- ordinary descent for the first key of each leaf but the leftmost (that
-- key cannot prove its leaf), and at most one more per internal page the
-- copy lacks; those descents pass unchanged pages.  (When each of them
-- made its images again, the holes those left dropped the copy again and
-- again: 17,566 misses on 3,449 leaves.)  Then splits below the images,
-- and lookups of absent keys (no first items): the first pass misses
-- where leaves moved, and its ordinary descents make the changed pages'
-- images again; the second goes from the copy every time.
CREATE FUNCTION url(n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'https://www.example.com/catalog/category-' || lpad((n % 50)::text, 2, '0') ||
         '/product/' || lpad(n::text, 9, '0') || '.html'
$$;
CREATE FUNCTION absent_lookups(t regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  found bigint := 0;
BEGIN
  FOR i IN 0 .. 1999 LOOP
    EXECUTE format('SELECT count(*) FROM %s WHERE k = $1', t)
      INTO n USING url(4 * (i * 149) + 1);
    found := found + n;
  END LOOP;
  RETURN found;
END
$$;
CREATE FUNCTION unlogged_copy(t regclass, i regclass)
RETURNS TABLE (step text, ok boolean, detail text) LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  s record;
BEGIN
  n := absent_lookups(t);
  step := 'copied';
  ok := n = 0 AND btlayout_upper_copy_pages(i) > 1;
  detail := CASE WHEN NOT ok THEN format('%s found, %s pages', n, btlayout_upper_copy_pages(i)) END;
  RETURN NEXT;

  CALL uc_reset();
  EXECUTE format('SELECT count(*) FROM generate_series(0, 299999) g JOIN %s x ON x.k = url(4 * g)', t)
    INTO n;
  SELECT * INTO s FROM btlayout_stats(i);
  step := 'every key: a miss per leaf';
  ok := n = 300000 AND uc_hits() + uc_misses() = 300000 AND
        uc_misses() BETWEEN s.leaf_pages - 1
                        AND s.leaf_pages - 1 + s.internal_pages + s.root_pages;
  detail := CASE WHEN NOT ok THEN format('%s found, %s leaves, %s hits, %s misses',
                                         n, s.leaf_pages, uc_hits(), uc_misses()) END;
  RETURN NEXT;

  EXECUTE format('INSERT INTO %s SELECT url(4 * g + 2) FROM generate_series(0, 299999) g', t);
  CALL uc_reset();
  n := absent_lookups(t);
  step := 'after splits: stale';
  ok := n = 0 AND uc_misses() > 0;
  detail := CASE WHEN NOT ok THEN format('%s found, %s misses', n, uc_misses()) END;
  RETURN NEXT;

  CALL uc_reset();
  n := absent_lookups(t);
  step := 'again: every lookup from the copy';
  ok := n = 0 AND uc_hits() = 2000 AND uc_misses() = 0;
  detail := CASE WHEN NOT ok THEN format('%s found, %s hits, %s misses',
                                         n, uc_hits(), uc_misses()) END;
  RETURN NEXT;
END
$$;
CREATE UNLOGGED TABLE nl (k text COLLATE "C") WITH (autovacuum_enabled = off);
INSERT INTO nl SELECT url(4 * g) FROM generate_series(0, 299999) g;
CREATE INDEX nl_k ON nl USING btlayout (k);
CREATE TEMP TABLE nt (k text COLLATE "C");
INSERT INTO nt SELECT url(4 * g) FROM generate_series(0, 299999) g;
CREATE INDEX nt_k ON nt USING btlayout (k);
SET enable_seqscan = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET btlayout.upper_copy = '4MB';
SELECT * FROM unlogged_copy('nl', 'nl_k');
SET btlayout.upper_copy = '4MB';
SELECT * FROM unlogged_copy('nt', 'nt_k');
RESET enable_seqscan;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- Integer keys: the copy of an index keeps each internal page's pivots'
-- normalized keys and downlinks in arrays, searched instead of the page
-- (btlayout.upper_copy_keys; normkey.c).  int2 with duplicates across
-- pages (pivots that keep a heap TID), int4 with NULLs and int8 beyond the
-- int4 range, probed in every scan shape by arguments of their own type
-- and of wider and narrower ones, against core btree.  The same lookups
-- with the keys and without must go the same ways: a leaf the keys named
-- wrongly fails its proof, a miss more.
CREATE TABLE ki (a int2, b int4, c int8) WITH (autovacuum_enabled = off);
INSERT INTO ki SELECT (g / 20) % 30000 - 15000, CASE WHEN g % 97 <> 0 THEN g / 3 END,
                      (g - 150000) * 3000000000
  FROM generate_series(0, 299999) g;
CREATE INDEX ki_a ON ki USING btlayout (a) WITH (deduplicate_items = off);
CREATE INDEX ki_b ON ki USING btlayout (b);
CREATE INDEX ki_c ON ki USING btlayout (c);
CREATE TABLE kv (LIKE ki) WITH (autovacuum_enabled = off);
INSERT INTO kv SELECT * FROM ki;
CREATE INDEX kv_a ON kv USING btree (a) WITH (deduplicate_items = off);
CREATE INDEX kv_b ON kv USING btree (b);
CREATE INDEX kv_c ON kv USING btree (c);
VACUUM ki, kv;
CREATE TEMP TABLE kc0 AS SELECT upper_key_searches AS n FROM btlayout_search_stats();
CREATE FUNCTION key_searches() RETURNS bigint LANGUAGE sql AS $$
  SELECT s.upper_key_searches - k.n FROM btlayout_search_stats() s, kc0 k
$$;
CREATE FUNCTION int_shapes_wrong() RETURNS int LANGUAGE sql AS $$
  SELECT answers_wrong(ARRAY[
    'SELECT count(*) FROM %1$I WHERE a = %2$s',
    'SELECT array_agg(a) FROM (SELECT a FROM %1$I WHERE a > %2$s ORDER BY a LIMIT 2) s',
    'SELECT array_agg(a) FROM (SELECT a FROM %1$I WHERE a <= %2$s ORDER BY a DESC LIMIT 2) s',
    'SELECT count(*) FROM %1$I WHERE b = %2$s',
    'SELECT array_agg(b) FROM (SELECT b FROM %1$I WHERE b >= %2$s ORDER BY b LIMIT 2) s',
    'SELECT array_agg(b) FROM (SELECT b FROM %1$I WHERE b < %2$s ORDER BY b DESC LIMIT 2) s',
    'SELECT count(*) FROM %1$I WHERE c = greatest(least(%2$s, 3000000), -3000000)::int8 * 3000000000',
    'SELECT array_agg(c) FROM (SELECT c FROM %1$I WHERE c > greatest(least(%2$s, 3000000), -3000000)::int8 * 3000000000 ORDER BY c LIMIT 2) s',
    'SELECT array_agg(c) FROM (SELECT c FROM %1$I WHERE c <= greatest(least(%2$s, 3000000), -3000000)::int8 * 3000000000 - 1 ORDER BY c DESC LIMIT 2) s',
    'SELECT array_agg(c) FROM (SELECT c FROM %1$I WHERE c < %2$s ORDER BY c DESC LIMIT 2) s'],
    ARRAY(SELECT g::text FROM generate_series(-16000, 120000, 997) g
          UNION ALL SELECT unnest(ARRAY['-15000', '14999', '-40000', '40000',
                                        '-5000000000', '5000000000'])),
    'ki', 'kv')
$$;
SET enable_seqscan = off;
SET btlayout.upper_copy = '4MB';
SET btlayout.upper_copy_keys = off;
SELECT int_shapes_wrong() AS wrong;
CALL uc_reset();
SELECT int_shapes_wrong() AS wrong_without_keys;
CREATE TEMP TABLE without_keys AS
  SELECT uc_hits() AS hits, uc_misses() AS misses, key_searches() AS key_searches;
SET btlayout.upper_copy_keys = on;
CALL uc_reset();
UPDATE kc0 SET n = upper_key_searches FROM btlayout_search_stats();
SELECT int_shapes_wrong() AS wrong_with_keys;
SELECT w.key_searches AS key_searches_when_off, key_searches() > 1000 AS searched_by_keys,
       uc_hits() = w.hits AS same_hits, uc_misses() = w.misses AS same_misses,
       uc_hits() > 1000 AS went_from_copy
FROM without_keys w;
-- The index option turns the keys off for one index.  (Changing it
-- invalidates the index, dropping its copy: a first lookup makes the copy
-- again, the second goes from it, through two internal pages.)
ALTER INDEX ki_c SET (upper_copy_keys = off);
SELECT count(*) FROM ki WHERE c = 3000000000;
UPDATE kc0 SET n = upper_key_searches FROM btlayout_search_stats();
CALL uc_reset();
SELECT count(*) FROM ki WHERE c = 3000000000;
SELECT key_searches() AS key_searches_option_off, uc_hits() + uc_misses() AS from_copy;
ALTER INDEX ki_c RESET (upper_copy_keys);
SELECT count(*) FROM ki WHERE c = 3000000000;
UPDATE kc0 SET n = upper_key_searches FROM btlayout_search_stats();
CALL uc_reset();
SELECT count(*) FROM ki WHERE c = 3000000000;
SELECT key_searches() AS key_searches_option_reset, uc_hits() + uc_misses() AS from_copy;
-- The copy made by a search that compares no integer (IS NULL, which
-- copies the rightmost pages) has the keys all the same: its shape is the
-- index's.  (The first lookup by value copies the internal page it needs.)
ALTER INDEX ki_c SET (upper_copy_keys = on);
SELECT count(*) FROM ki WHERE c IS NULL;
SELECT count(*) FROM ki WHERE c = 3000000000;
UPDATE kc0 SET n = upper_key_searches FROM btlayout_search_stats();
CALL uc_reset();
SELECT count(*) FROM ki WHERE c = 3000000000;
SELECT key_searches() AS key_searches_copy_made_by_null, uc_hits() AS from_copy;
-- A descending column's pages are searched by their keys too
CREATE INDEX ki_b_desc ON ki USING btlayout (b DESC);
DROP INDEX ki_b;
SELECT int_shapes_wrong() AS wrong_desc;
UPDATE kc0 SET n = upper_key_searches FROM btlayout_search_stats();
CALL uc_reset();
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) FROM generate_series(1, 2000) g JOIN ki ON ki.b = g * 47;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT key_searches() > 1000 AS desc_by_keys, uc_hits() > 1000 AS desc_from_copy;
RESET btlayout.upper_copy_keys;
RESET enable_seqscan;

-- Normalized keys of every shape that encodes (normkey.c): key columns of
-- integers, dates and times, floats, uuid, bool, "char", oid and strings
-- compared as bytes, in any mix, DESC, NULLS FIRST or LAST, strings past
-- the bytes a key keeps (tl), duplicates (pivots with heap TIDs), values
-- at each type's edges.  normkey_check(), a test function of the library,
-- is the property test: probes made of the keys of leaf tuples (every
-- prefix of their columns; plain, treating a truncated pivot equal on all
-- of them as equal, and nextkey) against every tuple of the internal
-- pages and of 8 leaves, the strings' decision against btl_compare()'s
-- wherever the strings decide; and the search of each internal page's
-- keys against the item the page's own items choose.
CREATE FUNCTION normkey_check(index regclass, probes int, seed int,
  OUT tuples bigint, OUT pairs bigint, OUT decided bigint,
  OUT mismatches bigint, OUT searches bigint, OUT search_mismatches bigint)
  AS '$libdir/btlayout', 'btlayout_normkey_check' LANGUAGE C STRICT;
CREATE TABLE nk (i2 int2, i4 int4, i8 int8, d date, ts timestamptz,
  f4 float4, f8 float8, u uuid, b bool, ch "char", o oid,
  tc text COLLATE "C", by bytea, bp char(6) COLLATE "C", tl text COLLATE "C",
  nm numeric)
  WITH (autovacuum_enabled = off);
INSERT INTO nk SELECT
  CASE WHEN g % 101 = 0 THEN NULL WHEN g % 103 = 0 THEN -32768
       WHEN g % 107 = 0 THEN 32767 ELSE g % 700 - 350 END,
  CASE WHEN g % 89 = 0 THEN NULL WHEN g % 109 = 0 THEN -2147483648
       WHEN g % 113 = 0 THEN 2147483647 ELSE g / 7 END,
  CASE WHEN g % 127 = 0 THEN -9223372036854775808
       WHEN g % 131 = 0 THEN 9223372036854775807 ELSE g * 7919 % 100003 * 3 END,
  CASE WHEN g % 137 = 0 THEN 'infinity' WHEN g % 139 = 0 THEN '-infinity'
       ELSE date '2000-01-01' + g % 5000 END,
  CASE WHEN g % 149 = 0 THEN 'infinity' WHEN g % 151 = 0 THEN '-infinity'
       ELSE timestamptz '2020-01-01 00:00+00' + g * interval '17 minutes' END,
  CASE g % 11 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN 'Infinity'
       WHEN 3 THEN '-Infinity' WHEN 4 THEN '0'
       ELSE ((g % 1000 - 500) / 3.0)::float4 END,
  CASE g % 13 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN 'Infinity'
       WHEN 3 THEN '-Infinity' WHEN 4 THEN '1e-300' WHEN 5 THEN NULL
       ELSE ((g - 30000) / 7.0)::float8 END,
  CASE WHEN g % 157 = 0 THEN '00000000-0000-0000-0000-000000000000'
       WHEN g % 163 = 0 THEN 'ffffffff-ffff-ffff-ffff-ffffffffffff'
       ELSE md5((g % 20000)::text)::uuid END,
  CASE WHEN g % 173 = 0 THEN NULL ELSE g % 3 <> 0 END,
  chr(g % 250 + 1)::"char",
  (CASE WHEN g % 179 = 0 THEN 4294967295 ELSE g % 5000 END)::oid,
  CASE g % 13 WHEN 0 THEN '' WHEN 1 THEN 'ab' WHEN 2 THEN 'abc'
       WHEN 3 THEN 'ab ' WHEN 4 THEN NULL ELSE 'k' || g % 3000 END,
  CASE g % 9 WHEN 0 THEN '\x00'::bytea WHEN 1 THEN '\x0000'
       WHEN 2 THEN '\x00ff' WHEN 3 THEN '\xff' WHEN 4 THEN ''
       ELSE int4send(g % 4000) END,
  CASE g % 5 WHEN 0 THEN 'ab  ' WHEN 1 THEN 'ab' ELSE 'b' || g % 999 END,
  CASE WHEN g % 2 = 0 THEN repeat('x', 300) ELSE repeat('x', 248) END || g % 500,
  CASE g % 19 WHEN 0 THEN 'NaN' WHEN 1 THEN 'Infinity' WHEN 2 THEN '-Infinity'
       WHEN 3 THEN 0 WHEN 4 THEN '-0.000' WHEN 5 THEN NULL
       WHEN 6 THEN 1e-300 * (g % 7) WHEN 7 THEN -1e300 * (g % 5)
       WHEN 8 THEN (g % 100) * 100 WHEN 9 THEN -(g % 1000)::numeric / 1000 * 1.000
       WHEN 10 THEN 123456789012345678901234567890.123456789 + g % 50
       WHEN 11 THEN 0.5 + (g % 3) * 0.25
       ELSE round((g % 6000 - 3000) / 7.0, g % 9) END
FROM generate_series(1, 60000) g;
CREATE TABLE nkv (LIKE nk INCLUDING ALL) WITH (autovacuum_enabled = off);
INSERT INTO nkv SELECT * FROM nk;
-- the same indexes on both: btlayout on nk, core btree on nkv
DO $$
DECLARE
  defs text[] := ARRAY['i2', 'i4', 'i8', 'd', 'ts', 'f4', 'f8 DESC', 'u',
    'b, i2', 'ch, o, ts', 'i4, i8', 'tc, i4', 'i4 DESC NULLS LAST, tc',
    'tc, by, bp', 'f8 DESC, d NULLS FIRST', 'tl, i4', 'u, b', 'by DESC',
    'bp, tc DESC NULLS LAST', 'nm', 'i4, nm DESC NULLS FIRST'];
BEGIN
  FOR i IN 1 .. array_length(defs, 1) LOOP
    EXECUTE format('CREATE INDEX nk_%s ON nk USING btlayout (%s) WITH (deduplicate_items = off)',
                   i, defs[i]);
    EXECUTE format('CREATE INDEX nkv_%s ON nkv USING btree (%s) WITH (deduplicate_items = off)',
                   i, defs[i]);
  END LOOP;
END
$$;
VACUUM nk, nkv;
SELECT i.indexrelid::regclass AS index, c.decided > 1000 AS decides,
       c.mismatches, c.searches > 0 AS searched, c.search_mismatches
FROM pg_index i, normkey_check(i.indexrelid, 30, 47) c
WHERE i.indrelid = 'nk'::regclass
ORDER BY i.indexrelid;
-- A key column without an encoding (interval, here an expression): the
-- index's images keep no keys, and are searched as pages
CREATE INDEX nk_interval ON nk USING btlayout (i2, (i4 * interval '1 second'));
SELECT * FROM normkey_check('nk_interval', 1, 1);
DROP INDEX nk_interval;

-- Lookups through the copy in every shape, against core btree: arguments
-- of the column's type and of others (int8 beyond int4 and int2, float4
-- on float8), IS NULL, nextkey and backward scans.  With keys and without,
-- the lookups go the same ways.
CREATE FUNCTION nk_shapes_wrong() RETURNS int LANGUAGE sql AS $$
  SELECT answers_wrong(ARRAY[
    'SELECT count(*) FROM %1$I WHERE i4 = %2$s AND i8 >= 0',
    'SELECT array_agg(i4) FROM (SELECT i4 FROM %1$I WHERE i4 > %2$s ORDER BY i4 LIMIT 2) s',
    'SELECT array_agg(i4) FROM (SELECT i4 FROM %1$I WHERE i4 <= %2$s ORDER BY i4 DESC LIMIT 2) s',
    'SELECT count(*) FROM %1$I WHERE i4 = %2$s::int8 * 1000000',
    'SELECT count(*) FROM %1$I WHERE i2 = %2$s',
    'SELECT count(*) FROM %1$I WHERE i4 IS NULL AND tc > ''k'' || %2$s',
    'SELECT array_agg(tc) FROM (SELECT tc FROM %1$I WHERE i4 = %2$s / 7 ORDER BY i4 DESC NULLS LAST, tc DESC LIMIT 3) s',
    'SELECT count(*) FROM %1$I WHERE tc = ''k'' || %2$s AND i4 >= %2$s / 3',
    'SELECT count(*) FROM %1$I WHERE tc = ''k'' || mod(%2$s, 3000) AND by >= int4send(mod(abs(%2$s::int8), 4000)::int4)',
    'SELECT count(*) FROM %1$I WHERE f8 = (%2$s::int8 - 30000) / 7.0::float8',
    'SELECT array_agg(f8) FROM (SELECT f8 FROM %1$I WHERE f8 < (%2$s::int8 - 100)::float4 ORDER BY f8 DESC LIMIT 2) s',
    'SELECT count(*) FROM %1$I WHERE f8 = ''NaN'' AND d < date ''2000-01-01'' + mod(%2$s, 5000)::int4',
    'SELECT count(*) FROM %1$I WHERE f4 >= mod(%2$s, 1000)::float8 / 3 - 100',
    'SELECT count(*) FROM %1$I WHERE u = md5(mod(%2$s, 20000)::text)::uuid',
    'SELECT count(*) FROM %1$I WHERE u = md5(mod(%2$s, 20000)::text)::uuid AND b',
    'SELECT count(*) FROM %1$I WHERE b AND i2 = mod(%2$s, 700) - 350',
    'SELECT count(*) FROM %1$I WHERE ch = chr(mod(abs(%2$s::int8), 250)::int4 + 1)::"char" AND o = mod(abs(%2$s::int8), 5000)::oid',
    'SELECT count(*) FROM %1$I WHERE tl = repeat(''x'', 300 - mod(%2$s, 2)::int4 * 52) || mod(%2$s, 500) AND i4 >= 0',
    'SELECT count(*) FROM %1$I WHERE by = int4send(mod(abs(%2$s::int8), 4000)::int4)',
    'SELECT array_agg(bp) FROM (SELECT bp FROM %1$I WHERE bp >= ''b'' || mod(%2$s, 999) ORDER BY bp LIMIT 2) s',
    'SELECT count(*) FROM %1$I WHERE ts = timestamptz ''2020-01-01 00:00+00'' + mod(%2$s, 100000) * interval ''17 minutes''',
    'SELECT count(*) FROM %1$I WHERE d = date ''2000-01-01'' + mod(%2$s, 5000)::int4',
    'SELECT count(*) FROM %1$I WHERE nm = round((mod(%2$s, 6000) - 3000) / 7.0, mod(%2$s, 9)::int4)',
    'SELECT array_agg(nm) FROM (SELECT nm FROM %1$I WHERE nm > %2$s::numeric / 13 - 2000 ORDER BY nm LIMIT 3) s',
    'SELECT array_agg(nm) FROM (SELECT nm FROM %1$I WHERE nm <= -(%2$s)::numeric * 1e290 ORDER BY nm DESC LIMIT 3) s',
    'SELECT count(*) FROM %1$I WHERE i4 = %2$s / 7 AND nm IN (''NaN'', ''-Infinity'', 0, 0.75)',
    'SELECT count(*) FROM %1$I WHERE i4 = %2$s / 7 AND nm >= mod(%2$s, 100) * 100.00'],
    ARRAY(SELECT g::text FROM generate_series(0, 70000, 1231) g
          UNION ALL SELECT unnest(ARRAY['-1', '2147483647', '-2147483648',
                                        '5000000000', '-5000000000'])),
    'nk', 'nkv')
$$;
SET enable_seqscan = off;
SET btlayout.upper_copy_keys = off;
SELECT nk_shapes_wrong() AS wrong;
CALL uc_reset();
SELECT nk_shapes_wrong() AS wrong_without_keys;
CREATE TEMP TABLE nk_without_keys AS
  SELECT uc_hits() AS hits, uc_misses() AS misses;
SET btlayout.upper_copy_keys = on;
CALL uc_reset();
UPDATE kc0 SET n = upper_key_searches FROM btlayout_search_stats();
SELECT nk_shapes_wrong() AS wrong_with_keys;
SELECT key_searches() > 1000 AS searched_by_keys, uc_hits() = w.hits AS same_hits,
       uc_misses() = w.misses AS same_misses, uc_hits() > 1000 AS went_from_copy
FROM nk_without_keys w;

-- Wrong encodings cost only speed (btlayout.debug_normkey_scramble): every
-- other search key's string changed, or every image's heads out of order
-- (made anew: changing the setting drops the copies).  Every answer stays
-- right, the leaves refusing the paths the keys chose wrongly; and the
-- property test sees each.
SET btlayout.debug_normkey_scramble = keys;
CALL uc_reset();
SELECT nk_shapes_wrong() AS wrong_keys_scrambled;
SELECT uc_misses() > w.misses + 100 AS keys_scrambled_miss FROM nk_without_keys w;
SELECT mismatches > 0 AS check_sees_keys FROM normkey_check('nk_11', 30, 47);
SET btlayout.debug_normkey_scramble = pivots;
SET btlayout.upper_copy = '4MB';
SELECT nk_shapes_wrong() AS wrong_pivots_scrambled;
CALL uc_reset();
SELECT nk_shapes_wrong() AS wrong_pivots_scrambled_again;
SELECT uc_misses() > w.misses + 100 AS pivots_scrambled_miss FROM nk_without_keys w;
SELECT search_mismatches > 0 AS check_sees_pivots FROM normkey_check('nk_11', 30, 47);
RESET btlayout.debug_normkey_scramble;
SET btlayout.upper_copy = '4MB';
RESET enable_seqscan;

-- Bad values of the setting (the wording of the range error differs
-- between versions: its SQLSTATE does not)
DO $$
BEGIN
  SET btlayout.upper_copy = -1;
EXCEPTION WHEN invalid_parameter_value THEN
  RAISE NOTICE 'btlayout.upper_copy = -1 refused: %', SQLSTATE;
END
$$;
SET btlayout.upper_copy = 'lots';

DROP TABLE u, v, tu, ut, utv, churned, nl, nt, ki, kv, kc0, without_keys, nk, nkv,
  nk_without_keys;
DROP FUNCTION answers_wrong(text[], text[], text, text), shapes_wrong(int, int, int),
  text_shapes_wrong(int), uc_hits(), uc_misses(), url(int), absent_lookups(regclass),
  unlogged_copy(regclass, regclass), key_searches(), int_shapes_wrong(),
  nk_shapes_wrong(), normkey_check(regclass, int, int);
DROP PROCEDURE uc_reset(), k_lookups(int), ut_churn(int);
