/*
 * btlayout--1.6--1.7.sql: btlayout_search_stats() counts the searches that
 * followed a collation hint; the operator families follow the server's
 * btree
 */

\echo Use "ALTER EXTENSION btlayout UPDATE TO '1.7'" to load this file. \quit

/*
 * 1.7 lets in-page searches of strings in a collation that does not order
 * bytes follow a hint of its order (src/collhint.c); two new columns count
 * those searches and those whose answer the collation refused.  A
 * function's result columns cannot change in place.
 */
DROP FUNCTION btlayout_search_stats();
CREATE FUNCTION btlayout_search_stats(
	OUT layout_searches bigint, OUT layout_confirmed bigint,
	OUT layout_fallbacks bigint, OUT ordinary_searches bigint,
	OUT layout_with_inserts bigint, OUT lookup_relayouts bigint,
	OUT recent_buffer_hits bigint, OUT upper_copy_hits bigint,
	OUT upper_copy_misses bigint, OUT upper_key_searches bigint,
	OUT hinted_searches bigint, OUT hint_failures bigint)
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_search_stats() IS
  'in-page searches of this backend: by walking the layout (confirmed, or searched again) and through line pointers; descent steps that pinned a page in the buffer it was in last time; lookups that went from the copy of the upper levels to their leaf, and those that did not; pages of the copy searched by their integer keys; searches through line pointers that followed a collation hint, and those whose answer the collation refused';

/*
 * 1.0 copies the server's built-in btree operator families when the
 * extension is created.  pg_upgrade carries that copy over as it was on
 * the old server, while the new server's btree families may have grown:
 * PostgreSQL 18 gives the families of discrete types (integers, date,
 * bool, char, oid, uuid, ...) a skip support function (support function 6),
 * which nbtree's skip scans use; 19 adds a type, oid8, and its family.
 *
 * This step was 1.0 to 1.1's until 1.6, then 1.5 to 1.6's; it moves with
 * each new version so that it is the last step of every update path: a
 * cluster pg_upgraded at any version before 1.7 gets the new server's
 * families with one ALTER EXTENSION UPDATE.  (The next version moves it
 * again, so that there is one copy of it.)
 *
 * This step adds to each btlayout family the members of the btree family
 * of the same name that it lacks (an operator by strategy and input types,
 * a support function by number and input types), and creates the families
 * and classes of built-in btree families that btlayout has none of.  Every
 * member it adds is a member btree itself has for those types, so no index
 * changes meaning; on a server whose btree families the copy already
 * matches (any fresh CREATE EXTENSION) it changes nothing.  The families
 * BIN classes live in (text_bin_ops, ...) have no btree counterpart and are
 * left alone.
 */
DO $sync$
DECLARE
	fam record;
	cls record;
	missing text;
BEGIN
	FOR fam IN
		SELECT f.oid, f.opfname, l.oid AS ours
		FROM pg_catalog.pg_opfamily f
		JOIN pg_catalog.pg_am am ON am.oid = f.opfmethod
		LEFT JOIN (pg_catalog.pg_opfamily l
				   JOIN pg_catalog.pg_am lam ON lam.oid = l.opfmethod
				   AND lam.amname = 'btlayout')
			ON l.opfname = f.opfname
		WHERE am.amname = 'btree' AND f.oid < 16384
		ORDER BY f.opfname
	LOOP
		IF fam.ours IS NULL THEN
			EXECUTE format('CREATE OPERATOR FAMILY %I USING btlayout', fam.opfname);
		END IF;

		SELECT string_agg(item, ', ' ORDER BY kind, num, lt, rt) INTO missing
		FROM (
			SELECT 1 AS kind, o.amopstrategy AS num,
				   o.amoplefttype AS lt, o.amoprighttype AS rt,
				   format('OPERATOR %s %s.%s (%s, %s)', o.amopstrategy,
						  quote_ident(n.nspname), op.oprname,
						  o.amoplefttype::regtype, o.amoprighttype::regtype) AS item
			FROM pg_catalog.pg_amop o
			JOIN pg_catalog.pg_operator op ON op.oid = o.amopopr
			JOIN pg_catalog.pg_namespace n ON n.oid = op.oprnamespace
			WHERE o.amopfamily = fam.oid
			  AND NOT EXISTS (SELECT FROM pg_catalog.pg_amop x
							  WHERE x.amopfamily = fam.ours
								AND x.amopstrategy = o.amopstrategy
								AND x.amoplefttype = o.amoplefttype
								AND x.amoprighttype = o.amoprighttype)
			UNION ALL
			SELECT 2, p.amprocnum, p.amproclefttype, p.amprocrighttype,
				   format('FUNCTION %s (%s, %s) %s', p.amprocnum,
						  p.amproclefttype::regtype, p.amprocrighttype::regtype,
						  p.amproc::regprocedure)
			FROM pg_catalog.pg_amproc p
			WHERE p.amprocfamily = fam.oid
			  AND NOT EXISTS (SELECT FROM pg_catalog.pg_amproc x
							  WHERE x.amprocfamily = fam.ours
								AND x.amprocnum = p.amprocnum
								AND x.amproclefttype = p.amproclefttype
								AND x.amprocrighttype = p.amprocrighttype)
		) m;

		IF missing IS NOT NULL THEN
			EXECUTE format('ALTER OPERATOR FAMILY %I USING btlayout ADD %s',
						   fam.opfname, missing);
		END IF;

		FOR cls IN
			SELECT c.opcname, c.opcintype::regtype AS intype, c.opcdefault,
				   (CASE WHEN c.opckeytype = 0 THEN c.opcintype ELSE c.opckeytype END)::regtype AS keytype
			FROM pg_catalog.pg_opclass c
			WHERE c.opcfamily = fam.oid AND c.oid < 16384
			  AND NOT EXISTS (SELECT FROM pg_catalog.pg_opclass x
							  JOIN pg_catalog.pg_am xam ON xam.oid = x.opcmethod
							  WHERE xam.amname = 'btlayout'
								AND x.opcname = c.opcname)
			ORDER BY c.opcname
		LOOP
			EXECUTE format('CREATE OPERATOR CLASS %I %s FOR TYPE %s USING btlayout FAMILY %I AS STORAGE %s',
						   cls.opcname,
						   CASE WHEN cls.opcdefault THEN 'DEFAULT' ELSE '' END,
						   cls.intype, fam.opfname, cls.keytype);
		END LOOP;
	END LOOP;
END
$sync$;
