--
-- Recent buffers: a descent pins each page in the buffer it was in the last
-- time this backend read it, when ReadRecentBuffer() finds it still there.
-- The answers stay right when the index gets a new relation file (REINDEX,
-- TRUNCATE), for temporary indexes (local buffers), and with the mechanism
-- off (the setting, the option), which the counter shows.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET btlayout.recent_buffers = 262144;

CREATE TEMP TABLE hits0 AS SELECT recent_buffer_hits AS n FROM btlayout_search_stats();
CREATE FUNCTION hits() RETURNS bigint LANGUAGE sql AS $$
  SELECT s.recent_buffer_hits - h.n FROM btlayout_search_stats() s, hits0 h
$$;
CREATE PROCEDURE reset_hits() LANGUAGE sql AS $$
  UPDATE hits0 SET n = (SELECT recent_buffer_hits FROM btlayout_search_stats());
$$;

-- Look up 300 keys of tbl (k = 7 * i) through its index; the number of
-- wrong counts against what the table holds (every key 0 .. max once)
CREATE FUNCTION wrong_lookups(tbl text, maxkey int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  wrong int := 0;
  got bigint;
BEGIN
  FOR i IN 0 .. 299 LOOP
    EXECUTE format('SELECT count(*) FROM %I WHERE k = $1', tbl) INTO got USING 7 * i;
    IF got <> (7 * i <= maxkey)::int THEN
      wrong := wrong + 1;
    END IF;
  END LOOP;
  RETURN wrong;
END
$$;

CREATE TABLE r (k int4);
INSERT INTO r SELECT g FROM generate_series(0, 99999) g;
CREATE INDEX r_k ON r USING btlayout (k);

-- First lookups read each page the ordinary way; later ones find them
CALL reset_hits();
SELECT wrong_lookups('r', 99999) AS wrong;
SELECT wrong_lookups('r', 99999) AS wrong;
SELECT hits() > 300 AS pinned_where_they_were;

-- A new relation file: the map of the old one is no help, answers right
SELECT pg_relation_filenode('r_k') AS before \gset
REINDEX INDEX r_k;
SELECT pg_relation_filenode('r_k') <> :before AS new_file;
SELECT wrong_lookups('r', 99999) AS wrong;
TRUNCATE r;
INSERT INTO r SELECT g FROM generate_series(0, 999) g;
SELECT wrong_lookups('r', 999) AS wrong;
SELECT wrong_lookups('r', 999) AS wrong;
-- the same blocks again, now holding other keys, in the same buffers or not
DELETE FROM r;
VACUUM r;
INSERT INTO r SELECT g FROM generate_series(0, 1999) g;
SELECT wrong_lookups('r', 1999) AS wrong;

-- Switched off: by the setting, then by the index's option
CALL reset_hits();
SET btlayout.recent_buffers = 0;
SELECT wrong_lookups('r', 1999) AS wrong;
SELECT hits() AS hits_with_setting_off;
SET btlayout.recent_buffers = 262144;
ALTER INDEX r_k SET (recent_buffers = off);
SELECT wrong_lookups('r', 1999) AS wrong;
SELECT hits() AS hits_with_option_off;
ALTER INDEX r_k RESET (recent_buffers);

-- A table of two entries (one set, the least it can be): answers right,
-- and the pages it holds are the last two read
CALL reset_hits();
SET btlayout.recent_buffers = 1;
SELECT wrong_lookups('r', 1999) AS wrong;
SELECT hits() BETWEEN 1 AND 300 AS some_pinned_where_they_were;
SET btlayout.recent_buffers = 262144;

-- One table serves every index, however many: 60 indexes of two levels
-- looked up in turn, a key of each, five rounds.  An index's first lookup
-- in a backend makes it no map; the second reads its leaf and remembers
-- where, and from the third round on every lookup pins its leaf there
DO $$
BEGIN
  FOR i IN 1 .. 60 LOOP
    EXECUTE format('CREATE TABLE rm%s (k int4) WITH (autovacuum_enabled = off);
                    INSERT INTO rm%s SELECT generate_series(0, 1999);
                    CREATE INDEX rm%s_k ON rm%s USING btlayout (k)', i, i, i, i);
  END LOOP;
END
$$;
CREATE FUNCTION wrong_in_turn(ntables int, rounds int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  wrong int := 0;
  got bigint;
BEGIN
  FOR r IN 1 .. rounds LOOP
    FOR i IN 1 .. ntables LOOP
      EXECUTE format('SELECT count(*) FROM rm%s WHERE k = $1', i)
        INTO got USING (i * 31) % 2000;
      IF got <> 1 THEN
        wrong := wrong + 1;
      END IF;
    END LOOP;
  END LOOP;
  RETURN wrong;
END
$$;
SELECT count(*) AS two_level_indexes FROM generate_series(1, 60) i,
  btlayout_stats(format('rm%s_k', i)::regclass) s
  WHERE s.root_pages = 1 AND s.internal_pages = 0 AND s.leaf_pages > 1;
CALL reset_hits();
SELECT wrong_in_turn(60, 5) AS wrong;
SELECT hits() AS pinned_in_rounds_three_to_five;
DO $$
BEGIN
  FOR i IN 1 .. 60 LOOP
    EXECUTE format('DROP TABLE rm%s', i);
  END LOOP;
END
$$;
DROP FUNCTION wrong_in_turn(int, int);

-- A temporary index lives in local buffers; it gets a map on every minor
-- release but 15.0 to 15.3, whose ReadRecentBuffer() checks the wrong
-- buffer of a local one
CREATE TEMP TABLE tr (k int4);
INSERT INTO tr SELECT g FROM generate_series(0, 49999) g;
CREATE INDEX tr_k ON tr USING btlayout (k);
CALL reset_hits();
SELECT wrong_lookups('tr', 49999) AS wrong;
SELECT wrong_lookups('tr', 49999) AS wrong;
SELECT (hits() > 300) =
       (current_setting('server_version_num')::int NOT BETWEEN 150000 AND 150003)
       AS local_pinned_where_they_were;

-- At the cap, the chunks of the least recently used map that has chunks
-- go if no lookup used it in the last 4,096 lookups, whatever the number
-- of maps without chunks (made when there was no room, or emptied), which
-- are not looked at.  Eight chunks: 100 indexes of two levels looked up
-- twice each leave a chunk to each of the first eight and none to the 92
-- others; the eight are looked up again, then one of them 4,200 times, so
-- that the other seven are cold and the 92 empty maps colder still.  The
-- lookups of an index of 20,000 keys then take the chunk of the coldest of
-- the seven (one chunk given up), and remember every block they read
DO $$
BEGIN
  FOR i IN 1 .. 100 LOOP
    EXECUTE format('CREATE TABLE rs%s (k int4) WITH (autovacuum_enabled = off);
                    INSERT INTO rs%s SELECT generate_series(0, 999);
                    CREATE INDEX rs%s_k ON rs%s USING btlayout (k)', i, i, i, i);
  END LOOP;
END
$$;
CREATE TABLE rl (k int4) WITH (autovacuum_enabled = off);
INSERT INTO rl SELECT generate_series(0, 19999);
CREATE INDEX rl_k ON rl USING btlayout (k);
-- Look up times keys of tbl, of 0 .. nkeys - 1
CREATE PROCEDURE look_up(tbl text, nkeys int, times int)
LANGUAGE plpgsql AS $$
DECLARE
  got bigint;
BEGIN
  FOR i IN 1 .. times LOOP
    EXECUTE format('SELECT count(*) FROM %I WHERE k = $1', tbl)
      INTO got USING (i * 7919) % nkeys;
  END LOOP;
END
$$;
SET btlayout.recent_buffers = 4096;
DO $$
BEGIN
  FOR r IN 1 .. 2 LOOP
    FOR i IN 1 .. 100 LOOP
      CALL look_up(format('rs%s', i), 1000, 1);
    END LOOP;
  END LOOP;
  FOR i IN 1 .. 8 LOOP
    CALL look_up(format('rs%s', i), 1000, 1);
  END LOOP;
END
$$;
SELECT recent_buffer_chunks FROM btlayout_backend_state();
CALL look_up('rs8', 1000, 4200);
SELECT chunks_given_up AS given_up, blocks_not_remembered AS not_remembered
  FROM btlayout_backend_state() \gset
CALL look_up('rl', 20000, 50);
SELECT chunks_given_up - :given_up AS chunks_given_up,
       blocks_not_remembered - :not_remembered AS blocks_not_remembered
  FROM btlayout_backend_state();
SET btlayout.recent_buffers = 262144;
DO $$
BEGIN
  FOR i IN 1 .. 100 LOOP
    EXECUTE format('DROP TABLE rs%s', i);
  END LOOP;
END
$$;
DROP TABLE rl;
DROP PROCEDURE look_up(text, int, int);

-- Bad values of the setting
SET btlayout.recent_buffers = -1;

DROP TABLE r, tr;
DROP FUNCTION wrong_lookups(text, int), hits();
DROP PROCEDURE reset_hits();
