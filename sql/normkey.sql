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
-- have.
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

DROP TABLE nc, ncv, uc0;
DROP COLLATION nd;
DROP FUNCTION test_collation(text), key_searches_under(text, text),
  normkey_check(regclass, int, int), answers_wrong(text[], text[], text, text);
DROP PROCEDURE uc_reset();
