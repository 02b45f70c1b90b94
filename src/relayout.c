/*-------------------------------------------------------------------------
 *
 * relayout.c
 *	  Rewriting the pages of an index that are not in its layout: after
 *	  VACUUM, and on demand with btlayout_relayout().
 *
 * A pass reads every block of the index once, in block order.  For each
 * live btree page it plans the page in the index's layout under a share
 * lock (page.c); a page that already matches its plan is left alone and
 * costs no WAL.  Otherwise the share lock is traded for an exclusive one,
 * the page is planned again (it may have changed in between), and in one
 * critical section the tuple bodies are moved, the buffer dirtied and a
 * full-page image logged.
 *
 * Moving tuple bodies under an exclusive content lock is what nbtree itself
 * does when it deletes items (PageIndexMultiDelete), and is safe for the
 * same reason: no backend keeps a pointer into a page's tuples once it has
 * released the page's lock.  Line pointers do not move, and neither does any
 * tuple's content, so a scan that remembered item offsets and heap TIDs
 * (for kill_prior_tuple, or to step to the next item) finds them unchanged;
 * the page LSN does change, which such scans already allow for.  Only one
 * buffer lock is held at a time, so a pass cannot deadlock with nbtree's
 * lock coupling.  A page a concurrent split or deletion has changed between
 * our locks is simply planned anew; pages split or inserted into after the
 * pass are out of layout again until the next one, which costs speed, never
 * correctness: line pointers are always in key order.
 *
 * A standby replays the full-page images and ends with the same bytes.
 *
 * src/relayout.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/relation.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "commands/vacuum.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/rel.h"

/*
 * Put the page held (pinned, unlocked) in buf in the layout, if it is not
 * already.  Returns whether it was rewritten.
 */
static bool
relayout_buffer(Relation index, Buffer buf, BtlLayout layout)
{
	Page		page = BufferGetPage(buf);
	BtlPagePlan plan;
	bool		needed;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	needed = btl_page_plan(page, layout, &plan) && !btl_page_matches(page, &plan);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	if (!needed)
		return false;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	needed = btl_page_plan(page, layout, &plan) && !btl_page_matches(page, &plan);
	if (needed)
	{
		START_CRIT_SECTION();
		btl_page_apply(page, &plan);
		MarkBufferDirty(buf);
		if (RelationNeedsWAL(index))
			log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);

	return needed;
}

/*
 * One pass over the index.  Returns the number of pages rewritten.
 */
int64
btl_relayout_index(Relation index, BufferAccessStrategy strategy,
				   bool vacuum_delay)
{
	BtlLayout	layout = BtlGetLayout(index);
	BlockNumber nblocks;
	BlockNumber blkno;
	int64		rewritten = 0;

	if (layout == BTL_LAYOUT_NONE)
		return 0;

	nblocks = RelationGetNumberOfBlocks(index);
	for (blkno = BTREE_METAPAGE + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;

		CHECK_FOR_INTERRUPTS();
		if (vacuum_delay)
			vacuum_delay_point();

		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
								 strategy);
		if (relayout_buffer(index, buf, layout))
			rewritten++;
		ReleaseBuffer(buf);
	}

	return rewritten;
}

/*
 * amvacuumcleanup: nbtree's cleanup, then a relayout pass.
 */
IndexBulkDeleteResult *
btlayout_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	int64		rewritten;

	stats = btvacuumcleanup(info, stats);
	if (info->analyze_only)
		return stats;

	rewritten = btl_relayout_index(info->index, info->strategy, true);
	ereport(info->message_level,
			(errmsg("index \"%s\": %lld pages rewritten in layout %s",
					RelationGetRelationName(info->index),
					(long long) rewritten,
					btl_layout_name(BtlGetLayout(info->index)))));

	return stats;
}

PG_FUNCTION_INFO_V1(btlayout_relayout);

/*
 * btlayout_relayout(index regclass) returns bigint
 *
 * Online: reads and writes of the index go on while it runs.  Needs the
 * privilege REINDEX needs: ownership of the index.
 */
Datum
btlayout_relayout(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index;
	BufferAccessStrategy strategy;
	int64		rewritten;

	PreventCommandDuringRecovery("btlayout_relayout()");
	PreventCommandIfReadOnly("btlayout_relayout()");

	index = btl_open_index(indexoid, RowExclusiveLock, true);
	strategy = GetAccessStrategy(BAS_VACUUM);
	rewritten = btl_relayout_index(index, strategy, false);
	FreeAccessStrategy(strategy);
	relation_close(index, RowExclusiveLock);

	PG_RETURN_INT64(rewritten);
}
