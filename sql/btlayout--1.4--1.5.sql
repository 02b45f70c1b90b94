/* btlayout--1.4--1.5.sql: what this backend keeps of the indexes it looks up */

\echo Use "ALTER EXTENSION btlayout UPDATE TO '1.5'" to load this file. \quit

/*
 * One row of this backend's per-backend state (docs/design.md, "Per-backend
 * state"): what it holds now, and what became of it since it started:
 * index entries made, invalidated, freed and trimmed; the copies of upper
 * levels (bytes and images held, images made, evicted at the cap, replaced,
 * copies dropped, times the cap found no cold image); the recent-buffer
 * maps (chunks held, made, given up at the cap, blocks read without room
 * to remember them); the lookup-relayout notes (held, forgotten).
 */
CREATE FUNCTION btlayout_backend_state(
	OUT index_entries bigint, OUT entries_made bigint,
	OUT entries_invalidated bigint, OUT entries_freed bigint,
	OUT entries_trimmed bigint,
	OUT upper_copy_bytes bigint, OUT upper_copy_images bigint,
	OUT images_made bigint, OUT images_evicted bigint,
	OUT images_replaced bigint, OUT copies_dropped bigint,
	OUT copies_full bigint,
	OUT recent_buffer_chunks bigint, OUT chunks_made bigint,
	OUT chunks_given_up bigint, OUT blocks_not_remembered bigint,
	OUT relayout_notes bigint, OUT notes_forgotten bigint)
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
COMMENT ON FUNCTION btlayout_backend_state() IS
  'what this backend keeps of the btlayout indexes it looks up, now and since it started: index entries, copies of upper levels, recent-buffer maps, lookup-relayout notes';
