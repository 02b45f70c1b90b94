--
-- types: btlayout against core btree, type by type
--
-- For each type (and collation, and non-default operator class) the same
-- 2000 rows, with NULLs, duplicates and the type's special values (NaN,
-- infinities, -0, 1.0 vs 1.00, trailing blanks, empty ranges...), go into
-- two tables, one indexed USING btree and one USING btlayout.  Then ordered
-- scans forward and backward, index-only scans, bitmap scans, equality,
-- IN and range probes (and cross-type probes where the type has them) run on
-- both, with the plans forced onto the index and checked (the btlayout plan
-- must use the expected node on the btlayout index, else "NOT USED").  Then
-- 1000 more rows are inserted (the server's insertion code on a tree our
-- loader built) and everything runs again, and again after
-- btlayout_relayout().  The in-page layout of the btlayout index rotates
-- through none, eytzinger, veb, btorder and blocked from type to type.  Last, a unique index is built
-- with each access method on values distinct as text: both must succeed, or
-- both must fail ("duplicate": numeric 1.0 and 1.00, float -0 and 0,
-- interval 1 day and 24 hours, jsonb 1 and 1.0 are equal keys).
--
-- Not compared here: "WHERE boolcol" and "boolcol = true", which the
-- PostgreSQL 15 planner turns into an index qual only for btree's own
-- boolean operator family (IsBooleanOpfamily), so a btlayout index on a
-- bool column is used for <, <=, >= and > only.
--
-- One line per type: "ok" when every check agreed, else the failed checks.
--
SET client_min_messages = warning;
-- plans forced with enable_* = off cost more than jit_above_cost: no JIT
SET jit = off;
SELECT NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'btlayout') AS create_btlayout \gset
CREATE EXTENSION IF NOT EXISTS btlayout;
CREATE SCHEMA btl_types;
SET search_path = btl_types, public;

CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok';	-- enum order is not OID order
ALTER TYPE mood ADD VALUE 'ecstatic';
CREATE TYPE pair AS (x int, y text);
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);

-- Plan settings for a kind of scan; local to the current transaction.
CREATE FUNCTION scan_mode(mode text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	-- 16 and later may sort an ordered aggregate's input in a Sort node,
	-- which would hide whether the index gave the order
	IF current_setting('server_version_num')::int >= 160000 THEN
		PERFORM set_config('enable_presorted_aggregate', 'off', true);
	END IF;
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_tidscan', 'off', true);
	PERFORM set_config('enable_sort', 'off', true);
	PERFORM set_config('enable_indexscan',
		CASE WHEN mode = 'bitmap' THEN 'off' ELSE 'on' END, true);
	PERFORM set_config('enable_indexonlyscan',
		CASE WHEN mode = 'ios' THEN 'on' ELSE 'off' END, true);
	PERFORM set_config('enable_bitmapscan',
		CASE WHEN mode = 'bitmap' THEN 'on' ELSE 'off' END, true);
END $$;

-- Compare one query between _tb (btree) and _tl (btlayout): %1$s in q is
-- the table.  Rows are compared in the order the query returns them
-- (ordered) or as multisets.  Returns NULL when equal, else what went wrong.
CREATE FUNCTION cmp1(label text, mode text, node text, q text, ordered bool)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	wrap text := CASE WHEN ordered
		THEN 'SELECT array_agg(x::text) FROM (%s) x'
		ELSE 'SELECT array_agg(x::text ORDER BY x::text) FROM (%s) x' END;
	qa text := format(wrap, format(q, '_tb'));
	qb text := format(wrap, format(q, '_tl'));
	plan text := '';
	line text;
	ra text[];
	rb text[];
BEGIN
	PERFORM scan_mode(mode);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || qb LOOP
		-- (18 marks disabled nodes)
		CONTINUE WHEN line ~ '^\s*Disabled: true$';
		plan := plan || line || ' ';
	END LOOP;
	IF plan !~ (node || ' (using|on) _tl_v\M') OR plan ~ '\mSort\M' THEN
		RETURN label || ': NOT USED (' || plan || ')';
	END IF;
	EXECUTE qa INTO ra;
	EXECUTE qb INTO rb;
	IF ra IS DISTINCT FROM rb THEN
		RETURN format('%s: MISMATCH (btree %s rows, btlayout %s rows)', label,
					  coalesce(cardinality(ra), 0), coalesce(cardinality(rb), 0));
	END IF;
	RETURN NULL;
END $$;

-- All the checks, on the current contents of _tb and _tl.  ops: the
-- operator class's <, <=, =, >=, > operators.  show: how an index-only
-- scan's result is printed for comparison.  Appends failures to fails and
-- returns how many checks ran.
CREATE FUNCTION run_checks(ops text[], show text, extra text[], kind "char",
						   INOUT fails text[], INOUT nchecks int)
LANGUAGE plpgsql AS $$
DECLARE
	lt text := ops[1];
	le text := ops[2];
	eq text := ops[3];
	ge text := ops[4];
	gt text := ops[5];
	p17 text := '(SELECT v FROM _src WHERE id = 17)';
	p37 text := '(SELECT v FROM _src WHERE id = 37)';
	p1000 text := '(SELECT v FROM _src WHERE id = 1000)';
	p1999 text := '(SELECT v FROM _src WHERE id = 1999)';
	checks text[] := ARRAY[
		-- label, mode, node, query (%1$s: table), ordered
		'asc', 'index', 'Index Scan', format('SELECT id FROM %%1$s ORDER BY v USING %s', lt), 't',
		'desc', 'index', 'Index Scan Backward', format('SELECT %s AS shown FROM %%1$s ORDER BY v USING %s', show, gt), 't',
		'asc limit', 'index', 'Index Scan', format('SELECT id FROM %%1$s WHERE v IS NOT NULL ORDER BY v USING %s LIMIT 10', lt), 't',
		'desc limit', 'index', 'Index Scan Backward', format('SELECT %s AS shown FROM %%1$s ORDER BY v USING %s LIMIT 100', show, gt), 't',
		'ios asc', 'ios', 'Index Only Scan', format('SELECT %s AS shown FROM %%1$s ORDER BY v USING %s', show, lt), 't',
		'ios desc', 'ios', 'Index Only Scan Backward', format('SELECT %s AS shown FROM %%1$s ORDER BY v USING %s', show, gt), 't',
		'eq', 'index', 'Index Scan', format('SELECT id FROM %%1$s WHERE v %s %s', eq, p17), 't',
		'eq special', 'index', 'Index Scan', format('SELECT id FROM %%1$s WHERE v %s %s', eq, p37), 't',
		'eq 1000', 'index', 'Index Scan', format('SELECT id FROM %%1$s WHERE v %s %s', eq, p1000), 't',
		'in', 'index', 'Index Scan', format('SELECT id FROM %%1$s WHERE v %s ANY (ARRAY(SELECT v FROM _src WHERE id IN (17, 37, 50, 74, 111, 1000, 1999)))', eq), 't',
		'gt', 'index', 'Index Scan', format('SELECT id FROM %%1$s WHERE v %s %s', gt, p1000), 't',
		'ge', 'index', 'Index Scan', format('SELECT id FROM %%1$s WHERE v %s %s', ge, p1999), 't',
		'lt desc', 'index', 'Index Scan Backward', format('SELECT %s AS shown FROM %%1$s WHERE v %s %s ORDER BY v USING %s', show, lt, p1000, gt), 't',
		'le desc', 'index', 'Index Scan Backward', format('SELECT %s AS shown FROM %%1$s WHERE v %s %s ORDER BY v USING %s', show, le, p17, gt), 't',
		'range', 'index', 'Index Scan', format('SELECT id FROM %%1$s WHERE v %s %s AND v %s %s', ge, p17, le, p1999), 't',
		'range rev', 'index', 'Index Scan', format('SELECT id FROM %%1$s WHERE v %s %s AND v %s %s', ge, p1999, le, p17), 't',
		'bitmap', 'bitmap', 'Bitmap Index Scan', format('SELECT id FROM %%1$s WHERE v %s %s AND v %s %s OR v %s %s AND v %s %s', ge, p17, le, p1999, ge, p1999, le, p17), 'f',
		'is null', 'index', 'Index Scan', 'SELECT id FROM %1$s WHERE v IS NULL', 't',
		'not null', 'ios', 'Index Only Scan', 'SELECT count(*) FROM %1$s WHERE v IS NOT NULL', 't'];
	i int;
	r text;
BEGIN
	FOR i IN 0 .. cardinality(checks) / 5 - 1 LOOP
		-- IS NULL on a composite is a row test, not indexable; = ANY of an
		-- array of arrays does not exist
		CONTINUE WHEN kind = 'c' AND checks[5 * i + 1] IN ('is null', 'not null');
		CONTINUE WHEN kind = 'A' AND checks[5 * i + 1] = 'in';
		r := cmp1(checks[5 * i + 1], checks[5 * i + 2], checks[5 * i + 3],
				  checks[5 * i + 4], checks[5 * i + 5]::bool);
		nchecks := nchecks + 1;
		IF r IS NOT NULL THEN
			fails := fails || r;
		END IF;
	END LOOP;
	FOR i IN 1 .. coalesce(cardinality(extra), 0) LOOP
		r := cmp1(extra[i], 'index', 'Index Scan',
				  'SELECT id FROM %1$s WHERE ' || extra[i], true);
		nchecks := nchecks + 1;
		IF r IS NOT NULL THEN
			fails := fails || r;
		END IF;
	END LOOP;
END $$;

-- Build unique index u_v on _u with an access method; 'ok' or the SQLSTATE
CREATE FUNCTION try_unique(am text, opclass text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('CREATE UNIQUE INDEX _u_v ON _u USING %s (v %s)', am, opclass);
	EXECUTE 'DROP INDEX _u_v';
	RETURN 'ok';
EXCEPTION WHEN others THEN
	RETURN CASE WHEN SQLSTATE = '23505' THEN 'duplicate' ELSE SQLSTATE || ' ' || SQLERRM END;
END $$;

-- The whole test for one type.  typ: the column's type (with COLLATE if
-- any); expr: a value for row i; specials: a text[] expression, the text
-- forms of special values, used for every 37th row; extra: further WHERE clauses to compare
-- (cross-type operators); opclass and ops: a non-default operator class
-- and its operators.
CREATE FUNCTION check_type(typ text, expr text, specials text DEFAULT NULL,
						   extra text[] DEFAULT '{}', opclass text DEFAULT '',
						   ops text[] DEFAULT '{<,<=,=,>=,>}',
						   show text DEFAULT 'v::text', layout text DEFAULT 'none',
						   OUT nrows bigint, OUT result text, OUT uniq text)
LANGUAGE plpgsql AS $$
DECLARE
	val text := format('CASE WHEN i %% 50 = 0 THEN NULL %s ELSE (%s) END',
		CASE WHEN specials IS NULL THEN '' ELSE
			format('WHEN i %% 37 = 0 THEN ((%s)::text[])[1 + (i / 37) %% cardinality((%s)::text[])]::%s',
				   specials, specials, typ) END,
		expr);
	fails text[] := '{}';
	nchecks int := 0;
	ub text;
	ul text;
	kind "char";
BEGIN
	DROP TABLE IF EXISTS _src, _tb, _tl, _u;
	EXECUTE format('CREATE TABLE _src (id int, v %s)', typ);
	EXECUTE format('INSERT INTO _src SELECT i, %s FROM generate_series(1, 3000) i', val);
	CREATE TABLE _tb (LIKE _src) WITH (autovacuum_enabled = off);
	CREATE TABLE _tl (LIKE _src) WITH (autovacuum_enabled = off);
	INSERT INTO _tb SELECT * FROM _src WHERE id <= 2000 ORDER BY id;
	INSERT INTO _tl SELECT * FROM _src WHERE id <= 2000 ORDER BY id;
	EXECUTE format('CREATE INDEX _tb_v ON _tb USING btree (v %s)', opclass);
	EXECUTE format('CREATE INDEX _tl_v ON _tl USING btlayout (v %s) WITH (layout = %s)',
				   opclass, layout);
	ANALYZE _tb;
	ANALYZE _tl;
	SELECT CASE WHEN t.typtype = 'c' THEN 'c' ELSE t.typcategory END INTO kind
	FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
	WHERE a.attrelid = '_src'::regclass AND a.attname = 'v';

	SELECT * INTO fails, nchecks FROM run_checks(ops, show, extra, kind, fails, nchecks);

	-- 1000 more rows through the server's insertion code
	INSERT INTO _tb SELECT * FROM _src WHERE id > 2000 ORDER BY id;
	INSERT INTO _tl SELECT * FROM _src WHERE id > 2000 ORDER BY id;
	SELECT * INTO fails, nchecks FROM run_checks(ops, show, extra, kind, fails, nchecks);

	-- pages broken by the inserts laid out again
	PERFORM btlayout_relayout('_tl_v');
	SELECT * INTO fails, nchecks FROM run_checks(ops, show, extra, kind, fails, nchecks);

	-- the uniqueness check of the build, with the operator class's equality
	EXECUTE format('CREATE TABLE _u AS SELECT DISTINCT ON (md5(v::text)) v FROM _src ORDER BY md5(v::text), id');
	ub := try_unique('btree', opclass);
	ul := try_unique('btlayout', opclass);
	uniq := CASE WHEN ub = ul THEN ub ELSE format('MISMATCH: btree %s, btlayout %s', ub, ul) END;

	SELECT count(*) INTO nrows FROM _tl;
	result := CASE WHEN cardinality(fails) = 0 THEN format('ok (%s checks)', nchecks)
				   ELSE array_to_string(fails, '; ') END;
	DROP TABLE _src, _tb, _tl, _u;
EXCEPTION WHEN others THEN
	result := 'ERROR: ' || SQLERRM;
END $$;

-- The harness can fail: rows that differ, and a plan that does not use the
-- index, are reported
SELECT * FROM check_type('int4', 'i % 100', NULL,
	ARRAY['v < CASE WHEN ''%1$s'' = ''_tb'' THEN 5 ELSE 6 END', 'id = 5']);

-- the comparisons, type by type
SELECT t.name, (ARRAY['none', 'eytzinger', 'veb', 'btorder', 'blocked'])[1 + (t.n - 1) % 5] AS layout, c.*
FROM (SELECT *, row_number() OVER () AS n FROM (VALUES
	('int2', 'int2', $$((i * 7919) % 1000 - 500)::int2$$, $$'{32767,-32768,0}'$$,
		ARRAY['v = 5::int4', 'v < 100::int8', 'v >= -3::int4 AND v < 40000::int4', 'v > -40000::int8 AND v <= -499::int8', 'v = ANY (''{1,2,70000}''::int4[])'], '', NULL, NULL),
	('int4', 'int4', $$(i * 7919) % 1000 - 500$$, $$'{2147483647,-2147483648,0}'$$,
		ARRAY['v = 5::int8', 'v < 100::int2', 'v >= -3::int2 AND v < 4294967296::int8', 'v > 2147483648::int8', 'v < -2147483649::int8', 'v = ANY (''{1,2,5000000000}''::int8[])'], '', NULL, NULL),
	('int8', 'int8', $$((i * 7919) % 1000 - 500)::int8 * 1000000007$$, $$'{9223372036854775807,-9223372036854775808,0}'$$,
		ARRAY['v = 0::int4', 'v > 0::int2', 'v < (-2147483648)::int4', 'v >= 2147483647::int4'], '', NULL, NULL),
	('float4', 'float4', $$(((i * 7919) % 1000 - 500) / 7.0)::float4$$, $$'{NaN,Infinity,-Infinity,-0,0,1e-45,3.4e38,-3.4e38}'$$,
		ARRAY['v = ''NaN''::float8', 'v > 1.5::float8', 'v < ''Infinity''::float8', 'v = 0::float8', 'v >= ''-Infinity''::float8 AND v <= -70::float8', 'v = -0.0::float4'], '', NULL, NULL),
	('float8', 'float8', $$((i * 7919) % 1000 - 500) / 7.0$$, $$'{NaN,Infinity,-Infinity,-0,0,5e-324,1.7e308,-1.7e308}'$$,
		ARRAY['v = ''NaN''', 'v >= ''NaN''', 'v > 1::float4', 'v = 0::float4', 'v = -0.0', 'v < ''-Infinity''::float4', 'v = ''Infinity''::float4'], '', NULL, NULL),
	('numeric', 'numeric', $$round(((i * 7919) % 1000 - 500) / 7.0, i % 4)$$, $$'{NaN,Infinity,-Infinity,1.0,1.00,1,0.000,-0,1e-100,1e100}'$$,
		ARRAY['v = 1.00', 'v = 1', 'v = ''NaN''', 'v > 70.5', 'v = 0'], '', NULL, NULL),
	('text (default collation)', 'text', $$CASE WHEN i % 3 = 0 THEN repeat(md5((i % 200)::text), 1 + i % 25) ELSE md5(((i * 7919) % 800)::text) END$$,
		$$'{"",a,A,ab,b,é,"z "," z",Z,Ω,"a b"}'$$,
		ARRAY['v = ''a''', 'v > ''f''', 'v = ''a''::name COLLATE "default"', 'v < ''1''::name COLLATE "default"'], '', NULL, NULL),
	('text COLLATE "C"', 'text COLLATE "C"', $$CASE WHEN i % 3 = 0 THEN repeat(md5((i % 200)::text), 1 + i % 25) ELSE md5(((i * 7919) % 800)::text) END$$,
		$$'{"",a,A,ab,b,é,"z "," z",Z,Ω,"a b"}'$$,
		ARRAY['v = ''A''', 'v > ''Z''', 'v < ''a''', 'v = ''a''::name', 'v >= ''f''::name'], '', NULL, NULL),
	('text COLLATE "POSIX"', 'text COLLATE "POSIX"', $$md5(((i * 7919) % 800)::text)$$,
		$$'{"",a,A,ab,b,é,"z "," z",Z}'$$, ARRAY['v = ''a''', 'v > ''Z'''], '', NULL, NULL),
	('text COLLATE "und-x-icu"', 'text COLLATE "und-x-icu"', $$CASE i % 4 WHEN 0 THEN upper(md5(((i * 7919) % 800)::text)) ELSE md5(((i * 7919) % 600)::text) END$$,
		$$'{"",a,A,ab,b,é,e,E,"z "," z",Z,Ω}'$$, ARRAY['v = ''a''', 'v > ''Z''', 'v < ''b'''], '', NULL, NULL),
	('text COLLATE ci (nondeterministic)', 'text COLLATE ci', $$CASE i % 4 WHEN 0 THEN upper(md5(((i * 7919) % 800)::text)) ELSE md5(((i * 7919) % 600)::text) END$$,
		$$'{"",a,A,ab,AB,Ab,b,é,E,e}'$$, ARRAY['v = ''A''', 'v = ''ab''', 'v > ''e''', 'v = ''Abc'''], '', NULL, NULL),
	('text_pattern_ops', 'text', $$CASE WHEN i % 3 = 0 THEN repeat(md5((i % 200)::text), 1 + i % 25) ELSE md5(((i * 7919) % 800)::text) END$$,
		$$'{"",a,A,ab,b,é,"z "," z",Z}'$$, ARRAY['v ~>=~ ''a'' AND v ~<~ ''b''', 'v = ''a'''], 'text_pattern_ops', '{~<~,~<=~,=,~>=~,~>~}', NULL),
	('varchar', 'varchar(1000)', $$CASE WHEN i % 3 = 0 THEN repeat(md5((i % 200)::text), 1 + i % 25) ELSE md5(((i * 7919) % 800)::text) END$$,
		$$'{"",a,A,ab,b,"z "," z",Z}'$$, ARRAY['v = ''a''', 'v > ''f''::varchar'], '', NULL, NULL),
	('varchar_pattern_ops', 'varchar(1000)', $$md5(((i * 7919) % 800)::text)$$,
		$$'{"",a,A,ab,b,"z "," z",Z}'$$, ARRAY['v ~>=~ ''a'' AND v ~<~ ''b'''], 'varchar_pattern_ops', '{~<~,~<=~,=,~>=~,~>~}', NULL),
	('char(8)', 'char(8)', $$(ARRAY['a', 'a ', 'ab', 'ab   ', ' ab', '', 'b', 'abcdef'])[1 + (i * 7) % 8] || ((i * 7919) % 7)::text$$,
		$$'{a,"a  ","",ab," ab",abcdef}'$$, ARRAY['v = ''a''', 'v = ''a    ''', 'v > ''ab'''], '', NULL, $$v::text || '/' || octet_length(v)$$),
	('bpchar (no length)', 'bpchar', $$(ARRAY['a', 'a ', 'ab', 'ab   ', ' ab', '', 'b', 'abcdef'])[1 + (i * 7) % 8] || ((i * 7919) % 7)::text || repeat(' ', i % 3)$$,
		$$'{a,"a  ","",ab," ab",abcdef}'$$, ARRAY['v = ''a''', 'v = ''a    ''', 'v > ''ab'''], '', NULL, $$v::text || '/' || octet_length(v)$$),
	('bpchar_pattern_ops', 'char(8)', $$(ARRAY['a', 'a ', 'ab', 'ab   ', ' ab', '', 'b', 'abcdef'])[1 + (i * 7) % 8] || ((i * 7919) % 7)::text$$,
		$$'{a,"a  ","",ab," ab",abcdef}'$$, ARRAY['v = ''a'''], 'bpchar_pattern_ops', '{~<~,~<=~,=,~>=~,~>~}', $$v::text || '/' || octet_length(v)$$),
	('bytea', 'bytea', $$decode(md5(((i * 7919) % 800)::text), 'hex')$$, $$'{"\\x","\\x00","\\xff","\\x0000","\\x00ff"}'$$,
		ARRAY['v = ''\x00''::bytea', 'v < ''\x10''::bytea'], '', NULL, NULL),
	('bool', 'bool', $$i % 3 = 0$$, $$'{true,false}'$$, ARRAY['v < true', 'v > false'], '', NULL, NULL),
	('"char"', '"char"', $$chr(65 + (i * 7) % 50)::"char"$$, $$'{a,Z,"",!}'$$, ARRAY['v = ''A''::"char"'], '', NULL, NULL),
	('name', 'name', $$('n' || (i * 7919) % 500)::name$$, $$'{"",a,Z,nZ}'$$,
		ARRAY['v = ''n17''::text', 'v < ''n3''::text', 'v = ''n17''::name', 'v >= ''n499''::text'], '', NULL, NULL),
	('oid', 'oid', $$((i * 7919) % 1000)::oid$$, $$'{4294967295,0,2147483648}'$$, ARRAY['v = 5', 'v > 2147483647::oid'], '', NULL, NULL),
	('date', 'date', $$'2000-01-01'::date + (i * 7919) % 3000$$, $$'{infinity,-infinity,4713-01-01 BC,5874897-12-31}'$$,
		ARRAY['v < ''2004-01-01 12:00''::timestamp', 'v >= ''2003-01-01 00:00:00+00''::timestamptz', 'v = ''2001-01-01''::timestamp', 'v = ''infinity''::timestamp'], '', NULL, NULL),
	('timestamp', 'timestamp', $$'2000-01-01'::timestamp + ((i * 7919) % 5000) * interval '37 minutes 13.5 seconds'$$,
		$$'{infinity,-infinity,2000-01-01 00:00:00,4713-01-01 00:00:00 BC}'$$,
		ARRAY['v >= ''2000-03-01''::date', 'v < ''2000-01-02''::date', 'v = ''2000-01-01''::date', 'v > ''2000-02-01 00:00:00+00''::timestamptz'], '', NULL, NULL),
	('timestamptz', 'timestamptz', $$'2000-01-01 00:00:00+00'::timestamptz + ((i * 7919) % 5000) * interval '37 minutes 13.5 seconds'$$,
		$$'{infinity,-infinity,2000-01-01 00:00:00+00,2000-01-01 02:00:00+02}'$$,
		ARRAY['v < ''2000-02-01''::date', 'v = ''2000-01-01 00:00:00''::timestamp', 'v > ''2000-01-15 00:00:00''::timestamp'], '', NULL, NULL),
	('time', 'time', $$'00:00'::time + ((i * 7919) % 3000) * interval '17 seconds'$$, $$'{24:00,00:00,23:59:59.999999}'$$,
		ARRAY['v = ''00:00''', 'v > ''10:00'''], '', NULL, NULL),
	('timetz', 'timetz', $$(('00:00'::time + ((i * 7919) % 3000) * interval '17 seconds')::text || (ARRAY['+00', '+02', '-05'])[1 + i % 3])::timetz$$,
		$$'{00:00+00,02:00+02,00:00+02,24:00-15}'$$, ARRAY['v = ''02:00+02''', 'v < ''01:00+00'''], '', NULL, NULL),
	('interval', 'interval', $$((i * 7919) % 500) * interval '1 hour' + (i % 3) * interval '1 day' + (i % 5) * interval '1 mon'$$,
		$$'{1 day,24 hours,1 mon,30 days,720 hours,-1 day,0,1 year,12 mon,360 days}'$$,
		ARRAY['v = ''1 day''', 'v = ''30 days''', 'v > ''10 days''', 'v = ''2 days 1 hour'''], '', NULL, NULL),
	('uuid', 'uuid', $$md5(((i * 7919) % 900)::text)::uuid$$,
		$$'{00000000-0000-0000-0000-000000000000,ffffffff-ffff-ffff-ffff-ffffffffffff}'$$, ARRAY['v < ''10000000-0000-0000-0000-000000000000'''], '', NULL, NULL),
	('inet', 'inet', $$CASE WHEN i % 3 = 0 THEN ('2001:db8::' || to_hex((i * 7919) % 4096) || '/' || (64 + i % 65))::inet ELSE ('10.' || (i * 7) % 3 || '.' || (i * 7919) % 256 || '.' || i % 7 || '/' || (16 + i % 17))::inet END$$,
		$$'{0.0.0.0/0,255.255.255.255,::/0,10.0.0.0/8,10.0.0.0,10.0.0.0/32}'$$,
		ARRAY['v = ''10.0.0.0/8''', 'v < ''10.1.0.0''', 'v > ''::''', 'v = ''10.0.0.0/8''::cidr'], '', NULL, NULL),
	('cidr', 'cidr', $$network(('10.' || (i * 7) % 3 || '.' || (i * 7919) % 256 || '.' || i % 7 || '/' || (16 + i % 17))::inet)::cidr$$,
		$$'{0.0.0.0/0,::/0,10.0.0.0/8,10.0.0.0/32}'$$, ARRAY['v = ''10.0.0.0/8''', 'v >= ''10.1.0.0/16'''], '', NULL, NULL),
	('cidr_ops on inet', 'inet', $$('10.' || (i * 7) % 3 || '.' || (i * 7919) % 256 || '.' || i % 7 || '/' || (16 + i % 17))::inet$$,
		$$'{0.0.0.0/0,10.0.0.0/8}'$$, ARRAY['v = ''10.0.0.0/8'''], 'cidr_ops', NULL, NULL),
	('macaddr', 'macaddr', $$('08:00:2b:' || lpad(to_hex((i * 7919) % 256), 2, '0') || ':' || lpad(to_hex(i % 7), 2, '0') || ':01')::macaddr$$,
		$$'{00:00:00:00:00:00,ff:ff:ff:ff:ff:ff}'$$, ARRAY['v > ''08:00:2b:80:00:00'''], '', NULL, NULL),
	('macaddr8', 'macaddr8', $$('08:00:2b:ff:fe:' || lpad(to_hex((i * 7919) % 256), 2, '0') || ':' || lpad(to_hex(i % 7), 2, '0') || ':01')::macaddr8$$,
		$$'{00:00:00:00:00:00:00:00,ff:ff:ff:ff:ff:ff:ff:ff}'$$, ARRAY['v < ''08:00:2b:ff:fe:80:00:00'''], '', NULL, NULL),
	('money', 'money', $$(((i * 7919) % 1000 - 500) / 4.0)::numeric::money$$, $$'{0,-92233720368547758.08,92233720368547758.07}'$$,
		ARRAY['v = 0::money', 'v > 100::money'], '', NULL, NULL),
	('bit(8)', 'bit(8)', $$((i * 7919) % 256)::bit(8)$$, $$'{00000000,11111111}'$$, ARRAY['v = B''00001111''', 'v > B''10000000'''], '', NULL, NULL),
	('varbit', 'varbit', $$substring(((i * 7919) % 65536)::bit(16)::varbit from 1 for 1 + i % 16)$$,
		$$'{"",0,1,00,000000000000000000000000000000000000000}'$$, ARRAY['v = B''0''', 'v < B''01'''], '', NULL, NULL),
	('jsonb', 'jsonb', $$CASE i % 5 WHEN 0 THEN to_jsonb((i * 7919) % 100) WHEN 1 THEN to_jsonb(md5((i % 50)::text)) WHEN 2 THEN jsonb_build_object('a', i % 10, 'b', (i * 7) % 5) WHEN 3 THEN jsonb_build_array(i % 7, 'x') ELSE to_jsonb(i % 4 = 0) END$$,
		$$ARRAY['null', '[]', '{}', '1.0', '1', '1.00', '""', '[null]', '-0', '0.0']$$,
		ARRAY['v = ''1''', 'v = ''{"a": 1, "b": 2}''', 'v > ''[]''', 'v < ''1'''], '', NULL, NULL),
	('int4[]', 'int4[]', $$ARRAY[(i * 7919) % 20, i % 3]$$,
		$$ARRAY['{}', '{NULL}', '{1,NULL}', '{1}', '{1,2,3}', '{{1,2},{3,4}}', '[0:1]={1,2}']$$,
		ARRAY['v = ''{1,2}''', 'v > ''{18}''', 'v = ''{}''', 'v < ''{1,NULL}'''], '', NULL, NULL),
	('text[]', 'text[]', $$ARRAY[md5(((i * 7919) % 300)::text), CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 4)::text END]$$,
		$$ARRAY['{}', '{NULL}', '{a}', '{a,b}', '{""}']$$, ARRAY['v = ''{a}''', 'v > ''{f}'''], '', NULL, NULL),
	('enum', 'mood', $$(enum_range(NULL::mood))[1 + (i * 7) % 5]$$, $$'{ecstatic,sad}'$$,
		ARRAY['v = ''meh''', 'v > ''ok''', 'v < ''meh'''], '', NULL, NULL),
	('int4range', 'int4range', $$int4range((i * 7919) % 100, (i * 7919) % 100 + i % 10)$$,
		$$'{empty,"(,)","[1,)","(,5)","[3,4)"}'$$, ARRAY['v = ''empty''', 'v = ''[3,4)''', 'v > ''[50,51)''', 'v < ''(,3)'''], '', NULL, NULL),
	('int4multirange', 'int4multirange', $$int4multirange(int4range(i % 50, i % 50 + 3), int4range(i % 50 + 5, i % 50 + (i * 7) % 7 + 6))$$,
		$$'{"{}","{(,)}","{[1,2)}"}'$$, ARRAY['v = ''{}''', 'v > ''{[40,41)}'''], '', NULL, NULL),
	('record (composite)', 'pair', $$ROW((i * 7919) % 50, CASE WHEN i % 7 = 0 THEN NULL ELSE md5((i % 20)::text) END)::pair$$,
		$$ARRAY['(,)', '(1,)', '(1,"")', '(-1,z)']$$,
		ARRAY['v = ROW(3, NULL)::pair', 'v = ROW(1, '''')::pair', 'v > ROW(48, ''f'')::pair', 'v < ROW(0, NULL)::pair'], '', NULL, NULL),
	('record_image_ops', 'pair', $$ROW((i * 7919) % 50, CASE WHEN i % 7 = 0 THEN NULL ELSE md5((i % 20)::text) END)::pair$$,
		$$ARRAY['(,)', '(1,)', '(1,"")', '(-1,z)']$$,
		ARRAY['v *= ROW(1, '''')::pair', 'v *> ROW(48, ''f'')::pair'], 'record_image_ops', '{*<,*<=,*=,*>=,*>}', NULL),
	('tid', 'tid', $$format('(%s,%s)', (i * 7919) % 300, i % 20)::tid$$, $$'{"(0,0)","(4294967295,65535)","(0,1)"}'$$,
		ARRAY['v = ''(1,1)''', 'v > ''(290,0)'''], '', NULL, NULL),
	('xid8', 'xid8', $$((i * 7919) % 100000)::text::xid8$$, $$'{0,18446744073709551615,3}'$$,
		ARRAY['v = ''3''::xid8', 'v > ''99000''::xid8'], '', NULL, NULL),
	('pg_lsn', 'pg_lsn', $$format('%s/%s', to_hex(i % 16), to_hex((i * 7919) % 100000))::pg_lsn$$,
		$$'{0/0,FFFFFFFF/FFFFFFFF,1/0}'$$, ARRAY['v = ''1/0''', 'v > ''F/0'''], '', NULL, NULL),
	('oidvector', 'oidvector', $$(((i * 7919) % 30)::text || ' ' || (i % 5)::text)::oidvector$$,
		$$ARRAY['', '0', '4294967295 1', '1 2 3']$$, ARRAY['v = ''1 2''', 'v < ''2'''], '', NULL, NULL),
	('tsvector', 'tsvector', $$to_tsvector('simple', 'word' || i % 30 || ' x' || (i * 7) % 11)$$,
		$$'{"",a,"a:1 b:2"}'$$, ARRAY['v = ''word3 x5''', 'v > ''word2'''], '', NULL, NULL),
	('tsquery', 'tsquery', $$('a' || i % 10 || ' & b' || (i * 7) % 9)::tsquery$$, $$'{a,"a | b","!a"}'$$,
		ARRAY['v = ''a1 & b7''', 'v > ''a5'''], '', NULL, NULL)
	) AS v(name, typ, expr, specials, extra, opclass, ops, show)) AS t,
	LATERAL check_type(t.typ, t.expr, t.specials, t.extra, t.opclass,
					   coalesce(t.ops::text[], '{<,<=,=,>=,>}'), coalesce(t.show, 'v::text'),
					   (ARRAY['none', 'eytzinger', 'veb', 'btorder', 'blocked'])[1 + (t.n - 1) % 5]) c
ORDER BY t.n;

-- Every type with a default btree operator class is covered above (or
-- through the polymorphic class it belongs to)
SELECT c.opcintype::regtype AS not_covered
FROM pg_opclass c JOIN pg_am am ON am.oid = c.opcmethod
WHERE am.amname = 'btree' AND c.opcdefault
  AND c.opcintype::regtype::text NOT IN
	('smallint', 'integer', 'bigint', 'real', 'double precision', 'numeric',
	 'text', 'character', 'bytea', 'boolean', '"char"', 'name', 'oid', 'date',
	 'timestamp without time zone', 'timestamp with time zone',
	 'time without time zone', 'time with time zone', 'interval', 'uuid',
	 'inet', 'macaddr', 'macaddr8', 'money', 'bit', 'bit varying', 'jsonb',
	 'anyarray', 'anyenum', 'anyrange', 'anymultirange', 'record', 'tid',
	 'xid8', 'pg_lsn', 'oidvector', 'tsvector', 'tsquery', 'oid8')
ORDER BY 1;

-- Types of newer servers, checked as above where the server has them
-- (19: oid8); the same line on every version: whether every check passed
SELECT t.typ AS newer_type, coalesce(c.result ~ '^ok ', true) AS ok
FROM (VALUES ('oid8', $$((i * 7919) % 100000)::text::oid8$$,
			  $$'{0,18446744073709551615,3}'$$,
			  ARRAY['v = ''3''::oid8', 'v > ''99000''::oid8'])) AS t(typ, expr, specials, extra)
LEFT JOIN LATERAL (SELECT * FROM check_type(t.typ, t.expr, t.specials, t.extra,
											layout => 'eytzinger')
				   WHERE to_regtype(t.typ) IS NOT NULL) c ON true;

-- A few real values, read through btlayout indexes
CREATE TABLE f (v float8);
INSERT INTO f VALUES ('NaN'), ('Infinity'), ('-Infinity'), ('-0'), ('0'), (1.5), (NULL), ('NaN');
CREATE INDEX f_v ON f USING btlayout (v);
CREATE TABLE n (v numeric);
INSERT INTO n VALUES (1.0), (1.00), (1), ('NaN'), ('-Infinity'), (0.5), (NULL);
CREATE INDEX n_v ON n USING btlayout (v);
CREATE TABLE b (v char(4), w bpchar);
INSERT INTO b VALUES ('a', 'a'), ('a ', 'a  '), ('', ''), (' a', ' a');
CREATE INDEX b_v ON b USING btlayout (v);
CREATE INDEX b_w ON b USING btlayout (w);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT v FROM f ORDER BY v;
SELECT v FROM f ORDER BY v;
SELECT v FROM f ORDER BY v DESC;
SELECT v FROM f WHERE v = 0;
SELECT v FROM f WHERE v > 1;
SELECT v FROM f WHERE v = 'NaN';
SELECT v FROM n ORDER BY v;
SELECT v FROM n WHERE v = 1;
SELECT '"' || v || '"' AS shown, octet_length(v) FROM b WHERE v = 'a' ORDER BY v;
SELECT '"' || w || '"' AS shown, octet_length(w) FROM b ORDER BY w;
RESET enable_seqscan;
RESET enable_bitmapscan;

RESET search_path;
DROP SCHEMA btl_types CASCADE;
\if :create_btlayout
DROP EXTENSION btlayout;
\endif
