/* btlayout_cmpbench--1.0.sql */
\echo Use "CREATE EXTENSION btlayout_cmpbench" to load this file. \quit

-- Nanoseconds per comparison of two strings of len bytes that differ only
-- in their last byte, by impl: 'core' (the server's bttextcmp under "C",
-- called as core btree calls it), 'memcmp' (glibc memcmp, then lengths), or
-- a level of the compare core ('portable', 'sse4.2', 'avx2'; NULL if this
-- machine lacks it)
CREATE FUNCTION btl_cmpbench(impl text, len int, iterations int)
RETURNS float8
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
REVOKE ALL ON FUNCTION btl_cmpbench(text, int, int) FROM PUBLIC;
