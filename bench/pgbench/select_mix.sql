-- select-mix: pgbench -S's statement, on one variant's copy of aid in mix_t
-- (one such script per variant, all in one run).
\set aid random(1, @ROWS@)
SELECT abalance FROM mix_t WHERE @COL@ = :aid;
