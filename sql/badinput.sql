--
-- Bad input: every kind of bad input to btlayout, and the error it gets.
-- README.md's "Bad input" table lists these cases; after each error,
-- \echo :SQLSTATE prints the SQLSTATE the table gives.  (The BIN-collation
-- classes' refusals are in sql/bin.sql; another session's temporary index
-- is in specs/temp-index.spec.)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

CREATE TABLE bi (k int, t text, p point);
INSERT INTO bi SELECT g, g::text, point(g, g) FROM generate_series(1, 1000) g;
CREATE INDEX bi_k ON bi USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX bi_btree ON bi USING btree (k);

--
-- Reloptions, on CREATE INDEX
--
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (fillfactor = 5);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (fillfactor = 101);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (fillfactor = 'x');
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (layout = foo);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (layout = '');
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (layout = NULL);
\echo :SQLSTATE
-- an option without a value means "true"
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (layout);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (layout = 2);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (prefetch = maybe);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (prefetch = 2);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (deduplicate_items = maybe);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (deduplicate_items = '');
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (vacuum_cleanup_index_scale_factor = -1);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (vacuum_cleanup_index_scale_factor = x);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (no_such_option = 1);
\echo :SQLSTATE
-- a table's option
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (autovacuum_enabled = off);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (toast.fillfactor = 50);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (k) WITH (layout = veb, layout = btorder);
\echo :SQLSTATE
-- checked for a partitioned table's index too, before any partition has one
CREATE TABLE bi_part (k int) PARTITION BY RANGE (k);
CREATE INDEX bi_bad ON bi_part USING btlayout (k) WITH (layout = foo);
\echo :SQLSTATE
-- the values are case-insensitive, as for every enum reloption
CREATE INDEX bi_ok ON bi USING btlayout (k) WITH (layout = 'VEB', prefetch = OFF);
SELECT reloptions FROM pg_class WHERE relname = 'bi_ok';
DROP INDEX bi_ok;
SELECT count(*) AS bad_indexes FROM pg_class WHERE relname = 'bi_bad';

--
-- Reloptions, on ALTER INDEX SET and RESET
--
ALTER INDEX bi_k SET (fillfactor = 5);
\echo :SQLSTATE
ALTER INDEX bi_k SET (fillfactor = 101);
\echo :SQLSTATE
ALTER INDEX bi_k SET (fillfactor = 'x');
\echo :SQLSTATE
ALTER INDEX bi_k SET (layout = foo);
\echo :SQLSTATE
ALTER INDEX bi_k SET (layout = '');
\echo :SQLSTATE
ALTER INDEX bi_k SET (layout = NULL);
\echo :SQLSTATE
ALTER INDEX bi_k SET (prefetch = maybe);
\echo :SQLSTATE
ALTER INDEX bi_k SET (deduplicate_items = maybe);
\echo :SQLSTATE
ALTER INDEX bi_k SET (no_such_option = 1);
\echo :SQLSTATE
-- options of another namespace are dropped without a word by ALTER INDEX
-- (the server's behaviour for every index)
ALTER INDEX bi_k SET (toast.fillfactor = 50);
ALTER INDEX bi_btree SET (toast.fillfactor = 50);
-- one bad option refuses the whole list
ALTER INDEX bi_k SET (fillfactor = 70, layout = foo);
\echo :SQLSTATE
-- RESET of an option that is not set, or does not exist, is accepted (as
-- for btree): there is nothing to remove
ALTER INDEX bi_k RESET (no_such_option);
ALTER INDEX bi_k RESET (prefetch);
-- btlayout's options on a btree index
ALTER INDEX bi_btree SET (layout = veb);
\echo :SQLSTATE
ALTER INDEX bi_btree SET (prefetch = off);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btree (k) WITH (layout = veb);
\echo :SQLSTATE
-- a partitioned index has no storage options to change
CREATE INDEX bi_part_k ON bi_part USING btlayout (k);
ALTER INDEX bi_part_k SET (layout = veb);
\echo :SQLSTATE
-- nothing changed
SELECT relname, reloptions FROM pg_class WHERE relname IN ('bi_k', 'bi_btree') ORDER BY 1;

--
-- Settings
--
SET btlayout.prefetch = maybe;
\echo :SQLSTATE
SET btlayout.compare_isa = foo;
\echo :SQLSTATE
SET btlayout.no_such_setting = 1;
\echo :SQLSTATE

--
-- Operator classes
--
CREATE INDEX bi_bad ON bi USING btlayout (k no_such_ops);
\echo :SQLSTATE
-- a class of another access method
CREATE INDEX bi_bad ON bi USING btlayout (k jsonb_path_ops);
\echo :SQLSTATE
-- a btree class that is not one of the server's (created after the
-- extension, or by another extension) has no btlayout mirror
CREATE OPERATOR CLASS regress_badinput_ops FOR TYPE int4 USING btree AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 btint4cmp(int4, int4);
CREATE INDEX bi_bad ON bi USING btlayout (k regress_badinput_ops);
\echo :SQLSTATE
DROP OPERATOR FAMILY regress_badinput_ops USING btree;
-- a class for another type
CREATE INDEX bi_bad ON bi USING btlayout (k text_ops);
\echo :SQLSTATE
CREATE INDEX bi_bad ON bi USING btlayout (t int4_ops);
\echo :SQLSTATE
-- a type without a btree class has no btlayout class either
CREATE INDEX bi_bad ON bi USING btlayout (p);
\echo :SQLSTATE
-- (the server's message, which names the class qualified from 18 on)
\set VERBOSITY sqlstate
CREATE INDEX bi_bad ON bi USING btlayout (k int4_ops (foo = 1));
\set VERBOSITY default
-- (the message and its code without the position 19 gives the error)
DO $$
BEGIN
	CREATE INDEX bi_bad ON bi USING btlayout (k COLLATE "C");
EXCEPTION WHEN others THEN
	RAISE NOTICE '% (%)', SQLERRM, SQLSTATE;
END
$$;
-- a class of our own without the operators the build sorts with ...
CREATE OPERATOR FAMILY regress_badinput_fam1 USING btlayout;
CREATE OPERATOR CLASS regress_badinput_noops FOR TYPE int4 USING btlayout
  FAMILY regress_badinput_fam1 AS FUNCTION 1 btint4cmp(int4, int4);
CREATE INDEX bi_bad ON bi USING btlayout (k regress_badinput_noops);
\echo :SQLSTATE
-- ... or without its comparison function (the server's own error)
CREATE OPERATOR FAMILY regress_badinput_fam2 USING btlayout;
CREATE OPERATOR CLASS regress_badinput_nocmp FOR TYPE int4 USING btlayout
  FAMILY regress_badinput_fam2 AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >;
CREATE INDEX bi_bad ON bi USING btlayout (k regress_badinput_nocmp);
\echo :SQLSTATE
-- amvalidate() says what is wrong with them
SELECT opcname, amvalidate(oid)
FROM (SELECT oid, opcname FROM pg_opclass
      WHERE opcname LIKE 'regress_badinput_%' ORDER BY opcname OFFSET 0) c;
DROP OPERATOR FAMILY regress_badinput_fam1 USING btlayout;
DROP OPERATOR FAMILY regress_badinput_fam2 USING btlayout;

--
-- Unique indexes
--
CREATE TABLE bi_dup (k int);
INSERT INTO bi_dup VALUES (1), (1), (2);
CREATE UNIQUE INDEX bi_dup_k ON bi_dup USING btlayout (k);
\echo :SQLSTATE
-- CONCURRENTLY leaves the index behind, invalid (and empty)
CREATE UNIQUE INDEX CONCURRENTLY bi_dup_k ON bi_dup USING btlayout (k);
\echo :SQLSTATE
SELECT indisvalid FROM pg_index WHERE indexrelid = 'bi_dup_k'::regclass;
SELECT btlayout_check('bi_dup_k');
\echo :SQLSTATE
SELECT pages, leaf_pages FROM btlayout_stats('bi_dup_k');
SELECT btlayout_relayout('bi_dup_k');
SELECT * FROM btlayout_page('bi_dup_k', 0);
\echo :SQLSTATE
DROP INDEX bi_dup_k;
DELETE FROM bi_dup WHERE k = 1;
CREATE UNIQUE INDEX bi_dup_k ON bi_dup USING btlayout (k);
INSERT INTO bi_dup VALUES (2);
\echo :SQLSTATE
-- a btlayout index cannot back a constraint (on every version; the roles
-- that differ by version are in sql/roles.sql)
ALTER TABLE bi_dup ADD CONSTRAINT bi_dup_u UNIQUE USING INDEX bi_dup_k;
\echo :SQLSTATE
ALTER TABLE bi_dup ADD PRIMARY KEY USING INDEX bi_dup_k;
\echo :SQLSTATE
-- keys too long for a page: at build (our loader) and at insert (nbtree)
CREATE TABLE bi_long (t text);
INSERT INTO bi_long SELECT string_agg(md5(g::text), '') FROM generate_series(1, 100) g;
CREATE INDEX bi_bad ON bi_long USING btlayout (t);
\echo :SQLSTATE
TRUNCATE bi_long;
CREATE INDEX bi_long_t ON bi_long USING btlayout (t);
INSERT INTO bi_long SELECT string_agg(md5(g::text), '') FROM generate_series(1, 100) g;
\echo :SQLSTATE

--
-- The functions, on what is not a btlayout index
--
CREATE SEQUENCE bi_seq;
CREATE VIEW bi_view AS SELECT k FROM bi;
SELECT btlayout_relayout('bi_btree');
\echo :SQLSTATE
SELECT btlayout_relayout('bi');
\echo :SQLSTATE
SELECT btlayout_relayout('bi_seq');
\echo :SQLSTATE
SELECT btlayout_relayout('bi_view');
\echo :SQLSTATE
-- a partitioned index has no pages (its partitions' indexes have)
SELECT btlayout_relayout('bi_part_k');
\echo :SQLSTATE
SELECT btlayout_stats('bi_btree');
\echo :SQLSTATE
SELECT btlayout_stats('bi_seq');
\echo :SQLSTATE
SELECT * FROM btlayout_page('bi_btree', 1);
\echo :SQLSTATE
SELECT * FROM btlayout_page('bi', 0);
\echo :SQLSTATE
SELECT btlayout_check('bi_btree');
\echo :SQLSTATE
SELECT btlayout_check('bi_seq');
\echo :SQLSTATE
SELECT btlayout_check('bi_part_k');
\echo :SQLSTATE
-- a name that does not exist
SELECT btlayout_relayout('no_such_index');
\echo :SQLSTATE
SELECT btlayout_stats('no_such_index');
\echo :SQLSTATE
-- an OID that is no relation
SELECT btlayout_relayout(0);
\echo :SQLSTATE
SELECT btlayout_stats(0);
\echo :SQLSTATE
SELECT * FROM btlayout_page(0, 1);
\echo :SQLSTATE
SELECT btlayout_check(0);
\echo :SQLSTATE

--
-- NULL arguments: the functions are strict
--
SELECT btlayout_relayout(NULL) IS NULL AS is_null;
SELECT btlayout_stats(NULL) IS NULL AS is_null;
SELECT count(*) FROM btlayout_page(NULL, 1);
SELECT count(*) FROM btlayout_page('bi_k', NULL);
SELECT btlayout_check(NULL) IS NULL AS is_null;
SELECT btlayout_check('bi_k', NULL) IS NULL AS is_null;

--
-- btlayout_page(): blocks that do not exist
--
SELECT count(*) AS blocks FROM generate_series(0, pg_relation_size('bi_k') / 8192 - 1);
SELECT * FROM btlayout_page('bi_k', -1);
\echo :SQLSTATE
SELECT * FROM btlayout_page('bi_k', 5);
\echo :SQLSTATE
SELECT * FROM btlayout_page('bi_k', 4294967296);
\echo :SQLSTATE
SELECT * FROM btlayout_page('bi_k', 'x');
\echo :SQLSTATE
-- the last block and the metapage are fine
SELECT DISTINCT kind, level FROM btlayout_page('bi_k', 4);
SELECT DISTINCT kind FROM btlayout_page('bi_k', 0);

--
-- Read-only transactions: relayout writes, and is refused; the others read
--
BEGIN TRANSACTION READ ONLY;
SELECT btlayout_relayout('bi_k');
\echo :SQLSTATE
ROLLBACK;
BEGIN;
SET transaction_read_only = on;
SELECT btlayout_relayout('bi_k');
\echo :SQLSTATE
ROLLBACK;
SET default_transaction_read_only = on;
SELECT btlayout_relayout('bi_k');
\echo :SQLSTATE
SELECT btlayout_check('bi_k', true);
SELECT leaf_pages FROM btlayout_stats('bi_k');
SELECT count(*) > 0 AS has_items FROM btlayout_page('bi_k', 1);
RESET default_transaction_read_only;

--
-- Privileges.  btlayout_relayout() needs ownership of the index (as REINDEX);
-- btlayout_page() and btlayout_check() are not granted to PUBLIC;
-- btlayout_stats() is granted to pg_stat_scan_tables, as pgstatindex() is;
-- btlayout_search_stats() and btlayout_backend_state() (this backend's
-- counters) need nothing.
--
CREATE ROLE regress_badinput_owner;
CREATE ROLE regress_badinput_member IN ROLE regress_badinput_owner;
CREATE ROLE regress_badinput_other;
CREATE TABLE bi_owned (k int);
INSERT INTO bi_owned SELECT g FROM generate_series(1, 1000) g;
CREATE INDEX bi_owned_k ON bi_owned USING btlayout (k);
ALTER TABLE bi_owned OWNER TO regress_badinput_owner;
ALTER INDEX bi_owned_k SET (layout = veb);
SET ROLE regress_badinput_other;
SELECT btlayout_relayout('bi_owned_k');
\echo :SQLSTATE
-- refused before anything is locked or opened, whatever it is
SELECT btlayout_relayout('bi');
\echo :SQLSTATE
SELECT btlayout_relayout(0);
\echo :SQLSTATE
SELECT * FROM btlayout_page('bi_owned_k', 1);
\echo :SQLSTATE
SELECT btlayout_check('bi_owned_k');
\echo :SQLSTATE
SELECT leaf_pages FROM btlayout_stats('bi_owned_k');
\echo :SQLSTATE
SELECT count(*) FROM btlayout_search_stats();
SELECT count(*) FROM btlayout_backend_state();
RESET ROLE;
GRANT pg_stat_scan_tables TO regress_badinput_other;
SET ROLE regress_badinput_other;
SELECT leaf_pages FROM btlayout_stats('bi_owned_k');
RESET ROLE;
REVOKE pg_stat_scan_tables FROM regress_badinput_other;
-- the owner, and members of the owning role, may relay out
SET ROLE regress_badinput_owner;
SELECT btlayout_relayout('bi_owned_k');
SELECT * FROM btlayout_page('bi_owned_k', 1);
\echo :SQLSTATE
SELECT btlayout_check('bi_owned_k');
\echo :SQLSTATE
RESET ROLE;
ALTER INDEX bi_owned_k SET (layout = btorder);
SET ROLE regress_badinput_member;
SELECT btlayout_relayout('bi_owned_k');
RESET ROLE;
-- EXECUTE revoked from PUBLIC: even the owner is refused
REVOKE EXECUTE ON FUNCTION btlayout_relayout(regclass) FROM PUBLIC;
SET ROLE regress_badinput_owner;
SELECT btlayout_relayout('bi_owned_k');
\echo :SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION btlayout_relayout(regclass) TO PUBLIC;
-- granted, btlayout_check() and btlayout_page() work on any btlayout index
GRANT EXECUTE ON FUNCTION btlayout_check(regclass, bool) TO regress_badinput_other;
GRANT EXECUTE ON FUNCTION btlayout_page(regclass, bigint) TO regress_badinput_other;
SET ROLE regress_badinput_other;
SELECT btlayout_check('bi_owned_k', true);
SELECT DISTINCT kind, layout FROM btlayout_page('bi_owned_k', 1);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION btlayout_check(regclass, bool) FROM regress_badinput_other;
REVOKE EXECUTE ON FUNCTION btlayout_page(regclass, bigint) FROM regress_badinput_other;
-- back as the extension made them
SELECT has_function_privilege('regress_badinput_other', 'btlayout_relayout(regclass)', 'EXECUTE') AS relayout,
       has_function_privilege('regress_badinput_other', 'btlayout_stats(regclass)', 'EXECUTE') AS stats,
       has_function_privilege('regress_badinput_other', 'btlayout_check(regclass, bool)', 'EXECUTE') AS check,
       has_function_privilege('regress_badinput_other', 'btlayout_page(regclass, bigint)', 'EXECUTE') AS page;
DROP TABLE bi_owned;
DROP ROLE regress_badinput_member, regress_badinput_owner, regress_badinput_other;


DROP VIEW bi_view;
DROP TABLE bi, bi_part, bi_dup, bi_long;
DROP SEQUENCE bi_seq;
