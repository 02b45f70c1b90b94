-- range-mix: range's index-only scan of @WIDTH@+1 consecutive keys, on one
-- variant's copy of aid in mix_t (one such script per variant, all in one
-- run).
\set k random(1, @ROWS@ - @WIDTH@)
SELECT count(*) FROM mix_t WHERE @COL@ BETWEEN :k AND :k + @WIDTH@;
