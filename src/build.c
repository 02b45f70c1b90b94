/*-------------------------------------------------------------------------
 *
 * build.c
 *	  CREATE INDEX for btlayout: sort the heap's index tuples and write
 *	  nbtree pages bottom-up.
 *
 * nbtree's sorted build (nbtsort.c) cannot be called for our index: its
 * page writer is static, and it would not lay pages out.  So the build is
 * ours, around the sort nbtree's uses:
 *
 * 1. Sort.  The spool (build.h, spool.c: the server's index tuplesort,
 *    which nbtree's build uses too) takes each heap tuple's index values from
 *    table_index_build_scan() and sorts them in nbtree's order: key
 *    attributes as the index orders them, then heap TID.  Dead tuples,
 *    which a build indexes but does not check, take their place in the
 *    same order; a unique index's duplicates among live tuples raise the
 *    error the server's build raises.  With workers (build_parallel.c),
 *    each participant sorts its share of a parallel heap scan and this
 *    backend merges them; the order, and so the index, is the same.
 *
 * 2. Load.  Tuples (merged into posting lists where deduplication is safe
 *    and enabled) fill leaf pages to the fill factor, left to right; when a
 *    page is full its last tuple moves to a new page, a suffix-truncated copy
 *    becomes the full page's high key, and the page's low key goes into the
 *    parent level as a downlink.  Internal levels fill to 70% and start each
 *    page with a minus-infinity item.  When the input ends, the rightmost
 *    page of each level is closed and the top one becomes the root.  These
 *    are nbtree's rules, followed step for step, so that an index built here
 *    with layout = none is the same bytes as the one core btree builds from
 *    the same table (sql/oracle.sql checks it block by block).
 *
 * 3. Lay out.  Each finished page has its tuple bodies placed in the index's
 *    layout (page.c) before it is written; with layout = none, nothing moves.
 *
 * Pages are built in backend-local memory and written through smgr,
 * bypassing shared buffers; nobody else can see the relation before the
 * build commits.  Each page is WAL-logged as a full-page image when the
 * relation needs WAL, and the file is synced before we return.
 *
 * src/build.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/xloginsert.h"
#include "binops.h"
#include "build.h"
#include "catalog/pg_opfamily.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/tuplesort.h"

/*
 * One level of the tree being built: the page currently being filled.
 */
typedef struct BtlLevel
{
	Page		page;			/* the page being filled (local workspace) */
	BlockNumber blkno;			/* block it will be written to */
	IndexTuple	lowkey;			/* its strict lower bound: the pivot that
								 * will point to it from the parent level */
	OffsetNumber lastoff;		/* last offset filled; P_HIKEY when empty */
	Size		lastpostingsz;	/* posting list bytes of the last tuple */
	uint32		level;			/* 0 for leaves */
	Size		fullspace;		/* "full" below this much free space */
	struct BtlLevel *parent;	/* next level up, once there is one */
} BtlLevel;

/*
 * The page writer.
 */
typedef struct BtlWriter
{
	Relation	heap;
	Relation	index;
	bool		isunique;		/* no posting lists in a unique index */
	BTScanInsert inskey;		/* for suffix truncation of high keys */
	bool		use_wal;		/* log each page as a full-page image? */
	BtlLayout	layout;			/* the layout pages are written in */
	BlockNumber nallocated;		/* blocks handed out so far */
	BlockNumber nwritten;		/* blocks written so far (file length) */
	Page		zeropage;		/* all zeroes, for filling gaps */
} BtlWriter;

/*
 * Upper bound on the size of a posting list tuple formed at build: a tenth
 * of the page, less the item's line pointer.  With the default fill factor
 * that is the free space a leaf page keeps, which keeps pages of many
 * duplicates close to the fill factor (nbtree's build uses the same bound).
 */
#define BTL_MAX_POSTING_SIZE \
	(MAXALIGN_DOWN(BLCKSZ * 10 / 100) - sizeof(ItemIdData))

/*
 * Write one finished page at blkno and free it.
 *
 * Blocks are handed out in order but written as levels finish, so a block
 * may come before the ones below it have been written: the gap is filled
 * with zero pages (not WAL-logged; they are overwritten before the build
 * ends) so that the file never has holes.
 */
static void
writer_write(BtlWriter *w, Page page, BlockNumber blkno)
{
	if (w->use_wal)
		log_newpage(BtlRelationLocator(w->index), MAIN_FORKNUM, blkno, page, true);

	while (w->nwritten < blkno)
	{
		if (w->zeropage == NULL)
			w->zeropage = (Page) palloc0(BLCKSZ);
		smgrextend(RelationGetSmgr(w->index), MAIN_FORKNUM, w->nwritten++,
				   (char *) w->zeropage, true);
	}

	btl_page_set_checksum(page, blkno);
	if (blkno == w->nwritten)
	{
		smgrextend(RelationGetSmgr(w->index), MAIN_FORKNUM, blkno,
				   (char *) page, true);
		w->nwritten++;
	}
	else
		smgrwrite(RelationGetSmgr(w->index), MAIN_FORKNUM, blkno,
				  (char *) page, true);

	pfree(page);
}

/*
 * A new, empty page of the given level.  Its line pointer array starts with
 * one slot reserved for the high key: we do not know yet whether the page
 * will be the rightmost of its level (which has none).
 */
static Page
page_new(uint32 level)
{
	Page		page = (Page) palloc(BLCKSZ);
	BTPageOpaque opaque;

	_bt_pageinit(page, BLCKSZ);
	opaque = BTPageGetOpaque(page);
	opaque->btpo_prev = P_NONE;
	opaque->btpo_next = P_NONE;
	opaque->btpo_level = level;
	opaque->btpo_flags = (level == 0) ? BTP_LEAF : 0;
	opaque->btpo_cycleid = 0;

	((PageHeader) page)->pd_lower += sizeof(ItemIdData);

	return page;
}

/*
 * Put a tuple at offset off.  The first data item of an internal page is
 * stored as a minus-infinity item: the downlink alone, no key attributes.
 */
static void
page_put(Page page, IndexTuple itup, Size size, OffsetNumber off,
		 bool minus_infinity)
{
	IndexTupleData downlink_only;

	if (minus_infinity)
	{
		downlink_only = *itup;
		downlink_only.t_info = sizeof(IndexTupleData);
		BTreeTupleSetNAtts(&downlink_only, 0, false);
		itup = &downlink_only;
		size = sizeof(IndexTupleData);
	}

	if (PageAddItem(page, (void *) itup, size, off, false, false) == InvalidOffsetNumber)
		elog(ERROR, "failed to add item to the index page");
}

/*
 * The rightmost page of a level has no high key: drop the slot reserved for
 * it by shifting the line pointers down one place.
 */
static void
page_drop_highkey_slot(Page page)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	memmove(PageGetItemId(page, P_HIKEY), PageGetItemId(page, P_FIRSTKEY),
			(maxoff - P_HIKEY) * sizeof(ItemIdData));
	((PageHeader) page)->pd_lower -= sizeof(ItemIdData);
}

static BtlLevel *
level_new(BtlWriter *w, uint32 level)
{
	BtlLevel   *lvl = (BtlLevel *) palloc0(sizeof(BtlLevel));

	lvl->page = page_new(level);
	lvl->blkno = w->nallocated++;
	lvl->lowkey = NULL;
	lvl->lastoff = P_HIKEY;
	lvl->lastpostingsz = 0;
	lvl->level = level;
	lvl->fullspace = (level == 0) ?
		BtlTargetPageFreeSpace(w->index) :
		BLCKSZ * (100 - BTREE_NONLEAF_FILLFACTOR) / 100;
	lvl->parent = NULL;

	return lvl;
}

static void level_add(BtlWriter *w, BtlLevel *lvl, IndexTuple itup,
					  Size postingsz);

/*
 * Add the pivot pointing to the page at blkno (whose low key lowkey is) to
 * the parent level, creating that level if this is the first page to need
 * one.  Consumes lowkey.
 */
static void
level_link_to_parent(BtlWriter *w, BtlLevel *lvl, IndexTuple lowkey,
					 BlockNumber blkno)
{
	if (lvl->parent == NULL)
		lvl->parent = level_new(w, lvl->level + 1);

	BTreeTupleSetDownLink(lowkey, blkno);
	level_add(w, lvl->parent, lowkey, 0);
	pfree(lowkey);
}

/*
 * The current page of lvl is full: move its last tuple to a fresh page,
 * make (a truncated copy of) that tuple the full page's high key, link the
 * full page into the parent level and write it.
 */
static void
level_finish_page(BtlWriter *w, BtlLevel *lvl)
{
	Page		opage = lvl->page;
	BlockNumber oblkno = lvl->blkno;
	bool		isleaf = (lvl->level == 0);
	Page		npage;
	BlockNumber nblkno;
	ItemId		lastii;
	IndexTuple	hikey;

	npage = page_new(lvl->level);
	nblkno = w->nallocated++;

	/* The last tuple starts the new page ... */
	Assert(lvl->lastoff > P_FIRSTKEY);
	lastii = PageGetItemId(opage, lvl->lastoff);
	hikey = (IndexTuple) PageGetItem(opage, lastii);
	page_put(npage, hikey, ItemIdGetLength(lastii), P_FIRSTKEY, !isleaf);

	/* ... and its line pointer moves to the high key slot of the old one */
	*PageGetItemId(opage, P_HIKEY) = *lastii;
	ItemIdSetUnused(lastii);
	((PageHeader) opage)->pd_lower -= sizeof(ItemIdData);

	/*
	 * On leaves, keep only the attributes needed to separate the old page's
	 * last tuple from the new page's first one (internal pages get their
	 * pivots from the level below, already truncated).  The truncated tuple
	 * may be larger by a heap TID; the space for it was kept free when the
	 * page filled.
	 */
	if (isleaf)
	{
		IndexTuple	lastleft;
		IndexTuple	truncated;

		lastleft = (IndexTuple) PageGetItem(opage,
											PageGetItemId(opage, OffsetNumberPrev(lvl->lastoff)));
		truncated = _bt_truncate(w->index, lastleft, hikey, w->inskey);
		if (!PageIndexTupleOverwrite(opage, P_HIKEY, (void *) truncated,
									 IndexTupleSize(truncated)))
			elog(ERROR, "failed to add high key to index page of \"%s\"",
				 RelationGetRelationName(w->index));
		pfree(truncated);
		hikey = (IndexTuple) PageGetItem(opage, PageGetItemId(opage, P_HIKEY));
	}

	/* The old page's low key goes up; its high key is the new page's low key */
	level_link_to_parent(w, lvl, lvl->lowkey, oblkno);
	lvl->lowkey = CopyIndexTuple(hikey);

	BTPageGetOpaque(opage)->btpo_next = nblkno;
	BTPageGetOpaque(npage)->btpo_prev = oblkno;

	btl_page_layout(opage, w->layout);
	writer_write(w, opage, oblkno);

	lvl->page = npage;
	lvl->blkno = nblkno;
	lvl->lastoff = P_FIRSTKEY;
}

/*
 * Add a tuple to the current page of a level, finishing that page first if
 * the tuple does not fit or the page has reached its fill target.
 * postingsz is the size of itup's posting list, if it has one: truncation
 * will remove it if itup becomes a high key, which counts in the fill
 * target's favour.
 */
static void
level_add(BtlWriter *w, BtlLevel *lvl, IndexTuple itup, Size postingsz)
{
	bool		isleaf = (lvl->level == 0);
	Size		itupsz = MAXALIGN(IndexTupleSize(itup));
	Size		freespace = PageGetFreeSpace(lvl->page);
	Size		lastpostingsz = lvl->lastpostingsz;

	CHECK_FOR_INTERRUPTS();

	lvl->lastpostingsz = postingsz;

	/* Raises the server's error for tuples too large for a btree page */
	if (unlikely(itupsz > BtlMaxItemSize(lvl->page)))
		_bt_check_third_page(w->index, w->heap, isleaf, lvl->page, itup);

	/*
	 * A page is full when the tuple does not fit (on leaves, with room to
	 * spare for the heap TID a truncated high key may need), or when it is
	 * past its fill target and already holds two data items (fewer would
	 * leave nothing of use on the page once one moves right).
	 */
	if (freespace < itupsz + (isleaf ? MAXALIGN(sizeof(ItemPointerData)) : 0) ||
		(freespace + lastpostingsz < lvl->fullspace && lvl->lastoff > P_FIRSTKEY))
		level_finish_page(w, lvl);

	/* The first tuple of a level: everything is above its minus infinity */
	if (lvl->lastoff == P_HIKEY)
	{
		Assert(lvl->lowkey == NULL);
		lvl->lowkey = (IndexTuple) palloc0(sizeof(IndexTupleData));
		lvl->lowkey->t_info = sizeof(IndexTupleData);
		BTreeTupleSetNAtts(lvl->lowkey, 0, false);
	}

	lvl->lastoff = OffsetNumberNext(lvl->lastoff);
	page_put(lvl->page, itup, itupsz, lvl->lastoff,
			 !isleaf && lvl->lastoff == P_FIRSTKEY);
}

/*
 * Close the rightmost page of every level, bottom-up, and write the
 * metapage pointing to the top one.  leaf is NULL for an empty index.
 */
static void
writer_finish(BtlWriter *w, BtlLevel *leaf)
{
	BlockNumber rootblkno = P_NONE;
	uint32		rootlevel = 0;
	BtlLevel   *lvl;
	Page		metapage;

	for (lvl = leaf; lvl != NULL; lvl = lvl->parent)
	{
		if (lvl->parent == NULL)
		{
			BTPageGetOpaque(lvl->page)->btpo_flags |= BTP_ROOT;
			rootblkno = lvl->blkno;
			rootlevel = lvl->level;
		}
		else
			level_link_to_parent(w, lvl, lvl->lowkey, lvl->blkno);
		lvl->lowkey = NULL;

		page_drop_highkey_slot(lvl->page);
		btl_page_layout(lvl->page, w->layout);
		writer_write(w, lvl->page, lvl->blkno);
		lvl->page = NULL;
	}

	metapage = (Page) palloc(BLCKSZ);
	_bt_initmetapage(metapage, rootblkno, rootlevel, w->inskey->allequalimage);
	writer_write(w, metapage, BTREE_METAPAGE);

	/*
	 * The pages bypassed shared buffers, so a checkpoint during the build
	 * did not flush them, and replay would start after their WAL: sync.
	 */
	if (w->use_wal)
		smgrimmedsync(RelationGetSmgr(w->index), MAIN_FORKNUM);
}

/*
 * Add the pending posting list (or lone tuple) of a deduplication state to
 * the leaf level, and reset the state for the next one.
 */
static void
dedup_flush(BtlWriter *w, BtlLevel *leaf, BTDedupState dstate)
{
	if (dstate->nitems == 1)
		level_add(w, leaf, dstate->base, 0);
	else
	{
		IndexTuple	posting = _bt_form_posting(dstate->base, dstate->htids,
											   dstate->nhtids);

		level_add(w, leaf, posting,
				  IndexTupleSize(posting) - BTreeTupleGetPostingOffset(posting));
		pfree(posting);
	}

	pfree(dstate->base);
	dstate->base = NULL;
	dstate->nmaxitems = 0;
	dstate->nhtids = 0;
	dstate->nitems = 0;
	dstate->phystupsize = 0;
}

/*
 * Read the sorted tuples and load them into the tree.
 */
static void
load_sorted(BtlWriter *w, BtlSpool *spool)
{
	Relation	index = w->index;
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	BtlLevel   *leaf = NULL;
	BTDedupState dstate = NULL;
	IndexTuple	itup;
	int64		ntuples = 0;

	if (w->inskey->allequalimage && !w->isunique && BtlDeduplicateItems(index))
	{
		dstate = (BTDedupState) palloc0(sizeof(BTDedupStateData));
		dstate->deduplicate = true;
		dstate->maxpostingsize = BTL_MAX_POSTING_SIZE;
		dstate->htids = palloc(dstate->maxpostingsize);
		dstate->baseoff = InvalidOffsetNumber;
	}

	while ((itup = btl_spool_next(spool)) != NULL)
	{
		if (leaf == NULL)
			leaf = level_new(w, 0);

		if (dstate == NULL)
			level_add(w, leaf, itup, 0);
		else if (dstate->base != NULL &&
				 _bt_keep_natts_fast(index, dstate->base, itup) > nkeyatts &&
				 _bt_dedup_save_htid(dstate, itup))
		{
			/* merged into the pending posting list */
		}
		else
		{
			if (dstate->base != NULL)
				dedup_flush(w, leaf, dstate);
			_bt_dedup_start_pending(dstate, CopyIndexTuple(itup),
									InvalidOffsetNumber);
		}

		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, ++ntuples);
	}

	if (dstate != NULL && dstate->base != NULL)
		dedup_flush(w, leaf, dstate);

	writer_finish(w, leaf);
}

/*
 * Key column i must have the operator it is ordered by: "<", or ">" for a
 * DESC column, of its operator family.  A family without it cannot order
 * the index (a class made by hand; amvalidate() says so too): refused
 * before any sort, although the index tuplesort would sort with the
 * comparison function alone.
 */
static void
check_sort_operator(Relation index, int i)
{
	int16		strategy = (index->rd_indoption[i] & INDOPTION_DESC) ?
		BTGreaterStrategyNumber : BTLessStrategyNumber;
	Oid			opno = get_opfamily_member(index->rd_opfamily[i],
										   index->rd_opcintype[i],
										   index->rd_opcintype[i],
										   strategy);

	if (!OidIsValid(opno))
	{
		HeapTuple	tup = SearchSysCache1(OPFAMILYOID,
										  ObjectIdGetDatum(index->rd_opfamily[i]));

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for operator family %u",
				 index->rd_opfamily[i]);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method btlayout has no operator of strategy %d for type %s",
						NameStr(((Form_pg_opfamily) GETSTRUCT(tup))->opfname),
						strategy, format_type_be(index->rd_opcintype[i])),
				 errhint("Check the operator class with amvalidate().")));
	}
}

/*
 * Scan the heap into a spool, with workers when the build may have them.
 * Returns the spool to read the sorted tuples from (sorted), and the
 * parallel build's leader state, if there are workers, through *leaderp.
 */
static BtlSpool *
spool_heap(Relation heap, Relation index, IndexInfo *indexInfo,
		   double *reltuples, double *indtuples, BtlBuildLeader **leaderp)
{
	int			request = btl_build_workers(heap, index, indexInfo);
	BtlBuildLeader *leader = NULL;
	BtlSpool   *spool;

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
								 PROGRESS_BTREE_PHASE_INDEXBUILD_TABLESCAN);

	if (request > 0)
		leader = btl_parallel_begin(heap, index, indexInfo, request);

	if (leader != NULL)
	{
		SortCoordinate coordinates[BTL_SPOOL_MAX_SORTS];
		bool		brokenhotchain;
		int			i;

		for (i = 0; i < btl_spool_nsorts(indexInfo->ii_Unique); i++)
			coordinates[i] = btl_parallel_coordinate(leader, i);
		spool = btl_spool_begin(heap, index, indexInfo->ii_Unique,
								indexInfo->ii_NullsNotDistinct,
								maintenance_work_mem, coordinates);
		*reltuples = btl_parallel_heapscan(leader, indtuples, &brokenhotchain);
		if (brokenhotchain)
			indexInfo->ii_BrokenHotChain = true;
	}
	else
	{
		spool = btl_spool_begin(heap, index, indexInfo->ii_Unique,
								indexInfo->ii_NullsNotDistinct,
								maintenance_work_mem, NULL);
		*reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
											btl_spool_callback, spool, NULL);
		*indtuples = btl_spool_ntuples(spool);
	}

	{
		const int	progress_index[] = {
			PROGRESS_CREATEIDX_TUPLES_TOTAL,
			PROGRESS_SCAN_BLOCKS_TOTAL,
			PROGRESS_SCAN_BLOCKS_DONE
		};
		const int64 progress_vals[] = {*indtuples, 0, 0};

		pgstat_progress_update_multi_param(3, progress_index, progress_vals);
	}

	btl_spool_performsort(spool, true);

	*leaderp = leader;
	return spool;
}

/*
 * ambuild
 */
IndexBuildResult *
btlayout_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BtlBuildLeader *leader;
	BtlSpool   *spool;
	BtlWriter	writer;
	double		reltuples;
	double		indtuples;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	/* BIN classes of collatable types need the "C" collation */
	btl_check_bin_collations(index);
	for (int i = 0; i < IndexRelationGetNumberOfKeyAttributes(index); i++)
		check_sort_operator(index, i);

	spool = spool_heap(heap, index, indexInfo, &reltuples, &indtuples,
					   &leader);

	/* Load the sorted tuples into pages */
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
								 PROGRESS_BTREE_PHASE_LEAF_LOAD);
	writer.heap = heap;
	writer.index = index;
	writer.isunique = indexInfo->ii_Unique;
	writer.inskey = _bt_mkscankey(index, NULL);
	/* without a metapage, _bt_mkscankey cannot know this */
	writer.inskey->allequalimage = _bt_allequalimage(index, true);
	writer.use_wal = RelationNeedsWAL(index);
	writer.layout = BtlGetLayout(index);
	writer.nallocated = BTREE_METAPAGE + 1;
	writer.nwritten = 0;
	writer.zeropage = NULL;

	load_sorted(&writer, spool);
	btl_spool_end(spool);
	if (leader != NULL)
		btl_parallel_end(leader);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = indtuples;

	return result;
}
