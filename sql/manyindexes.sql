--
-- A backend that uses many btlayout indexes: more than any count the
-- per-backend state could be capped at, with the copies of upper levels
-- squeezed so that their pages are evicted, partitions detached and
-- attached, indexes dropped and made again, reindexed and truncated
-- between lookups of one session.  Every answer is the heap's, and the
-- state keeps serving: lookups go from the copies and pin pages where
-- they were.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
-- (the second pass of the suite starts with both off)
SET btlayout.recent_buffers = 262144;
SET btlayout.upper_copy = '4MB';

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

-- Lookups of keys spread over every partition, in turn: the number whose
-- answer differs from the reference's
CREATE FUNCTION wrong(step int, n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  wrong int := 0;
  a bigint;
  b bigint;
  x int;
BEGIN
  FOR i IN 0 .. n - 1 LOOP
    x := (i * step) % 600100 - 50;
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
SELECT wrong(6007, 1000) AS wrong_first_round;
CALL reset_since();
SELECT wrong(6007, 1000) AS wrong_second_round;
SELECT hits > 1900 AS from_the_copies, misses < 100 AS few_misses,
       pins > 1500 AS pinned_where_they_were
FROM since();
SELECT count(*) AS indexes_with_copies FROM pg_inherits i
WHERE i.inhparent = 'pt'::regclass
  AND btlayout_upper_copy_pages(i.inhrelid::regclass::text || '_k_idx') > 0;

-- Room for a few (the 100 roots take about 300 kB): the pages of
-- partitions not used lately are evicted, a page at a time, the memory
-- stays near the cap, and the answers stay right
SET btlayout.upper_copy = '96kB';
SELECT wrong(6007, 1000) AS wrong_squeezed;
SELECT wrong(60007, 1000) AS wrong_squeezed_again;
SELECT sum(btlayout_upper_copy_pages(i.inhrelid::regclass::text || '_k_idx'))
         BETWEEN 1 AND 100 AS some_pages_kept,
       (SELECT sum(total_bytes) FROM pg_backend_memory_contexts
        WHERE name = 'btlayout upper levels') < 3 * 96 * 1024 AS within_the_cap
FROM pg_inherits i WHERE i.inhparent = 'pt'::regclass;
SET btlayout.upper_copy = '4MB';

-- Partitions detached and attached, an index dropped and made again, one
-- reindexed, one truncated and refilled: between lookups of this session
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

DROP TABLE pt, ref;
DROP FUNCTION wrong(int, int), since();
DROP PROCEDURE reset_since();
