--
-- The access method itself: catalog entries, capabilities, reloptions and
-- the server's limitations on non-btree indexes.
--
CREATE EXTENSION btlayout;

SELECT amname, amtype, amhandler FROM pg_am WHERE amname = 'btlayout';

-- Capabilities of the access method, of an index and of its columns must
-- be btree's, property by property.
CREATE TABLE props (a int, b text, c int);
CREATE INDEX props_bt ON props USING btree (a, b DESC NULLS LAST) INCLUDE (c);
CREATE INDEX props_bl ON props USING btlayout (a, b DESC NULLS LAST) INCLUDE (c);

SELECT p AS am_property,
       pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'btree'), p) AS btree,
       pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'btlayout'), p) AS btlayout
FROM unnest(ARRAY['can_order', 'can_unique', 'can_multi_col', 'can_exclude',
                  'can_include']) p;

SELECT p AS index_property,
       pg_index_has_property('props_bt'::regclass, p) AS btree,
       pg_index_has_property('props_bl'::regclass, p) AS btlayout
FROM unnest(ARRAY['clusterable', 'index_scan', 'bitmap_scan',
                  'backward_scan']) p;

SELECT col, p AS column_property,
       pg_index_column_has_property('props_bt'::regclass, col, p) AS btree,
       pg_index_column_has_property('props_bl'::regclass, col, p) AS btlayout
FROM generate_series(1, 3) col,
     unnest(ARRAY['asc', 'desc', 'nulls_first', 'nulls_last', 'orderable',
                  'distance_orderable', 'returnable', 'search_array',
                  'search_nulls']) p
WHERE pg_index_column_has_property('props_bt'::regclass, col, p)
      IS DISTINCT FROM pg_index_column_has_property('props_bl'::regclass, col, p);

SELECT amname FROM pg_am a JOIN pg_class c ON c.relam = a.oid
WHERE c.relname = 'props_bl';

-- CREATE INDEX reports btree's build phases in pg_stat_progress_create_index
SELECT phase, pg_indexam_progress_phasename((SELECT oid FROM pg_am WHERE amname = 'btlayout'), phase)
FROM generate_series(1, 5) phase;

-- An unlogged index gets an init fork holding an empty index (a metapage)
CREATE UNLOGGED TABLE unlogged_props (a int);
CREATE INDEX unlogged_props_a ON unlogged_props USING btlayout (a);
SELECT relpersistence, pg_relation_size(oid, 'init') AS init_fork_bytes
FROM pg_class WHERE relname = 'unlogged_props_a';
INSERT INTO unlogged_props SELECT generate_series(1, 1000);
SET enable_seqscan = off;
SELECT count(*) FROM unlogged_props WHERE a BETWEEN 10 AND 19;
RESET enable_seqscan;
DROP TABLE unlogged_props;

-- Reloptions: btree's, with btree's ranges and errors
CREATE INDEX ro_default ON props USING btlayout (a);
SELECT reloptions FROM pg_class WHERE relname = 'ro_default';
CREATE INDEX ro_set ON props USING btlayout (a)
  WITH (fillfactor = 80, deduplicate_items = off);
SELECT reloptions FROM pg_class WHERE relname = 'ro_set';
ALTER INDEX ro_set SET (fillfactor = 70);
ALTER INDEX ro_set RESET (deduplicate_items);
SELECT reloptions FROM pg_class WHERE relname = 'ro_set';
CREATE INDEX ro_min ON props USING btlayout (a) WITH (fillfactor = 10);
CREATE INDEX ro_max ON props USING btlayout (a) WITH (fillfactor = 100);
CREATE INDEX ro_vac ON props USING btlayout (a)
  WITH (vacuum_cleanup_index_scale_factor = 0.5);
CREATE INDEX ro_bad ON props USING btlayout (a) WITH (fillfactor = 9);
CREATE INDEX ro_bad ON props USING btlayout (a) WITH (fillfactor = 101);
CREATE INDEX ro_bad ON props USING btlayout (a) WITH (fillfactor = 'x');
CREATE INDEX ro_bad ON props USING btlayout (a) WITH (deduplicate_items = maybe);
CREATE INDEX ro_bad ON props USING btlayout (a) WITH (no_such_option = 1);
CREATE INDEX ro_bad ON props USING btlayout (a) WITH (autovacuum_enabled = off);
ALTER INDEX ro_set SET (fillfactor = 0);
ALTER INDEX ro_set SET (no_such_option = 1);
SELECT relname FROM pg_class WHERE relname = 'ro_bad';
SELECT reloptions FROM pg_class WHERE relname = 'ro_set';

-- The options reach the server's nbtree code: with deduplicate_items = off
-- inserted duplicates stay separate tuples, with it on they merge.
CREATE TABLE dups (k int);
CREATE INDEX dups_on ON dups USING btlayout (k);
CREATE INDEX dups_off ON dups USING btlayout (k) WITH (deduplicate_items = off);
INSERT INTO dups SELECT 1 FROM generate_series(1, 3000);
SELECT pg_relation_size('dups_on') < pg_relation_size('dups_off') AS dedup_saves_space;

-- A plain unique index enforces uniqueness (the roles unique indexes play
-- for the server, which differ by version, are in sql/roles.sql)
CREATE TABLE lim (k int, v int);
CREATE UNIQUE INDEX lim_k ON lim USING btlayout (k);
INSERT INTO lim VALUES (1, 1);
INSERT INTO lim VALUES (1, 3);
SELECT * FROM lim;
-- exclusion constraints work through the index's equality operator
CREATE TABLE excl (k int, EXCLUDE USING btlayout (k WITH =));
INSERT INTO excl VALUES (1), (2);
INSERT INTO excl VALUES (1);

DROP TABLE props, dups, lim, excl;
