/* btlayout--1.2--1.3.sql: lookups from a copy of the upper levels */

\echo Use "ALTER EXTENSION btlayout UPDATE TO '1.3'" to load this file. \quit

/*
 * A lookup can go from this backend's copy of an index's upper levels
 * straight to a leaf, which must prove that it holds the key's position
 * (btlayout.upper_copy); the new columns count the lookups whose leaf did
 * and those that took the ordinary descent after trying.  A function's
 * result columns cannot change in place.
 */
DROP FUNCTION btlayout_search_stats();
CREATE FUNCTION btlayout_search_stats(
	OUT layout_searches bigint, OUT layout_confirmed bigint,
	OUT layout_fallbacks bigint, OUT ordinary_searches bigint,
	OUT layout_with_inserts bigint, OUT lookup_relayouts bigint,
	OUT recent_buffer_hits bigint, OUT upper_copy_hits bigint,
	OUT upper_copy_misses bigint)
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_search_stats() IS
  'in-page searches of this backend: by walking the layout (confirmed, or searched again) and through line pointers; descent steps that pinned a page in the buffer it was in last time; lookups that went from the copy of the upper levels to their leaf, and those that did not';

CREATE FUNCTION btlayout_upper_copy_pages(index regclass)
RETURNS integer
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_upper_copy_pages(regclass) IS
  'internal pages of the index this backend holds a copy of (btlayout.upper_copy)';
