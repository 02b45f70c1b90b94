-- probe-batch: one statement looks up @BATCH@ random keys of probe_t through
-- a nested loop (unnest(keys) outer, an index scan of probe_t inner: one
-- descent per key).  count(p.v) needs the heap tuple, so each probe is an
-- index scan plus a heap fetch.  bench.sh replaces @SETS@ by @BATCH@ lines
-- "\set kN random(1, @ROWS@)" and @KEYS@ by ":k1, :k2, ...", and runs it
-- with PGOPTIONS that turn hash and merge joins off.
@SETS@
SELECT count(p.v) FROM unnest(ARRAY[@KEYS@]::int4[]) AS q(k) JOIN probe_t p ON p.k = q.k;
