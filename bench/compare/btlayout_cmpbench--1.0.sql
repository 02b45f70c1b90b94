/* btlayout_cmpbench--1.0.sql */
\echo Use "CREATE EXTENSION btlayout_cmpbench" to load this file. \quit

-- Nanoseconds per comparison of two text values of len bytes, by impl:
-- 'core' (the server's bttextcmp under "C", called as core btree calls it),
-- 'varstr_cmp' (under "C"), 'memcmp' (glibc memcmp, then the lengths), or a
-- level of the compare core ('portable', 'sse4.2', 'avx2'; NULL if this
-- machine lacks it).  contents: 'lastbyte' (equal but for the last byte)
-- or 'random' (random bytes).
CREATE FUNCTION btl_cmpbench(impl text, len int, iterations int,
                             contents text DEFAULT 'lastbyte')
RETURNS float8
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
REVOKE ALL ON FUNCTION btl_cmpbench(text, int, int, text) FROM PUBLIC;
