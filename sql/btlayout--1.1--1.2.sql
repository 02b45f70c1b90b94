/* btlayout--1.1--1.2.sql: btlayout_search_stats() counts recent-buffer pins */

\echo Use "ALTER EXTENSION btlayout UPDATE TO '1.2'" to load this file. \quit

/*
 * The descent pins a page in the buffer it was in last time when that
 * buffer still holds it (btlayout.recent_buffers); the new column counts
 * those steps.  A function's result columns cannot change in place.
 */
DROP FUNCTION btlayout_search_stats();
CREATE FUNCTION btlayout_search_stats(
	OUT layout_searches bigint, OUT layout_confirmed bigint,
	OUT layout_fallbacks bigint, OUT ordinary_searches bigint,
	OUT layout_with_inserts bigint, OUT lookup_relayouts bigint,
	OUT recent_buffer_hits bigint)
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_search_stats() IS
  'in-page searches of this backend: by walking the layout (confirmed, or searched again) and through line pointers; descent steps that pinned a page in the buffer it was in last time';
