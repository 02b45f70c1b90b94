--
-- Operator classes: one btlayout default class for every type that has a
-- default btree class, in families mirroring btree's, all valid.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btlayout;
RESET client_min_messages;

-- Types with a default btree operator class but no default btlayout one
-- (must be empty)
SELECT bt.opcintype::regtype AS type_without_btlayout_class
FROM pg_opclass bt
WHERE bt.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')
  AND bt.opcdefault
  AND NOT EXISTS (SELECT 1 FROM pg_opclass bl
                  WHERE bl.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btlayout')
                    AND bl.opcdefault AND bl.opcintype = bt.opcintype)
ORDER BY 1;

-- How many there are, so a drop in either count shows (btlayout: the 44
-- mirrored, and text_bin_ops, bpchar_bin_ops and bytea_bin_ops, sql/bin.sql),
-- counting apart the classes of types newer servers added (19: oid8_ops),
-- each of which must be mirrored too
SELECT count(*) FILTER (WHERE am = 'btree' AND NOT newer) AS btree_classes,
       count(*) FILTER (WHERE am = 'btlayout' AND NOT newer) AS btlayout_classes,
       count(*) FILTER (WHERE am = 'btlayout' AND opcdefault AND NOT newer) AS btlayout_defaults,
       count(*) FILTER (WHERE am = 'btree' AND newer) =
       count(*) FILTER (WHERE am = 'btlayout' AND newer) AS newer_mirrored
FROM (SELECT a.amname AS am, c.opcdefault, c.opcname IN ('oid8_ops') AS newer
      FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod) s;

-- Each btlayout family but the BIN ones has exactly the operators and
-- support functions of the btree family of the same name (differences must
-- be empty)
WITH fam AS (
  SELECT f.oid, f.opfname, a.amname
  FROM pg_opfamily f JOIN pg_am a ON a.oid = f.opfmethod
  WHERE (a.amname = 'btree' AND f.oid < 16384)
     OR (a.amname = 'btlayout' AND f.opfname NOT LIKE '%\_bin\_ops')
), members AS (
  SELECT fam.amname, fam.opfname, 'op ' || o.amopstrategy || ' ' || o.amopopr::regoperator::text AS m
  FROM fam JOIN pg_amop o ON o.amopfamily = fam.oid
  UNION ALL
  SELECT fam.amname, fam.opfname, 'fn ' || p.amprocnum || ' (' || p.amproclefttype::regtype || ',' ||
         p.amprocrighttype::regtype || ') ' || p.amproc::regprocedure::text
  FROM fam JOIN pg_amproc p ON p.amprocfamily = fam.oid
)
(SELECT 'only in btree' AS side, opfname, m FROM members WHERE amname = 'btree'
 EXCEPT SELECT 'only in btree', opfname, m FROM members WHERE amname = 'btlayout')
UNION ALL
(SELECT 'only in btlayout', opfname, m FROM members WHERE amname = 'btlayout'
 EXCEPT SELECT 'only in btlayout', opfname, m FROM members WHERE amname = 'btree')
ORDER BY 1, 2, 3;

-- Each btlayout class has the input type, storage type and default flag of
-- the btree class of the same name (differences must be empty)
SELECT bt.opcname, bt.opcintype::regtype, bt.opckeytype::regtype, bt.opcdefault,
       bl.opcintype::regtype, bl.opckeytype::regtype, bl.opcdefault
FROM pg_opclass bt
LEFT JOIN pg_opclass bl
  ON bl.opcname = bt.opcname
 AND bl.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btlayout')
WHERE bt.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')
  AND bt.oid < 16384
  AND (bl.oid IS NULL OR (bt.opcintype, bt.opckeytype, bt.opcdefault)
                         IS DISTINCT FROM (bl.opcintype, bl.opckeytype, bl.opcdefault));

-- Cross-type operators are there: an int4 index serves int8 and int2 quals
CREATE TABLE cross_t (k int4);
INSERT INTO cross_t SELECT generate_series(1, 1000);
CREATE INDEX cross_t_k ON cross_t USING btlayout (k);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM cross_t WHERE k = 7::int8;
SELECT k FROM cross_t WHERE k = 7::int8;
SELECT count(*) FROM cross_t WHERE k < 10::int2 AND k >= 3::int8;
RESET enable_seqscan;
DROP TABLE cross_t;

-- Every class passes the validator
SELECT opcname FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'btlayout')
  AND NOT amvalidate(oid);

-- The validator finds what is wrong with a broken class
CREATE FUNCTION broken_cmp(int4, int4) RETURNS int4
  AS 'SELECT CASE WHEN $1 < $2 THEN -1 WHEN $1 > $2 THEN 1 ELSE 0 END'
  LANGUAGE sql IMMUTABLE STRICT;
CREATE OPERATOR FAMILY broken_fam USING btlayout;
CREATE OPERATOR CLASS broken_ops FOR TYPE int4 USING btlayout FAMILY broken_fam AS
  OPERATOR 1 <, OPERATOR 3 =, FUNCTION 1 broken_cmp(int4, int4);
-- an in_range function of other types (five arguments, as the server of
-- 18 checks for any ordering access method; the types are ours to check)
ALTER OPERATOR FAMILY broken_fam USING btlayout ADD
  OPERATOR 1 < (int4, int8),
  FUNCTION 3 (int4, int4) in_range(int8, int8, int8, bool, bool);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'broken_ops';
DROP OPERATOR FAMILY broken_fam USING btlayout;
DROP FUNCTION broken_cmp(int4, int4);
