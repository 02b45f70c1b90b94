--
-- bench/vacuum_cost.sql: what a VACUUM costs a btlayout index against core
-- btree, after random inserts (1% of the keys) and after a bulk delete (1%
-- of the rows): index buffers read or hit, WAL bytes and time of each
-- table's VACUUM, and the state of the btlayout index's pages after it.
--
--   psql -X -v rows=10000000 -f bench/vacuum_cost.sql DB
--
-- in a database with btlayout installed, as a superuser (it forces the
-- statistics to be flushed), on a cluster where nothing else runs: the WAL
-- is measured as the whole cluster's.  Autovacuum should be off.  The
-- tables are made anew: vc_btree (core btree) and vc_btlayout (btlayout,
-- default options).
--
\set ON_ERROR_STOP on
\if :{?rows}
\else
\set rows 10000000
\endif
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
DROP TABLE IF EXISTS vc_btree, vc_btlayout, vc_result, vc_mark;
DROP FUNCTION IF EXISTS vc_steps(text, text);
RESET client_min_messages;

CREATE TABLE vc_btree (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO vc_btree SELECT g, g FROM generate_series(1, :rows) g;
CREATE TABLE vc_btlayout (k int4, v int4) WITH (autovacuum_enabled = off);
INSERT INTO vc_btlayout SELECT * FROM vc_btree;
VACUUM (FREEZE, ANALYZE) vc_btree, vc_btlayout;
CREATE INDEX vc_btree_k ON vc_btree USING btree (k);
CREATE INDEX vc_btlayout_k ON vc_btlayout USING btlayout (k);
CREATE TABLE vc_result (step text, tbl text, index_buffers bigint, wal_bytes bigint, ms numeric,
                        laid_out bigint, inserted_since bigint, out_of_layout bigint);

CREATE TABLE vc_mark (buffers bigint, lsn pg_lsn, t timestamptz);

-- The statements that measure one VACUUM of a table: its index's buffer
-- accesses (read or hit, from the statistics, flushed around it), the WAL
-- written and the time; run one by one at top level by \gexec
CREATE FUNCTION vc_steps(step text, tbl text) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT unnest(ARRAY[
    'SELECT pg_stat_force_next_flush()',
    'SELECT pg_stat_clear_snapshot()',
    format($q$INSERT INTO vc_mark SELECT idx_blks_read + idx_blks_hit, pg_current_wal_insert_lsn(), clock_timestamp()
              FROM pg_statio_user_indexes WHERE indexrelname = '%s_k'$q$, tbl),
    format('VACUUM %I', tbl),
    format($q$INSERT INTO vc_result (step, tbl, wal_bytes, ms)
              SELECT %L, %L, pg_current_wal_insert_lsn() - lsn,
                     round(extract(epoch FROM clock_timestamp() - t) * 1000, 1) FROM vc_mark$q$, step, tbl),
    'SELECT pg_stat_force_next_flush()',
    'SELECT pg_stat_clear_snapshot()',
    format($q$UPDATE vc_result SET index_buffers = (SELECT idx_blks_read + idx_blks_hit FROM pg_statio_user_indexes
                                                    WHERE indexrelname = '%s_k') - (SELECT buffers FROM vc_mark)
              WHERE step = %L AND tbl = %L$q$, tbl, step, tbl),
    CASE WHEN tbl = 'vc_btlayout' THEN
      format($q$UPDATE vc_result SET (laid_out, inserted_since, out_of_layout) =
                  (SELECT laid_out_pages, inserted_since_pages, out_of_layout_pages FROM btlayout_stats('vc_btlayout_k'))
                WHERE step = %L AND tbl = %L$q$, step, tbl)
    ELSE 'SELECT 1' END,
    'DELETE FROM vc_mark'])
$$;

CHECKPOINT;
-- 1% random inserts inside the key range, the same into both tables
SELECT setseed(0.4242);
CREATE TEMP TABLE vc_new AS SELECT (1 + floor(random() * :rows))::int4 AS k FROM generate_series(1, :rows / 100);
INSERT INTO vc_btree SELECT k, -1 FROM vc_new;
INSERT INTO vc_btlayout SELECT k, -1 FROM vc_new;
CHECKPOINT;
SELECT vc_steps('after 1% inserts', t) FROM unnest(ARRAY['vc_btree', 'vc_btlayout']) t \gexec

-- A bulk delete of 1% of the rows
DELETE FROM vc_btree WHERE v % 100 = 7;
DELETE FROM vc_btlayout WHERE v % 100 = 7;
CHECKPOINT;
SELECT vc_steps('after deleting 1%', t) FROM unnest(ARRAY['vc_btree', 'vc_btlayout']) t \gexec

SELECT step, tbl AS "table", index_buffers, pg_size_pretty(wal_bytes) AS wal, ms,
       laid_out, inserted_since, out_of_layout
FROM vc_result ORDER BY ctid;
SELECT pg_relation_size('vc_btlayout_k') / 8192 AS btlayout_index_pages;
DROP TABLE vc_btree, vc_btlayout, vc_result, vc_mark;
DROP FUNCTION vc_steps(text, text);
