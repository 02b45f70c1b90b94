-- probe-inlist: one statement looks up @N@ random distinct keys of inlist_t
-- in one index scan, k = ANY(an int4[]): the array of a random row of
-- inlist_keys_@N@ (@ARRAYS@ rows), taken inside the statement (an InitPlan,
-- a primary-key probe), so that no array is built while measuring.  @COL@ is
-- k (count(k): an index-only scan) or v (count(v): an index scan, a heap
-- fetch a key).  Run with PGOPTIONS that turn bitmap scans off.
\set r random(1, @ARRAYS@)
SELECT count(@COL@) FROM inlist_t WHERE k = ANY((SELECT ks FROM inlist_keys_@N@ WHERE id = :r)::int4[]);
