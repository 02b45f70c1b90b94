--
-- twins: the helpers of the differential tests that compare btlayout with
-- core btree on twin tables (queries, arrays): the same statement run on
-- both, planner settings forcing one kind of scan, plans as alike as the
-- server versions allow, results compared row for row or as multisets, and
-- the same scroll-cursor moves on both.  Included with \i by each test,
-- into the schema it set as search_path; not a test of its own.
--

-- Run the same statement on both tables: %1$s in the text is the access
-- method name (btree / btlayout).
CREATE FUNCTION both_am(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n1 bigint;
	n2 bigint;
BEGIN
	EXECUTE format(stmt, 'btree');
	GET DIAGNOSTICS n1 = ROW_COUNT;
	EXECUTE format(stmt, 'btlayout');
	GET DIAGNOSTICS n2 = ROW_COUNT;
	RETURN format('btree %s rows, btlayout %s rows', n1, n2);
END $$;

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
	PERFORM set_config('enable_indexscan',
		CASE WHEN mode = 'bitmap' THEN 'off' ELSE 'on' END, true);
	PERFORM set_config('enable_indexonlyscan',
		CASE WHEN mode IN ('ios', 'merge') THEN 'on' ELSE 'off' END, true);
	PERFORM set_config('enable_bitmapscan',
		CASE WHEN mode = 'bitmap' THEN 'on' ELSE 'off' END, true);
	PERFORM set_config('enable_sort',
		CASE WHEN mode IN ('index', 'ios') THEN 'off' ELSE 'on' END, true);
	PERFORM set_config('enable_hashjoin', 'off', true);
	PERFORM set_config('enable_mergejoin',
		CASE WHEN mode = 'merge' THEN 'on' ELSE 'off' END, true);
	PERFORM set_config('enable_nestloop',
		CASE WHEN mode = 'merge' THEN 'off' ELSE 'on' END, true);
	PERFORM set_config('enable_material', 'off', true);
	PERFORM set_config('max_parallel_workers_per_gather',
		CASE WHEN mode = 'parallel' THEN '2' ELSE '0' END, true);
	IF mode = 'parallel' THEN
		PERFORM set_config('parallel_setup_cost', '0', true);
		PERFORM set_config('parallel_tuple_cost', '0', true);
		PERFORM set_config('min_parallel_index_scan_size', '0', true);
		PERFORM set_config('min_parallel_table_scan_size', '0', true);
		PERFORM set_config('enable_indexonlyscan', 'on', true);
	END IF;
END $$;

-- The lines of a plan, as alike as versions allow: without 18's
-- "Disabled: true" marks of disabled nodes, its "Index Searches" counts and
-- fractional row counts, 15's "(returns $0)" after an InitPlan's name, and
-- 19's names of InitPlans ("minmax_1") and "Replaces:" lines.
CREATE FUNCTION plan_lines(q text, options text DEFAULT 'COSTS OFF')
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (' || options || ') ' || q LOOP
		CONTINUE WHEN line ~ '^\s*(Disabled: true|Index Searches: \d+|Replaces: \w+)$';
		line := regexp_replace(line, '^(\s*InitPlan \d+) \(returns \$\d+\)$', '\1');
		line := regexp_replace(line, '^(\s*InitPlan )[a-z]+_(\d+)$', '\1\2');
		RETURN NEXT regexp_replace(line, '(rows=\d+)\.00 ', '\1 ');
	END LOOP;
END $$;

-- The plan of a statement, as one text.
CREATE FUNCTION plan_of(q text) RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(l, E'\n') || E'\n' FROM plan_lines(q) l
$$;

-- Compare query q (a format() template, %1$s = access method) between btree
-- and btlayout.  mode: index / ios / bitmap / nestloop / merge / parallel
-- (scan_mode).
-- pattern: a regular expression the btlayout plan must match, e.g.
-- 'Index Scan Backward using t_btlayout_k'.  ordered: compare rows in the
-- order the query returns them (index order, heap order for bitmap scans of
-- identical heaps); otherwise as multisets.  The statement that is explained
-- and checked is the very one whose rows are collected.
--
-- keys: for backward scans.  In PostgreSQL 15 a backward scan returns the
-- TIDs inside one posting list in ascending order (posting lists themselves
-- in descending order), so the order of rows with equal keys depends on how
-- duplicates happen to be grouped into posting lists, which differs between
-- an index built by CREATE INDEX and one grown by inserts, even for core
-- btree alone.  With keys (an expression list over the query's output
-- columns) the key sequence must be equal in the scan's order and the rows
-- equal as multisets.  Forward scans return equal keys in heap TID order,
-- whatever the posting lists, and are compared strictly.
CREATE FUNCTION cmp(mode text, pattern text, q text, ordered bool DEFAULT true,
					keys text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	wrap text := CASE WHEN ordered
		THEN 'SELECT array_agg(x::text) FROM (%s) x'
		ELSE 'SELECT array_agg(x::text ORDER BY x::text) FROM (%s) x' END;
	qa text := format(wrap, format(q, 'btree'));
	qb text := format(wrap, format(q, 'btlayout'));
	plan text;
	ra text[];
	rb text[];
	pos int;
BEGIN
	PERFORM scan_mode(mode);
	plan := plan_of(qb);
	IF plan !~ pattern THEN
		RETURN 'NOT USED: ' || plan;
	END IF;
	IF mode IN ('index', 'ios') AND plan ~ '\mSort\M' THEN
		RETURN 'SORTED: ' || plan;
	END IF;
	IF keys IS NOT NULL THEN
		EXECUTE format('SELECT array_agg(x::text ORDER BY x::text) FROM (%s) x',
					   format(q, 'btree')) INTO ra;
		EXECUTE format('SELECT array_agg(x::text ORDER BY x::text) FROM (%s) x',
					   format(q, 'btlayout')) INTO rb;
		IF ra IS DISTINCT FROM rb THEN
			RETURN format('MISMATCH: rows differ as multisets, btree %s rows, btlayout %s rows',
						  cardinality(ra), cardinality(rb));
		END IF;
		qa := format('SELECT array_agg(ROW(%s)::text) FROM (%s) x', keys, format(q, 'btree'));
		qb := format('SELECT array_agg(ROW(%s)::text) FROM (%s) x', keys, format(q, 'btlayout'));
		IF plan_of(qb) !~ pattern THEN
			RETURN 'NOT USED: ' || plan_of(qb);
		END IF;
	END IF;
	EXECUTE qa INTO ra;
	EXECUTE qb INTO rb;
	IF ra IS NOT DISTINCT FROM rb THEN
		RETURN format('%s rows: same', coalesce(cardinality(ra), 0));
	END IF;
	FOR i IN 1 .. greatest(cardinality(ra), cardinality(rb)) LOOP
		pos := i;
		EXIT WHEN ra[i] IS DISTINCT FROM rb[i];
	END LOOP;
	RETURN format('MISMATCH: btree %s rows, btlayout %s rows, first difference at row %s: btree %s, btlayout %s',
				  coalesce(cardinality(ra), 0), coalesce(cardinality(rb), 0), pos,
				  coalesce(ra[pos], 'none'), coalesce(rb[pos], 'none'));
END $$;

-- The same sequence of scrollable-cursor moves on q for btree and btlayout.
CREATE FUNCTION cursor_moves(c refcursor) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
	r record;
	res text[] := '{}';
BEGIN
	FETCH PRIOR FROM c INTO r;     res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;      res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;      res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;      res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH PRIOR FROM c INTO r;     res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH ABSOLUTE 700 FROM c INTO r; res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH RELATIVE -333 FROM c INTO r; res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH RELATIVE 50 FROM c INTO r; res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	MOVE FORWARD 1000 FROM c;
	FETCH NEXT FROM c INTO r;      res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	MOVE BACKWARD 2000 FROM c;
	FETCH PRIOR FROM c INTO r;     res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH LAST FROM c INTO r;      res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH PRIOR FROM c INTO r;     res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;      res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;      res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH PRIOR FROM c INTO r;     res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH ABSOLUTE -3 FROM c INTO r; res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH FIRST FROM c INTO r;     res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH PRIOR FROM c INTO r;     res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH NEXT FROM c INTO r;      res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH RELATIVE 0 FROM c INTO r; res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	FETCH ABSOLUTE 2 FROM c INTO r; res := res || CASE WHEN FOUND THEN r::text ELSE 'none' END;
	RETURN res;
END $$;

-- The same walk of scroll cursors over q on btree and on btlayout: walk is
-- the function that moves a cursor and returns what each move gave
-- (cursor_moves, or a test's own).  "same: " and the rows, or "MISMATCH"
-- and both walks; brief: "<n> steps: same", or the first step that
-- differs.  The btlayout cursor's plan must match pattern and have no Sort
-- or Materialize: the index scan itself goes backward.
CREATE FUNCTION cursor_cmp(mode text, pattern text, q text,
						   walk text DEFAULT 'cursor_moves', brief bool DEFAULT false)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	ca refcursor;
	cb refcursor;
	ra text[];
	rb text[];
	plan text;
	i int := 1;
BEGIN
	PERFORM scan_mode(mode);
	PERFORM set_config('enable_sort', 'off', true);
	plan := plan_of('DECLARE c SCROLL CURSOR FOR ' || format(q, 'btlayout'));
	IF plan !~ pattern OR plan ~ '\mSort\M|Materialize' THEN
		RETURN 'NOT USED: ' || plan;
	END IF;
	OPEN ca SCROLL FOR EXECUTE format(q, 'btree');
	OPEN cb SCROLL FOR EXECUTE format(q, 'btlayout');
	EXECUTE format('SELECT %I($1)', walk) INTO ra USING ca;
	EXECUTE format('SELECT %I($1)', walk) INTO rb USING cb;
	CLOSE ca;
	CLOSE cb;
	IF ra IS NOT DISTINCT FROM rb THEN
		IF brief THEN
			RETURN format('%s steps: same', cardinality(rb));
		END IF;
		RETURN 'same: ' || array_to_string(rb, ' ');
	END IF;
	IF brief THEN
		WHILE ra[i] IS NOT DISTINCT FROM rb[i] LOOP
			i := i + 1;
		END LOOP;
		RETURN format('MISMATCH at step %s: btree %s, btlayout %s', i, ra[i], rb[i]);
	END IF;
	RETURN 'MISMATCH: btree ' || array_to_string(ra, ' ') ||
		' btlayout ' || array_to_string(rb, ' ');
END $$;

-- Only the results of the suite function named (rows of test, result) that
-- are not "same", and a count of the others
CREATE FUNCTION suite_summary(suite text) RETURNS TABLE (test text, result text)
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	n int := 0;
	nsame int := 0;
BEGIN
	FOR r IN EXECUTE format('SELECT * FROM %I()', suite) LOOP
		n := n + 1;
		IF r.result ~ 'same$' THEN
			nsame := nsame + 1;
		ELSE
			test := r.test;
			result := r.result;
			RETURN NEXT;
		END IF;
	END LOOP;
	test := 'total';
	result := format('%s of %s same', nsame, n);
	RETURN NEXT;
END $$;
