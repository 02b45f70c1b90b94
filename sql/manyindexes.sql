--
-- A backend that uses many btlayout indexes: more than any count the
-- per-backend state could be capped at, with the copies of upper levels
-- squeezed so that their pages are evicted, partitions detached and
-- attached, indexes dropped and made again, reindexed and truncated
-- between lookups of one session, a cursor whose index's copy is evicted
-- between its fetches.  Every answer is the heap's, the state keeps
-- serving (lookups go from the copies and pin pages where they were), and
-- btlayout_backend_state() shows each eviction path taken: images evicted
-- at the cap, recent-buffer chunks given up, entries and copies freed,
-- lookup-relayout notes forgotten.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
-- (the second pass of the suite starts with both off)
SET btlayout.recent_buffers = 262144;
SET btlayout.upper_copy = '4MB';
SET btlayout.lookup_relayout = on;

CREATE TEMP TABLE s0 AS
  SELECT upper_copy_hits AS hits, upper_copy_misses AS misses,
         recent_buffer_hits AS pins FROM btlayout_search_stats();
CREATE FUNCTION since() RETURNS TABLE (hits bigint, misses bigint, pins bigint)
LANGUAGE sql AS $$
  SELECT s.upper_copy_hits - z.hits, s.upper_copy_misses - z.misses,
         s.recent_buffer_hits - z.pins
  FROM btlayout_search_stats() s, s0 z
$$;
CREATE PROCEDURE reset_since() LANGUAGE sql AS $$
  UPDATE s0 SET hits = s.upper_copy_hits, misses = s.upper_copy_misses,
                pins = s.recent_buffer_hits
  FROM btlayout_search_stats() s;
$$;
-- The backend's state: what became of it since the last state_mark()
CREATE TEMP TABLE b0 AS SELECT * FROM btlayout_backend_state();
CREATE PROCEDURE state_mark() LANGUAGE sql AS $$
  DELETE FROM b0;
  INSERT INTO b0 SELECT * FROM btlayout_backend_state();
$$;
CREATE FUNCTION state_since() RETURNS TABLE (
  entries_made bigint, entries_invalidated bigint, entries_freed bigint,
  images_evicted bigint, copies_dropped bigint, chunks_given_up bigint,
  blocks_not_remembered bigint, notes_forgotten bigint)
LANGUAGE sql AS $$
  SELECT s.entries_made - z.entries_made,
         s.entries_invalidated - z.entries_invalidated,
         s.entries_freed - z.entries_freed,
         s.images_evicted - z.images_evicted,
         s.copies_dropped - z.copies_dropped,
         s.chunks_given_up - z.chunks_given_up,
         s.blocks_not_remembered - z.blocks_not_remembered,
         s.notes_forgotten - z.notes_forgotten
  FROM btlayout_backend_state() s, b0 z
$$;

-- 100 partitions of 6,000 keys each, two levels each (a root above about
-- 150 leaves: a low fill factor), and the same rows in a table with a
-- core btree index, the reference
CREATE TABLE pt (k int4, v int4) PARTITION BY RANGE (k);
DO $$
BEGIN
  FOR i IN 0 .. 99 LOOP
    EXECUTE format('CREATE TABLE pt%s PARTITION OF pt FOR VALUES FROM (%s) TO (%s)
                    WITH (autovacuum_enabled = off)', i, i * 6000, (i + 1) * 6000);
  END LOOP;
END
$$;
INSERT INTO pt SELECT g, g % 97 FROM generate_series(0, 599999) g;
CREATE INDEX pt_k ON pt USING btlayout (k) WITH (fillfactor = 10);
CREATE TABLE ref (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO ref SELECT * FROM pt;
CREATE INDEX ref_k ON ref USING btree (k);
VACUUM ANALYZE pt, ref;
SELECT count(*) AS partitions_of_two_levels
FROM pg_inherits i, btlayout_stats(i.inhrelid::regclass::text || '_k_idx') s
WHERE i.inhparent = 'pt'::regclass AND s.root_pages = 1 AND s.leaf_pages > 100;

-- Lookups of keys spread over every partition (or over span keys from
-- lo), in turn: the number whose answer differs from the reference's
CREATE FUNCTION wrong(step int, n int, lo int DEFAULT -50, span int DEFAULT 600100)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  wrong int := 0;
  a bigint;
  b bigint;
  x int;
BEGIN
  FOR i IN 0 .. n - 1 LOOP
    x := lo + (i * step) % span;
    SELECT count(*) INTO a FROM pt WHERE k = x;
    SELECT count(*) INTO b FROM ref WHERE k = x;
    IF a <> b THEN
      wrong := wrong + 1;
    END IF;
    SELECT count(*) INTO a FROM (SELECT k FROM pt WHERE k >= x ORDER BY k LIMIT 3) s;
    SELECT count(*) INTO b FROM (SELECT k FROM ref WHERE k >= x ORDER BY k LIMIT 3) s;
    IF a <> b THEN
      wrong := wrong + 1;
    END IF;
  END LOOP;
  RETURN wrong;
END
$$;

-- Room for all: from the second round, lookups go from the copies, and
-- most pin their leaf where the first round found it (the recent-buffer
-- table grows as it fills, and replaces an entry of a full set)
SET btlayout.upper_copy = '4MB';
CALL state_mark();
SELECT wrong(6007, 1000) AS wrong_first_round;
CALL reset_since();
SELECT wrong(6007, 1000) AS wrong_second_round;
SELECT hits > 1900 AS from_the_copies, misses < 100 AS few_misses,
       pins > 1500 AS pinned_where_they_were
FROM since();
SELECT count(*) AS indexes_with_copies FROM pg_inherits i
WHERE i.inhparent = 'pt'::regclass
  AND btlayout_upper_copy_pages(i.inhrelid::regclass::text || '_k_idx') > 0;
-- an entry, a copy and a recent-buffer map per index, and nothing evicted,
-- given up or refused
SELECT s.index_entries >= 100 AS entries_for_all, d.entries_made >= 100 AS made,
       s.upper_copy_images >= 100 AS images_for_all,
       d.images_evicted AS evicted, d.chunks_given_up AS given_up,
       d.blocks_not_remembered AS not_remembered
FROM btlayout_backend_state() s, state_since() d;

-- Room for a few (the 100 roots take about 300 kB): the pages of
-- partitions not used lately are evicted, a page at a time, the memory
-- stays near the cap, and the answers stay right
SET btlayout.upper_copy = '96kB';
CALL state_mark();
SELECT wrong(6007, 1000) AS wrong_squeezed;
SELECT wrong(60007, 1000) AS wrong_squeezed_again;
SELECT sum(btlayout_upper_copy_pages(i.inhrelid::regclass::text || '_k_idx'))
         BETWEEN 1 AND 100 AS some_pages_kept,
       (SELECT sum(total_bytes) FROM pg_backend_memory_contexts
        WHERE name = 'btlayout upper levels') < 3 * 96 * 1024 AS within_the_cap
FROM pg_inherits i WHERE i.inhparent = 'pt'::regclass;
-- images went at the cap, a page at a time, and the copies hold about
-- what the cap allows (each of the 100 copies keeps its hash table, with
-- or without images)
SELECT d.images_evicted > 0 AS images_evicted,
       s.upper_copy_images BETWEEN 1 AND 100 AS images_held,
       s.upper_copy_bytes < 2 * 96 * 1024 AS bytes_near_the_cap
FROM btlayout_backend_state() s, state_since() d;

-- A cursor whose index's copy is evicted between its fetches: lookups of
-- other partitions take the image of pt5's root; the cursor goes on
-- forward, across leaves and into the next partition, and backward, from
-- where it is, and from the start again
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT k FROM pt WHERE k >= 35990 ORDER BY k;
FETCH 3 FROM c;
SELECT btlayout_upper_copy_pages('pt5_k_idx') AS pt5_copied;
CALL state_mark();
SELECT wrong(6007, 600, 300000, 300000) AS wrong_away;
SELECT btlayout_upper_copy_pages('pt5_k_idx') AS pt5_after_lookups_away,
       images_evicted > 0 AS evicted
FROM state_since();
FETCH 3 FROM c;
FETCH RELATIVE 2000 FROM c;
FETCH BACKWARD 4 FROM c;
SELECT wrong(6007, 600, 300000, 300000) AS wrong_away;
FETCH RELATIVE -2000 FROM c;
FETCH PRIOR FROM c;
FETCH FIRST FROM c;
-- the copies dropped whole (a new cap) between fetches
SET btlayout.upper_copy = '64kB';
FETCH ABSOLUTE 11 FROM c;
FETCH BACKWARD 2 FROM c;
COMMIT;
SET btlayout.upper_copy = '4MB';

-- Room for two chunks of recent buffers (1,024 blocks): lookups of every
-- partition remember the blocks of the first maps and no more (a map in
-- use keeps its chunks); once lookups of a few partitions have gone on
-- long enough (4,096 blocks read), the maps not used since are cold, and
-- give their chunks up to the maps in use
SET btlayout.recent_buffers = 1024;
CALL state_mark();
SELECT wrong(6007, 500) AS wrong_few_chunks;
SELECT wrong(6007, 6000, 300000, 300000) AS wrong_away;
SELECT d.blocks_not_remembered > 0 AS not_remembered,
       d.chunks_given_up > 0 AS given_up,
       s.recent_buffer_chunks <= 2 AS chunks_at_the_cap
FROM btlayout_backend_state() s, state_since() d;
SET btlayout.recent_buffers = 262144;

-- Partitions detached and attached, an index dropped and made again, one
-- reindexed, one truncated and refilled: between lookups of this session
CALL state_mark();
ALTER TABLE pt DETACH PARTITION pt7;
ALTER TABLE pt DETACH PARTITION pt8;
SELECT count(*) AS rows_without_two FROM pt WHERE k BETWEEN 41000 AND 55000;
ALTER TABLE pt ATTACH PARTITION pt8 FOR VALUES FROM (48000) TO (54000);
ALTER TABLE pt ATTACH PARTITION pt7 FOR VALUES FROM (42000) TO (48000);
ALTER TABLE pt DETACH PARTITION pt11;
DROP INDEX pt11_k_idx;
SELECT count(*) AS rows_without_an_index FROM pt11 WHERE k BETWEEN 66000 AND 66009;
CREATE INDEX pt11_k_idx ON pt11 USING btlayout (k) WITH (fillfactor = 10);
ALTER TABLE pt ATTACH PARTITION pt11 FOR VALUES FROM (66000) TO (72000);
REINDEX INDEX pt12_k_idx;
TRUNCATE pt13;
INSERT INTO pt13 SELECT g, g % 97 FROM generate_series(78000, 83999) g;
SELECT wrong(6007, 1000) AS wrong_after_changes;
SELECT wrong(3001, 1000) AS wrong_after_changes_again;
-- the entries of the dropped, reindexed and truncated indexes died with
-- their relcache invalidations and were freed, copies and all; pt13's
-- index, refilled by inserts, had its pages noted and laid out by lookups
SELECT d.entries_invalidated >= 3 AS invalidated, d.entries_freed >= 3 AS freed,
       d.copies_dropped >= 3 AS copies_dropped,
       s.relayout_notes > 0 AS pages_noted
FROM btlayout_backend_state() s, state_since() d;
-- dropping the partitions forgets their notes and leaves their entries
-- stale, copies freed; the catalog shows them gone where the next lookups
-- begin, 16 at a time, and they are freed
CREATE TABLE after_drop (k int4) WITH (autovacuum_enabled = off);
INSERT INTO after_drop SELECT g FROM generate_series(1, 100) g;
CREATE INDEX after_drop_k ON after_drop USING btlayout (k);
CALL state_mark();
DROP TABLE pt, ref;
SELECT d.entries_freed AS freed, d.entries_invalidated >= 100 AS invalidated,
       d.copies_dropped >= 100 AS copies_dropped,
       d.notes_forgotten > 0 AS notes_forgotten, s.relayout_notes AS notes_left
FROM btlayout_backend_state() s, state_since() d;
DO $$
BEGIN
  FOR i IN 1 .. 8 LOOP
    PERFORM count(*) FROM after_drop WHERE k = i;
  END LOOP;
END
$$;
SELECT d.entries_freed >= 100 AS freed, s.index_entries AS entries_left
FROM btlayout_backend_state() s, state_since() d;

-- Invalidations that leave an index in its file (a changed option, an
-- update of its pg_index row, as VACUUM's and ANALYZE's statistics): its
-- entry is kept with its recent-buffer map, which the next lookup pins
-- from at once, and its copy is freed and made again
INSERT INTO after_drop SELECT g FROM generate_series(101, 20000) g;
SELECT count(*) AS one FROM after_drop WHERE k = 7777;
CALL state_mark();
CALL reset_since();
ALTER INDEX after_drop_k SET (fillfactor = 80);
SELECT count(*) AS one FROM after_drop WHERE k = 7777;
UPDATE pg_index SET indisvalid = true WHERE indexrelid = 'after_drop_k'::regclass;
SELECT count(*) AS one FROM after_drop WHERE k = 7777;
SELECT d.entries_invalidated AS invalidated, d.entries_made AS made,
       d.entries_freed AS freed, d.copies_dropped AS copies_dropped,
       p.pins AS pins_from_the_map,
       btlayout_upper_copy_pages('after_drop_k') > 0 AS copied_again
FROM state_since() d, since() p;
DROP TABLE after_drop;

-- An invalidation finds the entries of its relation by OID, not by a pass
-- over every entry.  200 indexes reindexed in one statement leave 200
-- stale entries, of which a lookup checks 16: the first lookups after it
-- mostly find their index's stale entry not yet checked and make a second
-- entry of the same OID beside it, and the checks of the lookups after
-- free the stale ones.  Each invalidation of an index reaches every entry
-- of its OID, others' reach none, and one of every relation all of them.
CREATE SCHEMA ws;
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    EXECUTE format('CREATE TABLE ws.w%s (k int4) WITH (autovacuum_enabled = off)', i);
    EXECUTE format('INSERT INTO ws.w%s SELECT g FROM generate_series(1, 100) g', i);
    EXECUTE format('CREATE INDEX w%s_k ON ws.w%s USING btlayout (k)', i, i);
  END LOOP;
END
$$;
CREATE PROCEDURE look_ws(INOUT wrong int) LANGUAGE plpgsql AS $$
DECLARE
  c bigint;
BEGIN
  wrong := 0;
  FOR i IN 1 .. 200 LOOP
    EXECUTE format('SELECT count(*) FROM ws.w%s WHERE k = %s', i, i % 100 + 1) INTO c;
    IF c <> 1 THEN
      wrong := wrong + 1;
    END IF;
  END LOOP;
END
$$;
CALL look_ws(NULL);
CALL state_mark();
REINDEX SCHEMA ws;
CALL look_ws(NULL);
SELECT d.entries_invalidated AS invalidated, d.entries_made AS made,
       d.entries_freed AS freed, s.index_entries AS held
FROM btlayout_backend_state() s, state_since() d;
CALL state_mark();
CREATE TEMP TABLE other_relation (x int4);
ALTER TABLE other_relation ADD COLUMN y int4;
DROP TABLE other_relation;
SELECT d.entries_invalidated AS invalidated_by_others FROM state_since() d;
REINDEX SCHEMA ws;
SELECT d.entries_invalidated AS invalidated_by_reindex FROM state_since() d;
CALL look_ws(NULL);
CALL state_mark();
SET client_min_messages = error;
CREATE PUBLICATION every_table FOR ALL TABLES;
RESET client_min_messages;
SELECT d.entries_invalidated AS invalidated_by_all, s.index_entries AS held
FROM btlayout_backend_state() s, state_since() d;
DROP PUBLICATION every_table;
CALL look_ws(NULL);
SELECT d.entries_made AS made, d.entries_freed AS freed, s.index_entries AS held
FROM btlayout_backend_state() s, state_since() d;
SET client_min_messages = warning;
DROP SCHEMA ws CASCADE;
RESET client_min_messages;

-- More indexes than the entries kept (4,096), each of two levels, looked
-- up once each with room for few images: the hand evicts the first ones'
-- images, and entries whose copies it emptied are trimmed like those that
-- never had one, so the entries stay near the limit instead of growing
-- with the indexes looked up
DO $$
BEGIN
  FOR b IN 0 .. 8 LOOP
    FOR i IN b * 500 + 1 .. b * 500 + 500 LOOP
      EXECUTE format('CREATE TABLE m%s (k int4) WITH (autovacuum_enabled = off)', i);
      EXECUTE format('INSERT INTO m%s SELECT g FROM generate_series(1, 200) g', i);
      EXECUTE format('CREATE INDEX m%s_k ON m%s USING btlayout (k) WITH (fillfactor = 10)', i, i);
    END LOOP;
    COMMIT;
  END LOOP;
END
$$;
SELECT count(*) AS two_levels FROM btlayout_stats('m4500_k') WHERE root_pages = 1 AND leaf_pages > 1;
SET btlayout.upper_copy = '64kB';
CREATE TEMP TABLE t0 AS SELECT entries_trimmed FROM btlayout_backend_state();
-- (a transaction every 500 tables: each lookup holds its table's lock)
CREATE PROCEDURE look_each(n int, INOUT wrong int) LANGUAGE plpgsql AS $$
DECLARE
  c bigint;
BEGIN
  wrong := 0;
  FOR i IN 1 .. n LOOP
    EXECUTE format('SELECT count(*) FROM m%s WHERE k = %s', i, i % 200 + 1) INTO c;
    IF c <> 1 THEN
      wrong := wrong + 1;
    END IF;
    IF i % 500 = 0 THEN
      COMMIT;
    END IF;
  END LOOP;
END
$$;
CALL look_each(4500, NULL);
SELECT s.entries_trimmed > t.entries_trimmed AS trimmed,
       s.index_entries <= 4096 AS entries_within_the_limit,
       s.images_evicted > 0 AS images_evicted
FROM btlayout_backend_state() s, t0 t;
CALL look_each(4500, NULL);
DO $$
BEGIN
  FOR b IN 0 .. 8 LOOP
    FOR i IN b * 500 + 1 .. b * 500 + 500 LOOP
      EXECUTE format('DROP TABLE m%s', i);
    END LOOP;
    COMMIT;
  END LOOP;
END
$$;
RESET btlayout.upper_copy;
DROP FUNCTION wrong(int, int, int, int), since(), state_since();
DROP PROCEDURE reset_since(), state_mark(), look_each(int, int), look_ws(int);
