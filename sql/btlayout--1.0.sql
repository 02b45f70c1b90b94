/* btlayout--1.0.sql: the btlayout access method and its operator classes */

\echo Use "CREATE EXTENSION btlayout" to load this file. \quit

CREATE FUNCTION btlayout_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE ACCESS METHOD btlayout TYPE INDEX HANDLER btlayout_handler;
COMMENT ON ACCESS METHOD btlayout IS
  'nbtree-compatible B-tree with cache-conscious in-page layouts';

/*
 * Operator families and classes.
 *
 * btlayout orders, compares and deduplicates exactly as btree does, so it
 * gets one operator family for each of the server's built-in btree families,
 * with the same name, the same operators (cross-type ones included) and the
 * same support functions (comparison, sort support, in_range, equalimage),
 * and one operator class for each built-in btree class, with the same name,
 * input type, storage type (name_ops stores cstring) and default flag.  They are read from the catalog rather than
 * listed here, so that the mirror is complete for the server it is created
 * in; "built-in" means created by initdb (OID below FirstNormalObjectId),
 * which leaves out whatever other extensions added to btree.
 *
 * All members are loose members of their family (the classes only name a
 * family and a type), which is what the server records for cross-type and
 * optional members anyway.  validate.c checks the result; sql/opclasses.sql
 * checks that every type with a default btree class has a btlayout one.
 */
DO $mirror$
DECLARE
	fam record;
	cls record;
	members text;
BEGIN
	FOR fam IN
		SELECT f.oid, f.opfname
		FROM pg_catalog.pg_opfamily f
		JOIN pg_catalog.pg_am am ON am.oid = f.opfmethod
		WHERE am.amname = 'btree' AND f.oid < 16384
		ORDER BY f.opfname
	LOOP
		SELECT string_agg(item, ', ' ORDER BY kind, num, lt, rt) INTO members
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
			UNION ALL
			SELECT 2, p.amprocnum, p.amproclefttype, p.amprocrighttype,
				   format('FUNCTION %s (%s, %s) %s', p.amprocnum,
						  p.amproclefttype::regtype, p.amprocrighttype::regtype,
						  p.amproc::regprocedure)
			FROM pg_catalog.pg_amproc p
			WHERE p.amprocfamily = fam.oid
		) m;

		EXECUTE format('CREATE OPERATOR FAMILY %I USING btlayout', fam.opfname);
		EXECUTE format('ALTER OPERATOR FAMILY %I USING btlayout ADD %s',
					   fam.opfname, members);

		FOR cls IN
			SELECT c.opcname, c.opcintype::regtype AS intype, c.opcdefault,
				   (CASE WHEN c.opckeytype = 0 THEN c.opcintype ELSE c.opckeytype END)::regtype AS keytype
			FROM pg_catalog.pg_opclass c
			WHERE c.opcfamily = fam.oid AND c.oid < 16384
			ORDER BY c.opcname
		LOOP
			EXECUTE format('CREATE OPERATOR CLASS %I %s FOR TYPE %s USING btlayout FAMILY %I AS STORAGE %s',
						   cls.opcname,
						   CASE WHEN cls.opcdefault THEN 'DEFAULT' ELSE '' END,
						   cls.intype, fam.opfname, cls.keytype);
		END LOOP;
	END LOOP;
END
$mirror$;

/*
 * BIN-collation operator classes (binops.c): byte order, compared by the
 * compare core, with the standard operators of each type.  text_bin_ops
 * (text and varchar) and bpchar_bin_ops (trailing spaces ignored) require
 * the "C" collation, under which those operators order bytes too; CREATE
 * INDEX refuses any other.  equalimage is what the server's classes of
 * these types use, so deduplication behaves as it does in btree.
 */
CREATE FUNCTION btlayout_text_bin_cmp(text, text)
RETURNS int4
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION btlayout_text_bin_sortsupport(internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION btlayout_bpchar_bin_cmp(bpchar, bpchar)
RETURNS int4
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION btlayout_bpchar_bin_sortsupport(internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION btlayout_bytea_bin_cmp(bytea, bytea)
RETURNS int4
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION btlayout_bytea_bin_sortsupport(internal)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR FAMILY text_bin_ops USING btlayout;
CREATE OPERATOR CLASS text_bin_ops
FOR TYPE text USING btlayout FAMILY text_bin_ops AS
	OPERATOR 1 pg_catalog.< (text, text),
	OPERATOR 2 pg_catalog.<= (text, text),
	OPERATOR 3 pg_catalog.= (text, text),
	OPERATOR 4 pg_catalog.>= (text, text),
	OPERATOR 5 pg_catalog.> (text, text),
	FUNCTION 1 btlayout_text_bin_cmp(text, text),
	FUNCTION 2 btlayout_text_bin_sortsupport(internal),
	FUNCTION 4 pg_catalog.btvarstrequalimage(oid);

CREATE OPERATOR FAMILY bpchar_bin_ops USING btlayout;
CREATE OPERATOR CLASS bpchar_bin_ops
FOR TYPE bpchar USING btlayout FAMILY bpchar_bin_ops AS
	OPERATOR 1 pg_catalog.< (bpchar, bpchar),
	OPERATOR 2 pg_catalog.<= (bpchar, bpchar),
	OPERATOR 3 pg_catalog.= (bpchar, bpchar),
	OPERATOR 4 pg_catalog.>= (bpchar, bpchar),
	OPERATOR 5 pg_catalog.> (bpchar, bpchar),
	FUNCTION 1 btlayout_bpchar_bin_cmp(bpchar, bpchar),
	FUNCTION 2 btlayout_bpchar_bin_sortsupport(internal),
	FUNCTION 4 pg_catalog.btvarstrequalimage(oid);

CREATE OPERATOR FAMILY bytea_bin_ops USING btlayout;
CREATE OPERATOR CLASS bytea_bin_ops
FOR TYPE bytea USING btlayout FAMILY bytea_bin_ops AS
	OPERATOR 1 pg_catalog.< (bytea, bytea),
	OPERATOR 2 pg_catalog.<= (bytea, bytea),
	OPERATOR 3 pg_catalog.= (bytea, bytea),
	OPERATOR 4 pg_catalog.>= (bytea, bytea),
	OPERATOR 5 pg_catalog.> (bytea, bytea),
	FUNCTION 1 btlayout_bytea_bin_cmp(bytea, bytea),
	FUNCTION 2 btlayout_bytea_bin_sortsupport(internal),
	FUNCTION 4 pg_catalog.btequalimage(oid);

/*
 * Layouts: rewrite the pages of an index that are not in its layout.
 */
CREATE FUNCTION btlayout_relayout(index regclass)
RETURNS bigint
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_relayout(regclass) IS
  'rewrite the pages of a btlayout index that are not in its layout; returns pages rewritten';

/*
 * Introspection.
 */
CREATE FUNCTION btlayout_stats(index regclass,
	OUT pages bigint, OUT meta_pages bigint, OUT root_pages bigint,
	OUT internal_pages bigint, OUT leaf_pages bigint,
	OUT deleted_pages bigint, OUT half_dead_pages bigint, OUT new_pages bigint,
	OUT leaf_items bigint, OUT free_bytes bigint,
	OUT layout text, OUT laid_out_pages bigint, OUT laid_out_percent float8,
	OUT uniform_width_pages bigint, OUT inserted_since_pages bigint,
	OUT out_of_layout_pages bigint)
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_stats(regclass) IS
  'pages of a btlayout index by kind, items, free space, and how many pages are in its layout';
-- as pgstattuple's pgstatindex(): not for everyone, but for monitoring roles
REVOKE ALL ON FUNCTION btlayout_stats(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION btlayout_stats(regclass) TO pg_stat_scan_tables;

CREATE FUNCTION btlayout_page(index regclass, blkno bigint,
	OUT kind text, OUT level int, OUT nitems int, OUT layout text,
	OUT uniform_width int, OUT itemoffset int, OUT role text, OUT slot int,
	OUT lp_off int, OUT lp_len int)
RETURNS SETOF record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_page(regclass, bigint) IS
  'one page of a btlayout index: its kind, level, detected layout, and where each item sits';
REVOKE ALL ON FUNCTION btlayout_page(regclass, bigint) FROM PUBLIC;

CREATE FUNCTION btlayout_search_stats(
	OUT layout_searches bigint, OUT layout_confirmed bigint,
	OUT layout_fallbacks bigint, OUT ordinary_searches bigint,
	OUT layout_with_inserts bigint, OUT lookup_relayouts bigint)
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_search_stats() IS
  'in-page searches of this backend: by walking the layout (confirmed, or searched again) and through line pointers';

/*
 * Verification.
 */
CREATE FUNCTION btlayout_check(index regclass, heapallindexed bool DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_check(regclass, bool) IS
  'verify the structure of a btlayout index and, with heapallindexed, that it indexes every visible heap tuple; takes ShareLock (blocks writes); during recovery, checks each page on its own';
REVOKE ALL ON FUNCTION btlayout_check(regclass, bool) FROM PUBLIC;
