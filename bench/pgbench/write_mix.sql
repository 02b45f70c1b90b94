-- write-mix: write's transaction on one variant's table wmix_@VID@ (one such
-- script per variant, all in one run): an insert of a random key and an
-- update of the key of a random row (an index lookup, then a non-HOT update
-- that inserts a new index entry at another random place).
\set nk random(1, @WROWS@)
\set k random(1, @WROWS@)
\set k2 random(1, @WROWS@)
BEGIN;
INSERT INTO wmix_@VID@ (k, v) VALUES (:nk, :k);
UPDATE wmix_@VID@ SET k = :k2 WHERE k = :k;
END;
