--
-- Sort support (support function 2) of the BIN classes text_bin_ops,
-- bpchar_bin_ops and bytea_bin_ops.  PostgreSQL 15 calls an index access
-- method's sort support only for btree, so the test module in
-- test/sortsupport (extension btlayout_test_sortsupport) runs it the way
-- tuplesort sorts datums: btlayout_test_sort() sorts an array with the
-- class's comparator, or with its abbreviated keys and the full comparator
-- for their ties, consulting abbrev_abort as tuplesort does (mode "on") or
-- never (mode "forced": abbreviated keys for every value, whatever the
-- data).  Each result is checked against core's ORDER BY under COLLATE "C".
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
CREATE EXTENSION btlayout_test_sortsupport;
RESET client_min_messages;

-- A sort is right when its result holds exactly the values given (the same
-- multiset of byte strings, compared by their output text, so that bpchar's
-- 'a' and 'a  ' count apart) and equals, element by element with the
-- type's "=", core's ORDER BY of them under the call's collation (shown:
-- "C", or none for bytea).  The type's "=" is the class's equality: exact
-- for text and bytea, trailing spaces ignored for bpchar, so values that
-- tie may come in either order, but no others.
CREATE FUNCTION ss_check(opclass text, vals anyarray, mode text,
	OUT coll text, OUT n int, OUT abbrev text, OUT same_values bool,
	OUT core_order bool)
LANGUAGE sql AS $$
	SELECT CASE WHEN (SELECT typcollation <> 0 FROM pg_type
						WHERE oid = pg_typeof(vals)) THEN
			(SELECT pg_collation_for(x) FROM unnest(vals) x LIMIT 1) END,
		cardinality(s.sorted),
		s.abbrev,
		(SELECT array_agg(format('%s', x) ORDER BY format('%s', x) COLLATE "C")
		 FROM unnest(s.sorted) x) =
		(SELECT array_agg(format('%s', x) ORDER BY format('%s', x) COLLATE "C")
		 FROM unnest(vals) x),
		s.sorted = (SELECT array_agg(x ORDER BY x) FROM unnest(vals) x)
	FROM btlayout_test_sort(opclass, '"C"', vals, mode <> 'off',
							mode = 'on') s
$$;

-- Strings, in sets:
--   mixed     lengths 0 to 300, long common prefixes ('abab...'), bytes
--             above 0x7f, characters below the space, spaces inside and at
--             the end, duplicates, and strings at the abbreviation's 8-byte
--             boundary
--   distinct  lengths 0 to 300, distinct first 8 bytes (md5): abbreviation
--             pays and is kept
--   prefix    one long common prefix: every abbreviated key is the same,
--             so abbreviation is aborted
CREATE TABLE ss_strs (set text, id int, t text COLLATE "C");
INSERT INTO ss_strs
SELECT 'mixed', g, repeat('ab', (g % 151)) || chr(32 + g % 95)
  || CASE g % 5 WHEN 0 THEN 'é' WHEN 1 THEN E'\t' WHEN 2 THEN ' ' WHEN 3 THEN '' ELSE 'ÿ€' END
  || CASE WHEN g % 7 = 0 THEN repeat(' ', g % 4) ELSE '' END
FROM generate_series(1, 3000) g;
INSERT INTO ss_strs
SELECT 'mixed', 3000 + g, substr(md5(g::text), 1, g % 33) || repeat(' ', g % 3)
FROM generate_series(1, 3000) g;
INSERT INTO ss_strs
SELECT 'mixed', 7000 + row_number() OVER (), s
FROM unnest(ARRAY['', ' ', '  ', 'a', E'a\t', 'a ', 'a  ', E'a\t ', E'a\x01',
  'A', 'é', 'ÿ', E'\x7f', 'abcdefg', 'abcdefg ', E'abcdefg\t', 'abcdefgh',
  'abcdefgh ', 'abcdefgh  ', E'abcdefgh\t', 'abcdefghi', 'abcdefgh' || 'é',
  repeat('x', 300), repeat('x', 299) || 'y', repeat('x', 299) || ' ']) s;
INSERT INTO ss_strs
SELECT 'distinct', g,
  translate(substr(repeat(md5(g::text), 10), 1, g % 301), 'abc', 'é€ÿ')
FROM generate_series(1, 3000) g;
INSERT INTO ss_strs
SELECT 'prefix', g, repeat('common prefix/', 1 + g % 5) || (g * 7919 % 3001)
  || CASE g % 4 WHEN 0 THEN ' ' WHEN 1 THEN 'é' WHEN 2 THEN '  ' ELSE '' END
FROM generate_series(1, 3000) g;

-- Byte strings: the strings' bytes, and
--   zeros     zero bytes leading, embedded and trailing, 0xff, strings that
--             differ only past their first 8 bytes or by trailing zeros
--   random    random bytes, lengths 0 to 300
CREATE TABLE ss_bytes (set text, id int, b bytea);
INSERT INTO ss_bytes SELECT set, id, convert_to(t, 'UTF8') FROM ss_strs;
INSERT INTO ss_bytes
SELECT 'zeros', g, decode(repeat('00', g % 11) || lpad(to_hex(g % 256), 2, '0')
  || repeat(CASE WHEN g % 2 = 0 THEN '00' ELSE 'ff' END, g % 13)
  || substr(md5(g::text), 1, 2 * (g % 7)), 'hex')
FROM generate_series(1, 3000) g;
INSERT INTO ss_bytes
SELECT 'zeros', 3000 + row_number() OVER (), b
FROM unnest(ARRAY['\x', '\x00', '\x0000', '\xff', '\xffff', '\x00ff', '\xff00',
  '\x7f', '\x80', '\x61', '\x6100', '\x610000', '\x0000000000000000',
  '\x000000000000000000', '\x00000000000000ff', '\x0000000000000000ff',
  '\xffffffffffffffff', '\xffffffffffffffff00']::bytea[]) b;
INSERT INTO ss_bytes
SELECT 'random', g,
  substring(decode(repeat(md5(g::text) || md5((-g)::text), 10), 'hex') FROM 1 FOR g % 301)
FROM generate_series(1, 3000) g;

-- What the sets hold: values, lengths, ties under bpchar (equal but for
-- trailing spaces), values with a byte above 0x7f or a zero byte
SELECT set, count(*) AS n, min(octet_length(t)) AS minlen,
  max(octet_length(t)) AS maxlen, count(DISTINCT t) AS distinct_text,
  count(DISTINCT t::bpchar) AS distinct_bpchar,
  count(*) FILTER (WHERE t ~ '[^\x01-\x7f]') AS high_bytes
FROM ss_strs GROUP BY set ORDER BY set;
SELECT set, count(*) AS n, min(length(b)) AS minlen, max(length(b)) AS maxlen,
  count(DISTINCT b) AS distinct_bytea,
  count(*) FILTER (WHERE position('\x00'::bytea IN b) > 0) AS zero_bytes,
  count(*) FILTER (WHERE position('\xff'::bytea IN b) > 0) AS ff_bytes
FROM ss_bytes GROUP BY set ORDER BY set;

-- Every class, set and mode.  The arrays come in a scrambled order.
CREATE TABLE ss_modes (mode text);
INSERT INTO ss_modes VALUES ('off'), ('on'), ('forced');

SELECT 'text_bin_ops' AS opclass, s.set, m.mode, c.*
FROM (SELECT DISTINCT set FROM ss_strs) s CROSS JOIN ss_modes m,
LATERAL ss_check('text_bin_ops',
  (SELECT array_agg(t ORDER BY md5(id::text)) FROM ss_strs v WHERE v.set = s.set),
  m.mode) c
ORDER BY 2, 3;

SELECT 'bpchar_bin_ops' AS opclass, s.set, m.mode, c.*
FROM (SELECT DISTINCT set FROM ss_strs) s CROSS JOIN ss_modes m,
LATERAL ss_check('bpchar_bin_ops',
  (SELECT array_agg(t::bpchar ORDER BY md5(id::text)) FROM ss_strs v WHERE v.set = s.set),
  m.mode) c
ORDER BY 2, 3;

SELECT 'bytea_bin_ops' AS opclass, s.set, m.mode, c.*
FROM (SELECT DISTINCT set FROM ss_bytes) s CROSS JOIN ss_modes m,
LATERAL ss_check('bytea_bin_ops',
  (SELECT array_agg(b ORDER BY md5(id::text)) FROM ss_bytes v WHERE v.set = s.set),
  m.mode) c
ORDER BY 2, 3;

-- Small sorts to read (ss_show: quoted, tab and \x01 spelled out): byte
-- order ('a ' after E'a\t' in text, but 'a' before it in bpchar), bytes
-- above 0x7f last, the 8-byte boundary of the abbreviated keys, zero bytes
-- in bytea
CREATE FUNCTION ss_show(vals anyarray) RETURNS text
LANGUAGE sql AS $$
	SELECT string_agg(replace(replace(format('%L', x), E'\t', '\t'),
							  E'\x01', '\x01'), ' ' ORDER BY i)
	FROM unnest(vals) WITH ORDINALITY u(x, i)
$$;
SELECT v.abbreviate, ss_show(s.sorted), s.abbrev
FROM (VALUES (false), (true)) v(abbreviate),
LATERAL btlayout_test_sort('text_bin_ops', '"C"',
  ARRAY['b', 'a ', E'a\t', '', 'A', 'é', 'ab', ' ', 'abcdefgh', 'abcdefg',
        'abcdefghi', 'abcdefgh ', E'abcdefgh\x01', 'abcdefgÿ'],
  v.abbreviate, false) s;
SELECT v.abbreviate, ss_show(s.sorted), s.abbrev
FROM (VALUES (false), (true)) v(abbreviate),
LATERAL btlayout_test_sort('bpchar_bin_ops', '"C"',
  ARRAY['b', 'a ', E'a\t', '', 'A', 'é', 'ab', 'abcdefgh', 'abcdefg  ',
        'abcdefghi', E'abcdefgh\x01', 'abcdefgÿ']::bpchar[],
  v.abbreviate, false) s;
SELECT v.abbreviate, ss_show(s.sorted), s.abbrev
FROM (VALUES (false), (true)) v(abbreviate),
LATERAL btlayout_test_sort('bytea_bin_ops', '"C"',
  ARRAY['\xff', '\x', '\x00', '\x0000', '\x00ff', '\x7f', '\x80', '\x6100',
        '\x61', '\x6161', '\x0000000000000000', '\x000000000000000000',
        '\x00000000000000ff', '\x0000000000000001']::bytea[],
  v.abbreviate, false) s;

-- varchar sorts with text_bin_ops, as its index columns do
SELECT (btlayout_test_sort('text_bin_ops', '"C"',
  ARRAY['b', 'a', 'ab', '']::varchar[], true)).*;

-- The sort support of the collated classes refuses collations other than
-- "C" (and "POSIX"), as their comparison functions do; bytea_bin_ops has no
-- collation and ignores it
SELECT * FROM btlayout_test_sort('text_bin_ops', 'und-x-icu', ARRAY['b', 'a'], false);
SELECT * FROM btlayout_test_sort('text_bin_ops', 'und-x-icu', ARRAY['b', 'a'], true);
SELECT * FROM btlayout_test_sort('bpchar_bin_ops', 'und-x-icu', ARRAY['b', 'a']::bpchar[], true);
SELECT * FROM btlayout_test_sort('text_bin_ops', '"POSIX"', ARRAY['b', 'a'], true);
SELECT * FROM btlayout_test_sort('bytea_bin_ops', 'und-x-icu', ARRAY['\x01', '\x00']::bytea[], true);

-- Classes without abbreviated keys: the test module says so
SELECT * FROM btlayout_test_sort('int4_ops', '"C"', ARRAY[2, 1], true);

-- Misuse of the test function
SELECT * FROM btlayout_test_sort('text_bin_ops', '"C"', ARRAY[1, 2], true);
SELECT * FROM btlayout_test_sort('no_such_ops', '"C"', ARRAY['a'], true);
SELECT * FROM btlayout_test_sort('text_bin_ops', '"C"', ARRAY['b', NULL], true);
SELECT * FROM btlayout_test_sort('text_bin_ops', '"C"', '{}'::text[], true);

DROP TABLE ss_strs, ss_bytes, ss_modes;
DROP FUNCTION ss_check, ss_show;
DROP EXTENSION btlayout_test_sortsupport;
