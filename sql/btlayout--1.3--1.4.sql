/* btlayout--1.3--1.4.sql: the copy's pages searched by their integer keys */

\echo Use "ALTER EXTENSION btlayout UPDATE TO '1.4'" to load this file. \quit

/*
 * The copy of an index of one integer key column keeps each internal page's
 * keys in an array, searched instead of the page's items
 * (btlayout.upper_copy_keys); the new column counts those searches.  A
 * function's result columns cannot change in place.
 */
DROP FUNCTION btlayout_search_stats();
CREATE FUNCTION btlayout_search_stats(
	OUT layout_searches bigint, OUT layout_confirmed bigint,
	OUT layout_fallbacks bigint, OUT ordinary_searches bigint,
	OUT layout_with_inserts bigint, OUT lookup_relayouts bigint,
	OUT recent_buffer_hits bigint, OUT upper_copy_hits bigint,
	OUT upper_copy_misses bigint, OUT upper_key_searches bigint)
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_search_stats() IS
  'in-page searches of this backend: by walking the layout (confirmed, or searched again) and through line pointers; descent steps that pinned a page in the buffer it was in last time; lookups that went from the copy of the upper levels to their leaf, and those that did not; pages of the copy searched by their integer keys';
