--
-- normkey: what the tests of normalized keys of collated strings share
-- (normkey, normkey_libc): the test function normkey_check() (a function
-- of the library, not of the extension), two twin tables of e-mail-like
-- strings with accents, cases, '' and NULLs, a string in two forms ICU
-- calls equal (composed and decomposed), bpchar with trailing blanks,
-- test_collation(), which runs the whole test in one collation, and
-- key_searches_under(), the test of btlayout.upper_copy_sort_keys.
-- Included with \i by each test, into each database it uses (with
-- sql/include/answers.sql); not a test of its own.  Collation hints are
-- off in the session: they would serve the pages of ASCII strings in
-- place of the keys these tests are about (sql/collhint.sql tests both).
--
\i sql/include/answers.sql
SET btlayout.collation_hints = off;

CREATE FUNCTION normkey_check(index regclass, probes int, seed int,
  OUT tuples bigint, OUT pairs bigint, OUT decided bigint,
  OUT mismatches bigint, OUT searches bigint, OUT search_mismatches bigint)
  AS '$libdir/btlayout', 'btlayout_normkey_check' LANGUAGE C STRICT;

CREATE TABLE nc (s text, b char(8), n int4) WITH (autovacuum_enabled = off);
INSERT INTO nc SELECT
  CASE g % 9 WHEN 0 THEN 'Ab' WHEN 1 THEN 'ab' WHEN 2 THEN 'a-b'
             WHEN 3 THEN CASE WHEN g % 2 = 0 THEN 'äb' ELSE normalize('äb', NFD) END
             WHEN 4 THEN '' WHEN 5 THEN NULL ELSE
  (ARRAY['john', 'mary', 'Zoë', 'émile', 'o''neil', 'li'])[g % 6 + 1] || '.' ||
  (ARRAY['smith', 'Müller', 'de la cruz', 'ng'])[g % 4 + 1] || (g % 3000) || '@' ||
  (ARRAY['example.com', 'mail.org', 'x.io'])[g % 3 + 1] END,
  CASE WHEN g % 11 = 0 THEN NULL ELSE 'b' || (g % 999) || CASE WHEN g % 2 = 0 THEN ' ' ELSE '' END END,
  g % 100
FROM generate_series(1, 40000) g;
CREATE TABLE ncv (LIKE nc) WITH (autovacuum_enabled = off);
INSERT INTO ncv SELECT * FROM nc;

CREATE TABLE uc0 AS
  SELECT upper_copy_hits AS hits, upper_copy_misses AS misses,
         upper_key_searches AS keys
  FROM btlayout_search_stats();
CREATE PROCEDURE uc_reset() LANGUAGE sql AS $$
  UPDATE uc0 SET hits = s.upper_copy_hits, misses = s.upper_copy_misses,
                 keys = s.upper_key_searches
  FROM btlayout_search_stats() s;
$$;

-- The result of the tests in one collation, or why there were none
CREATE FUNCTION test_collation(coll text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  defs text[] := ARRAY['s COLLATE %1$s', 'n, s COLLATE %1$s DESC, b COLLATE %1$s',
                       'b COLLATE %1$s NULLS FIRST, n', 's COLLATE %1$s, n DESC'];
  shapes text[] := ARRAY[
    'SELECT count(*) FROM %1$I WHERE s = %2$s COLLATE %3$s',
    'SELECT array_agg(s) FROM (SELECT s FROM %1$I WHERE s > %2$s COLLATE %3$s ORDER BY s COLLATE %3$s, n DESC LIMIT 2) x',
    'SELECT array_agg(s) FROM (SELECT s FROM %1$I WHERE s <= %2$s COLLATE %3$s ORDER BY s COLLATE %3$s DESC, n LIMIT 2) x',
    'SELECT count(*) FROM %1$I WHERE n = 7 AND s = %2$s COLLATE %3$s',
    'SELECT count(*) FROM %1$I WHERE b = left(%2$s, 4)::char(8) COLLATE %3$s',
    'SELECT count(*) FROM %1$I WHERE b IS NULL AND n > 3'];
  probes text[];
  c record;
  wrong int := 0;
  r record;
  k0 record;
  k1 record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_collation WHERE collname = coll) THEN
    RETURN 'no such collation here';
  END IF;
  FOR i IN 1 .. array_length(defs, 1) LOOP
    EXECUTE format('CREATE INDEX nc_%s ON nc USING btlayout (%s) WITH (deduplicate_items = off)',
                   i, format(defs[i], quote_ident(coll)));
    EXECUTE format('CREATE INDEX ncv_%s ON ncv USING btree (%s) WITH (deduplicate_items = off)',
                   i, format(defs[i], quote_ident(coll)));
    SELECT * INTO c FROM normkey_check(format('nc_%s', i)::regclass, 40, 47);
    IF c.mismatches <> 0 OR c.search_mismatches <> 0 OR c.decided = 0 OR c.searches = 0 THEN
      RETURN format('index %s: %s', defs[i], c);
    END IF;
  END LOOP;
  -- the shapes in the collation, the probes as literals (answers_wrong()
  -- puts them in as they are)
  shapes := ARRAY(SELECT replace(q, '%3$s', quote_ident(coll)) FROM unnest(shapes) q);
  probes := ARRAY(SELECT quote_literal(p) FROM unnest(
              ARRAY(SELECT s FROM (SELECT DISTINCT s FROM nc WHERE s IS NOT NULL) d
                    ORDER BY md5(s) LIMIT 40)
              || ARRAY['', 'a', 'AB', 'ab', 'zzz', 'émile.ng', '~', 'äb',
                       normalize('äb', NFD)]) p);
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  FOR pass IN 1 .. 3 LOOP
    -- 1: without keys, to warm the copies; 2: without keys; 3: with keys
    PERFORM set_config('btlayout.upper_copy_keys', CASE WHEN pass < 3 THEN 'off' ELSE 'on' END, true);
    CALL uc_reset();
    wrong := wrong + answers_wrong(shapes, probes, 'nc', 'ncv');
    SELECT s.upper_copy_hits - u.hits AS hits, s.upper_copy_misses - u.misses AS misses,
           s.upper_key_searches - u.keys AS keys
      INTO r FROM btlayout_search_stats() s, uc0 u;
    IF pass = 2 THEN k0 := r; ELSIF pass = 3 THEN k1 := r; END IF;
  END LOOP;
  FOR i IN 1 .. array_length(defs, 1) LOOP
    EXECUTE format('DROP INDEX nc_%s, ncv_%s', i, i);
  END LOOP;
  IF wrong > 0 THEN
    RETURN format('%s answers wrong', wrong);
  END IF;
  IF k1.keys < 100 OR k0.keys <> 0 OR k1.hits <> k0.hits OR k1.misses <> k0.misses THEN
    RETURN format('without keys %s, with keys %s', k0, k1);
  END IF;
  RETURN 'ok';
END
$$;


-- The key searches of two lookups of nc in a collation under a value of
-- btlayout.upper_copy_sort_keys (set for the session), through an index
-- of nc in that collation
CREATE FUNCTION key_searches_under(coll text, setting text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  p text := (SELECT max(s) FROM nc WHERE s LIKE 'john.%');
  n bigint;
BEGIN
  PERFORM set_config('btlayout.upper_copy_sort_keys', setting, false);
  CALL uc_reset();
  FOR i IN 1 .. 2 LOOP
    EXECUTE format('SELECT count(*) FROM nc WHERE s = $1 COLLATE %s', quote_ident(coll))
      INTO n USING p;
    IF n = 0 THEN
      RAISE EXCEPTION 'lookup of % in % found nothing', p, coll;
    END IF;
  END LOOP;
  RETURN (SELECT s.upper_key_searches - u.keys FROM btlayout_search_stats() s, uc0 u);
END
$$;
