-- range: a short range scan of @WIDTH@+1 consecutive keys, index-only
-- (probe_t is vacuumed, so its visibility map is all-visible).  Shows that a
-- layout costs nothing where a scan walks a leaf page in key order.
\set k random(1, @ROWS@ - @WIDTH@)
SELECT count(*) FROM probe_t WHERE k BETWEEN :k AND :k + @WIDTH@;
