-- write: a write mix through the index of write_t (a fresh table for each
-- variant and round, keys 1..@WROWS@, duplicates allowed): one insert of a
-- random key (it lands in a random leaf: page splits, not an append) and one
-- update of the key of a random row (an index lookup, then a non-HOT update
-- that inserts a new index entry at another random place).
\set nk random(1, @WROWS@)
\set k random(1, @WROWS@)
\set k2 random(1, @WROWS@)
BEGIN;
INSERT INTO write_t (k, v) VALUES (:nk, :k);
UPDATE write_t SET k = :k2 WHERE k = :k;
END;
