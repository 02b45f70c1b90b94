-- PGO training mix (--pgo only): deliberately not a measured workload.  A
-- smaller table with other keys (multiples of 3, in random heap order: a
-- third of the probes miss), a mix of point probes, range scans of varying
-- length, backward scans, a small nested-loop batch, and inserts.
-- bench/lib/pgo.sh replaces @TABLE@ and @ROWS@ (the key range).
\set k random(1, @ROWS@)
\set w random(0, 400)
\set hi :k + :w
\set k7 :k + 7
\set k3 (:k * 3) % @ROWS@
\set r random(1, 10)
\set nk :k + :r
SELECT v FROM @TABLE@ WHERE k = :k;
SELECT count(*) FROM @TABLE@ WHERE k BETWEEN :k AND :hi;
SELECT k FROM @TABLE@ WHERE k < :k ORDER BY k DESC LIMIT 5;
SELECT count(p.v) FROM unnest(ARRAY[:k, :k7, :k3, :hi]::int4[]) AS q(k) JOIN @TABLE@ p ON p.k = q.k;
INSERT INTO @TABLE@ (k, v) SELECT :nk, :w WHERE :r = 1;
