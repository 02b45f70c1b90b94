-- probe-skip: the rows of skip_t with b = a random value of 1..@BVALUES@, a
-- unconstrained: an index-only scan of the index on (a, b), which 18's skip
-- scan makes as a descent per value of a (a row each).  Run with PGOPTIONS
-- that turn bitmap scans off.
\set b random(1, @BVALUES@)
SELECT count(*) FROM skip_t WHERE b = :b;
