--
-- ALTER EXTENSION btlayout UPDATE: 1.1 to 1.2 gives
-- btlayout_search_stats() its recent-buffer column, 1.2 to 1.3 its
-- upper-level copy columns and btlayout_upper_copy_pages(), 1.3 to 1.4 its
-- column of the copy's key searches, 1.4 to 1.5 btlayout_backend_state(),
-- 1.6 to 1.7 btlayout_search_stats() its columns of hinted searches; the
-- last step of every update path (1.0 to 1.1 until 1.6, 1.5 to 1.6 in
-- 1.6, 1.6 to 1.7 now) brings the operator families
-- back in line with the server's btree families, which is what a cluster
-- needs after pg_upgrade to a server whose btree families grew (18's skip
-- support functions, 19's oid8; t/012_pg_upgrade.pl does that for real).
-- Here the old copy is made by hand, in a database of its own: members and
-- a whole family missing from a 1.5 installation, which 1.0 to 1.5 leave
-- missing.
--
\set regress_db :DBNAME
CREATE DATABASE btlayout_update;
\c btlayout_update

CREATE EXTENSION btlayout VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'btlayout';

-- Members of built-in btree families that the btlayout family of the same
-- name lacks, and btlayout classes of built-in btree classes that are missing
CREATE VIEW mirror_gaps AS
SELECT f.opfname, 'op ' || o.amopstrategy || ' ' || o.amopopr::regoperator::text AS member
FROM pg_opfamily f JOIN pg_amop o ON o.amopfamily = f.oid
WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'btree') AND f.oid < 16384
  AND NOT EXISTS (SELECT FROM pg_opfamily l JOIN pg_amop x ON x.amopfamily = l.oid
                  WHERE l.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'btlayout')
                    AND l.opfname = f.opfname AND x.amopopr = o.amopopr
                    AND x.amopstrategy = o.amopstrategy)
UNION ALL
SELECT f.opfname, 'fn ' || p.amprocnum || ' (' || p.amproclefttype::regtype || ',' ||
       p.amprocrighttype::regtype || ') ' || p.amproc::regprocedure::text
FROM pg_opfamily f JOIN pg_amproc p ON p.amprocfamily = f.oid
WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'btree') AND f.oid < 16384
  AND NOT EXISTS (SELECT FROM pg_opfamily l JOIN pg_amproc x ON x.amprocfamily = l.oid
                  WHERE l.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'btlayout')
                    AND l.opfname = f.opfname AND x.amproc = p.amproc
                    AND x.amprocnum = p.amprocnum
                    AND x.amproclefttype = p.amproclefttype
                    AND x.amprocrighttype = p.amprocrighttype)
UNION ALL
SELECT c.opcname, 'class'
FROM pg_opclass c
WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btree') AND c.oid < 16384
  AND NOT EXISTS (SELECT FROM pg_opclass l
                  WHERE l.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btlayout')
                    AND l.opcname = c.opcname);

-- A fresh 1.0 mirrors this server completely (must be empty)
SELECT * FROM mirror_gaps ORDER BY 1, 2;

-- The library serves the older function definitions: six counters at 1.0
SELECT layout_searches >= 0 AS counts, lookup_relayouts >= 0 AS relayouts
FROM btlayout_search_stats();

ALTER EXTENSION btlayout UPDATE TO '1.5';

-- What an older server's copy would lack: a support function, a
-- cross-type operator, and a whole family with its class
ALTER OPERATOR FAMILY integer_ops USING btlayout DROP FUNCTION 2 (int4, int4);
ALTER OPERATOR FAMILY integer_ops USING btlayout DROP OPERATOR 1 (int4, int8);
ALTER EXTENSION btlayout DROP OPERATOR CLASS macaddr_ops USING btlayout;
ALTER EXTENSION btlayout DROP OPERATOR FAMILY macaddr_ops USING btlayout;
DROP OPERATOR FAMILY macaddr_ops USING btlayout;
SELECT * FROM mirror_gaps ORDER BY 1, 2;

-- An index made before the update keeps working across it
CREATE TABLE t (k int4, m macaddr);
INSERT INTO t SELECT g, ('00:00:00:00:' || lpad(to_hex(g / 256), 2, '0') || ':' ||
                         lpad(to_hex(g % 256), 2, '0'))::macaddr
FROM generate_series(1, 2000) g;
CREATE INDEX t_k ON t USING btlayout (k);

-- 1.5 has the gaps, and so has 1.6 (its step moved to 1.7): the update
-- to 1.7 fills them
ALTER EXTENSION btlayout UPDATE TO '1.6';
SELECT count(*) AS gaps FROM mirror_gaps;
SELECT count(*) AS gaps FROM mirror_gaps;

ALTER EXTENSION btlayout UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'btlayout';
SELECT * FROM mirror_gaps ORDER BY 1, 2;
-- 1.2: seven, the descents' recent-buffer pins; 1.3: nine, the lookups
-- from the copy of the upper levels, and the copy's page count; 1.4: ten,
-- the copy's key searches; 1.7: twelve, the hinted searches last
SELECT recent_buffer_hits >= 0 AS recent_counted,
       upper_copy_hits >= 0 AND upper_copy_misses >= 0 AS copy_counted,
       upper_key_searches >= 0 AS keys_counted,
       hinted_searches >= 0 AND hint_failures >= 0 AS hints_counted
FROM btlayout_search_stats();
SELECT btlayout_upper_copy_pages('t_k') >= 0 AS copy_pages;
-- 1.5: what the backend keeps of the indexes it looks up
SELECT index_entries >= 0 AS entries, images_evicted >= 0 AS images,
       chunks_given_up >= 0 AS chunks, notes_forgotten >= 0 AS notes
FROM btlayout_backend_state();

-- The recreated family and class belong to the extension again
SELECT pg_describe_object(d.classid, d.objid, 0) AS member
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'btlayout')
  AND d.deptype = 'e'
  AND pg_describe_object(d.classid, d.objid, 0) LIKE '%macaddr_ops%'
ORDER BY 1;

-- and serve indexes: a cross-type probe (int4 < int8) and a macaddr index
CREATE INDEX t_m ON t USING btlayout (m);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM t WHERE k < 5::int8;
SELECT k FROM t WHERE k < 5::int8 ORDER BY k;
SELECT k FROM t WHERE m = '00:00:00:00:01:4d';
SELECT btlayout_check('t_k', true), btlayout_check('t_m', true);
RESET enable_seqscan;
RESET enable_bitmapscan;

-- Nothing left to do
ALTER EXTENSION btlayout UPDATE;

\c :regress_db
DROP DATABASE btlayout_update;
