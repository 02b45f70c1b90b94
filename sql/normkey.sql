--
-- Normalized keys of strings in ICU collations (normkey.c): ICU sort
-- keys, for the providers btlayout.upper_copy_sort_keys names.  A server
-- without ICU (16's and 17's wheels) skips this test (scripts/test.sh);
-- libc's strxfrm() has normkey_libc, which runs everywhere.  For each
-- collation (test_collation() of sql/include/normkey.sql): the property
-- test (normkey_check(), as in upper.sql) on one-column and composite
-- indexes, DESC and NULLS FIRST, text and bpchar; then lookups in every
-- scan shape against core btree, and the same lookups going the same ways
-- with keys and without.  A transform that disagreed with the comparison
-- would show as mismatches or as misses the lookups without keys do not
-- have; a comparison that disagreed with the server's (compare.c compares
-- collated strings itself) as wrong answers.  Last, a LATIN1 database
-- whose default collation is ICU's.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

\i sql/include/normkey.sql

SET btlayout.upper_copy = '4MB';
SET btlayout.upper_copy_sort_keys = 'all';
SELECT coll, test_collation(coll)
FROM unnest(ARRAY['en-x-icu', 'de-x-icu']) coll;

-- A nondeterministic ICU collation: strings it says are equal are equal
-- in the index, and their sort keys are equal
CREATE COLLATION nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT test_collation('nd') AS nondeterministic;

-- The setting: providers left out have no keys (their indexes' copies are
-- searched as pages), and a changed setting drops the copies
CREATE INDEX nc_none ON nc USING btlayout (s COLLATE "en-x-icu");
SELECT key_searches_under('en-x-icu', 'libc') AS icu_key_searches_when_libc;
SELECT key_searches_under('en-x-icu', 'icu') > 0 AS icu_key_searches_when_icu;
SET btlayout.upper_copy_sort_keys = 'lots';
RESET btlayout.upper_copy_sort_keys;

-- A database not in UTF-8 whose default collation is ICU's: its strings
-- are compared as UTF-16 (15 converts them itself, compat.h), in lookups
-- of every shape against core btree, with keys and without
SELECT current_database() AS regression_db \gset
CREATE DATABASE btlayout_normkey_latin1 TEMPLATE template0 ENCODING 'LATIN1'
  LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'en';
\c btlayout_normkey_latin1
SET client_min_messages = warning;
CREATE EXTENSION btlayout;
RESET client_min_messages;
\i sql/include/answers.sql
CREATE TABLE la (s text);
INSERT INTO la SELECT chr((ARRAY[101, 233, 69, 201, 122, 223])[g % 6 + 1]) ||
  (g % 700) || chr((ARRAY[97, 228, 65, 196])[g / 6 % 4 + 1])
FROM generate_series(1, 20000) g;
CREATE TABLE lb AS SELECT * FROM la;
CREATE INDEX ON la USING btlayout (s);
CREATE INDEX ON lb USING btree (s);
VACUUM ANALYZE la, lb;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET btlayout.upper_copy = '4MB';
SET btlayout.upper_copy_sort_keys = 'all';
-- (the collation's hint would give its ASCII pages ranks for keys: off)
SET btlayout.collation_hints = off;
SELECT getdatabaseencoding(),
  answers_wrong(ARRAY['SELECT count(*) FROM %1$I WHERE s = %2$s',
                      'SELECT count(*) FROM %1$I WHERE s < %2$s',
                      'SELECT array_agg(s) FROM (SELECT s FROM %1$I WHERE s >= %2$s ORDER BY s LIMIT 3) x'],
                ARRAY(SELECT quote_literal(s) FROM (SELECT DISTINCT s FROM la) d
                      ORDER BY md5(s) LIMIT 60), 'la', 'lb') AS wrong,
  (SELECT upper_key_searches > 0 FROM btlayout_search_stats()) AS keys_used;
\c :regression_db
DROP DATABASE btlayout_normkey_latin1;

DROP TABLE nc, ncv, uc0;
DROP COLLATION nd;
DROP FUNCTION test_collation(text), key_searches_under(text, text),
  normkey_check(regclass, int, int), answers_wrong(text[], text[], text, text);
DROP PROCEDURE uc_reset();
