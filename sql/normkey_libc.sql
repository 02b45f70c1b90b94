--
-- Normalized keys of strings in libc collations that do not order bytes
-- (normkey.c): strxfrm()'s sort keys, which every server here can make
-- (16 and 17 refuse them through pg_strnxfrm(); compat.h calls libc
-- itself below 18).  The whole test of test_collation() (see normkey and
-- sql/include/normkey.sql) in "C.utf8" and "en_US.utf8" (Debian's
-- locales-all; not in the root 19 runs in, where the result says so:
-- normkey_libc_1.out), and in a database whose default collation is
-- libc's C.UTF-8: the default collation's locale is the process's
-- LC_COLLATE below 18, a pg_locale_t of 0 on 15 and 16.  Then the
-- setting: libc's collations get keys only when it names libc.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

\i sql/include/normkey.sql

SET btlayout.upper_copy = '4MB';
SET btlayout.upper_copy_sort_keys = 'libc';
SELECT coll, test_collation(coll)
FROM unnest(ARRAY['C.utf8', 'en_US.utf8']) coll;

-- The setting
CREATE INDEX nc_none ON nc USING btlayout (s COLLATE "C.utf8");
SELECT key_searches_under('C.utf8', 'none') AS libc_key_searches_when_none;
SELECT key_searches_under('C.utf8', 'libc') > 0 AS libc_key_searches_when_libc;
RESET btlayout.upper_copy_sort_keys;

-- The database's default collation, in a database of its own
SELECT current_database() AS regression_db \gset
CREATE DATABASE btlayout_normkey_libc TEMPLATE template0 ENCODING 'UTF8'
  LOCALE_PROVIDER libc LOCALE 'C.UTF-8';
\c btlayout_normkey_libc
SET client_min_messages = warning;
CREATE EXTENSION btlayout;
RESET client_min_messages;
\i sql/include/normkey.sql
SET btlayout.upper_copy = '4MB';
SET btlayout.upper_copy_sort_keys = 'libc';
SELECT datcollate, test_collation('default')
FROM pg_database WHERE datname = current_database();
\c :regression_db
DROP DATABASE btlayout_normkey_libc;

DROP TABLE nc, ncv, uc0;
DROP FUNCTION test_collation(text), key_searches_under(text, text),
  normkey_check(regclass, int, int), answers_wrong(text[], text[], text, text);
DROP PROCEDURE uc_reset();
