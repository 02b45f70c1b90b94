/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Introspection: btlayout_stats() for a whole index, btlayout_page() for
 *	  one page; btlayout_search_stats() and btlayout_backend_state() for
 *	  what this backend's searches did and what it keeps.
 *
 * The first two read pages under a share lock, one at a time, and work on a
 * copy of the page once the lock is released, so they never block writers
 * for longer than a page copy.  Whether a page is in a layout, in it with
 * inserts since, or out of it is decided by page.c, as for a relayout pass.
 * The other two read this backend's plain counters, which the search path
 * and the per-backend state increment where things happen (btlayout.h).
 *
 * src/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

/* Kinds of pages, as btlayout_stats() counts and btlayout_page() names them */
typedef enum BtlPageKind
{
	BTL_PAGE_NEW,				/* all zeroes: extended, never initialized */
	BTL_PAGE_META,
	BTL_PAGE_ROOT,
	BTL_PAGE_INTERNAL,
	BTL_PAGE_LEAF,
	BTL_PAGE_DELETED,
	BTL_PAGE_HALF_DEAD
} BtlPageKind;

static const char *const page_kind_names[] = {
	[BTL_PAGE_NEW] = "new",
	[BTL_PAGE_META] = "meta",
	[BTL_PAGE_ROOT] = "root",
	[BTL_PAGE_INTERNAL] = "internal",
	[BTL_PAGE_LEAF] = "leaf",
	[BTL_PAGE_DELETED] = "deleted",
	[BTL_PAGE_HALF_DEAD] = "half-dead",
};

/* Copy block blkno of the index into page, under a share lock */
void
btl_read_page_copy(Relation index, BlockNumber blkno,
				   BufferAccessStrategy strategy, Page page)
{
	Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno,
										 RBM_NORMAL, strategy);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(page, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
}

/*
 * What kind of page this is.  A page whose special space is not nbtree's
 * is reported as corrupt: btlayout_check() says more.
 */
static BtlPageKind
page_kind(Relation index, BlockNumber blkno, Page page)
{
	BTPageOpaque opaque;

	if (PageIsNew(page))
		return BTL_PAGE_NEW;
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(BTPageOpaqueData)))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(index), blkno)));
	opaque = BTPageGetOpaque(page);
	if (P_ISMETA(opaque))
		return BTL_PAGE_META;
	if (P_ISDELETED(opaque))
		return BTL_PAGE_DELETED;
	if (P_ISHALFDEAD(opaque))
		return BTL_PAGE_HALF_DEAD;
	if (P_ISROOT(opaque))
		return BTL_PAGE_ROOT;
	return P_ISLEAF(opaque) ? BTL_PAGE_LEAF : BTL_PAGE_INTERNAL;
}

PG_FUNCTION_INFO_V1(btlayout_stats);

/*
 * btlayout_stats(index regclass): one row describing the whole index.
 */
Datum
btlayout_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	BtlLayout	layout;
	BufferAccessStrategy strategy;
	PGAlignedBlock page;
	BlockNumber nblocks;
	BlockNumber blkno;
	int64		kinds[lengthof(page_kind_names)] = {0};
	int64		live = 0;
	int64		states[BTL_PAGE_UNPLANNABLE + 1] = {0};
	int64		uniform = 0;
	int64		leaf_items = 0;
	int64		free_bytes = 0;
	TupleDesc	tupdesc;
	Datum		values[16];
	bool		nulls[16] = {false};
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	index = btl_open_index(indexoid, AccessShareLock, false);
	layout = BtlGetLayout(index);
	strategy = GetAccessStrategy(BAS_BULKREAD);
	nblocks = RelationGetNumberOfBlocks(index);

	for (blkno = 0; blkno < nblocks; blkno++)
	{
		BtlPageKind kind;
		BtlPagePlan plan;
		int			inserted;

		CHECK_FOR_INTERRUPTS();
		btl_read_page_copy(index, blkno, strategy, page.data);
		kind = page_kind(index, blkno, page.data);
		kinds[kind]++;
		if (kind != BTL_PAGE_ROOT && kind != BTL_PAGE_INTERNAL &&
			kind != BTL_PAGE_LEAF)
			continue;

		live++;
		free_bytes += PageGetFreeSpace(page.data);
		if (P_ISLEAF(BTPageGetOpaque(page.data)))
			leaf_items += PageGetMaxOffsetNumber(page.data) -
				P_FIRSTDATAKEY(BTPageGetOpaque(page.data)) + 1;
		/* With no layout, every page is as it should be */
		if (layout == BTL_LAYOUT_NONE)
			states[BTL_PAGE_LAID_OUT]++;
		else
			states[btl_page_state(page.data, layout, &plan, &inserted)]++;
		if (btl_page_plan(page.data, BTL_LAYOUT_EYTZINGER, &plan) &&
			plan.width > 0)
			uniform++;
	}
	FreeAccessStrategy(strategy);
	relation_close(index, AccessShareLock);

	values[i++] = Int64GetDatum(nblocks);
	values[i++] = Int64GetDatum(kinds[BTL_PAGE_META]);
	values[i++] = Int64GetDatum(kinds[BTL_PAGE_ROOT]);
	values[i++] = Int64GetDatum(kinds[BTL_PAGE_INTERNAL]);
	values[i++] = Int64GetDatum(kinds[BTL_PAGE_LEAF]);
	values[i++] = Int64GetDatum(kinds[BTL_PAGE_DELETED]);
	values[i++] = Int64GetDatum(kinds[BTL_PAGE_HALF_DEAD]);
	values[i++] = Int64GetDatum(kinds[BTL_PAGE_NEW]);
	values[i++] = Int64GetDatum(leaf_items);
	values[i++] = Int64GetDatum(free_bytes);
	values[i++] = CStringGetTextDatum(btl_layout_name(layout));
	values[i++] = Int64GetDatum(states[BTL_PAGE_LAID_OUT]);
	if (live > 0)
		values[i++] = Float8GetDatum(100.0 * states[BTL_PAGE_LAID_OUT] / live);
	else
		nulls[i++] = true;
	values[i++] = Int64GetDatum(uniform);
	values[i++] = Int64GetDatum(states[BTL_PAGE_INSERTED]);
	/* A damaged page that cannot be planned is out of layout too */
	values[i++] = Int64GetDatum(states[BTL_PAGE_OUT_OF_LAYOUT] +
								states[BTL_PAGE_UNPLANNABLE]);
	Assert(i == lengthof(values));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * The layout a live page is in: the index's own if it matches, else the
 * first other layout that does, else none (nbtree's order, or a page that
 * inserts have changed since it was laid out).  Pages of one or two items
 * are in every layout at once; the index's own wins.
 */
static BtlLayout
detect_layout(Page page, BtlLayout configured, BtlPagePlan *plan)
{
	int			layout;

	if (configured != BTL_LAYOUT_NONE &&
		btl_page_plan(page, configured, plan) && btl_page_matches(page, plan))
		return configured;
	for (layout = BTL_LAYOUT_NONE + 1; layout < BTL_NUM_LAYOUTS; layout++)
		if (btl_page_plan(page, (BtlLayout) layout, plan) &&
			btl_page_matches(page, plan))
			return (BtlLayout) layout;
	return BTL_LAYOUT_NONE;
}

PG_FUNCTION_INFO_V1(btlayout_page);

/*
 * btlayout_page(index regclass, blkno bigint): one row per item of the
 * page (one row with NULL item columns for a page without items), with the
 * page's kind, level, item count, detected layout and common item width
 * repeated on each.
 */
Datum
btlayout_page(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	int64		blkno = PG_GETARG_INT64(1);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	PGAlignedBlock page;
	BtlPageKind kind;
	BtlLayout	layout = BTL_LAYOUT_NONE;
	BtlPagePlan plan;
	int			width = 0;
	int			level = 0;
	OffsetNumber maxoff = 0;
	OffsetNumber off;
	uint16		rank_slot[BTL_MAX_ITEMS];
	bool		live;

	InitMaterializedSRF(fcinfo, 0);

	index = btl_open_index(indexoid, AccessShareLock, false);
	if (blkno < 0 || blkno >= RelationGetNumberOfBlocks(index))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("block number " INT64_FORMAT " is out of range for index \"%s\"",
						blkno, RelationGetRelationName(index))));
	btl_read_page_copy(index, (BlockNumber) blkno, NULL, page.data);
	kind = page_kind(index, (BlockNumber) blkno, page.data);
	live = (kind == BTL_PAGE_ROOT || kind == BTL_PAGE_INTERNAL ||
			kind == BTL_PAGE_LEAF);
	if (live)
	{
		level = BTPageGetOpaque(page.data)->btpo_level;
		maxoff = PageGetMaxOffsetNumber(page.data);
		layout = detect_layout(page.data, BtlGetLayout(index), &plan);
		if (layout != BTL_LAYOUT_NONE)
		{
			uint16		slot_rank[BTL_MAX_ITEMS];
			int			s;

			btl_layout_ranks(layout, plan.nsearch, plan.node, slot_rank);
			for (s = 0; s < plan.nsearch; s++)
				rank_slot[slot_rank[s]] = s;
			width = plan.width;
		}
		else if (btl_page_plan(page.data, BTL_LAYOUT_EYTZINGER, &plan))
			width = plan.width;
	}
	relation_close(index, AccessShareLock);

	/* A page without items: one row saying what the page is */
	if (!live || maxoff == 0)
	{
		Datum		values[10] = {0};
		bool		nulls[10] = {false, !live, !live, !live, !live,
		true, true, true, true, true};

		values[0] = CStringGetTextDatum(page_kind_names[kind]);
		values[1] = Int32GetDatum(level);
		values[2] = Int32GetDatum(0);
		values[3] = CStringGetTextDatum(btl_layout_name(layout));
		values[4] = Int32GetDatum(width);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		return (Datum) 0;
	}

	for (off = FirstOffsetNumber; off <= maxoff; off++)
	{
		BTPageOpaque opaque = BTPageGetOpaque(page.data);
		ItemId		iid = PageGetItemId(page.data, off);
		Datum		values[10];
		bool		nulls[10] = {false};
		const char *role;

		if (!P_RIGHTMOST(opaque) && off == P_HIKEY)
			role = "high key";
		else if (!P_ISLEAF(opaque) && off == P_FIRSTDATAKEY(opaque))
			role = "minus infinity";
		else
			role = P_ISLEAF(opaque) ? "data" : "pivot";

		values[0] = CStringGetTextDatum(page_kind_names[kind]);
		values[1] = Int32GetDatum(level);
		values[2] = Int32GetDatum(maxoff);
		values[3] = CStringGetTextDatum(btl_layout_name(layout));
		values[4] = Int32GetDatum(width);
		values[5] = Int32GetDatum(off);
		values[6] = CStringGetTextDatum(role);
		if (layout != BTL_LAYOUT_NONE && off >= plan.firstsearch)
			values[7] = Int32GetDatum(rank_slot[off - plan.firstsearch]);
		else
			nulls[7] = true;
		values[8] = Int32GetDatum(ItemIdGetOffset(iid));
		values[9] = Int32GetDatum(ItemIdGetLength(iid));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(btlayout_search_stats);

/*
 * btlayout_search_stats(): how this backend's in-page searches went since
 * it started.  Per backend: the search path keeps its counters in plain
 * backend-local memory.
 */
Datum
btlayout_search_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[12];
	bool		nulls[12] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	values[0] = Int64GetDatum(btl_search_counters.layout_searches);
	values[1] = Int64GetDatum(btl_search_counters.layout_confirmed);
	values[2] = Int64GetDatum(btl_search_counters.layout_fallbacks);
	values[3] = Int64GetDatum(btl_search_counters.ordinary_searches);
	values[4] = Int64GetDatum(btl_search_counters.layout_with_inserts);
	values[5] = Int64GetDatum(btl_search_counters.lookup_relayouts);
	/* from 1.2 on; the tuple has as many columns as the function's result */
	values[6] = Int64GetDatum(btl_search_counters.recent_buffer_hits);
	/* from 1.3 on */
	values[7] = Int64GetDatum(btl_search_counters.upper_copy_hits);
	values[8] = Int64GetDatum(btl_search_counters.upper_copy_misses);
	/* from 1.4 on */
	values[9] = Int64GetDatum(btl_search_counters.upper_key_searches);
	/* from 1.7 on */
	values[10] = Int64GetDatum(btl_search_counters.hinted_searches);
	values[11] = Int64GetDatum(btl_search_counters.hint_failures);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(btlayout_backend_state);

/*
 * btlayout_backend_state(): one row of what this backend keeps of the
 * indexes it looks up (docs/design.md, "Per-backend state"), now, and what
 * became of it since the backend started: index entries (indexstate.c),
 * copies of upper levels (upper.c), recent-buffer maps (recent.c) and
 * lookup-relayout notes (relayout.c).  Nothing is freed or swept to answer:
 * stale entries not yet checked count as held.
 */
Datum
btlayout_backend_state(PG_FUNCTION_ARGS)
{
	const BtlStateCounters *c = &btl_state_counters;
	TupleDesc	tupdesc;
	Datum		values[18];
	bool		nulls[18] = {false};
	int64		bytes;
	int64		images;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	btl_upper_held(&bytes, &images);
	values[i++] = Int64GetDatum(btl_index_state_count());
	values[i++] = Int64GetDatum(c->entries_made);
	values[i++] = Int64GetDatum(c->entries_invalidated);
	values[i++] = Int64GetDatum(c->entries_freed);
	values[i++] = Int64GetDatum(c->entries_trimmed);
	values[i++] = Int64GetDatum(bytes);
	values[i++] = Int64GetDatum(images);
	values[i++] = Int64GetDatum(c->images_made);
	values[i++] = Int64GetDatum(c->images_evicted);
	values[i++] = Int64GetDatum(c->images_replaced);
	values[i++] = Int64GetDatum(c->copies_dropped);
	values[i++] = Int64GetDatum(c->copies_full);
	values[i++] = Int64GetDatum(btl_recent_chunks());
	values[i++] = Int64GetDatum(c->chunks_made);
	values[i++] = Int64GetDatum(c->chunks_given_up);
	values[i++] = Int64GetDatum(c->blocks_not_remembered);
	values[i++] = Int64GetDatum(btl_relayout_notes_held());
	values[i++] = Int64GetDatum(c->notes_forgotten);
	Assert(i == lengthof(values));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
