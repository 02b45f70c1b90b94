/*-------------------------------------------------------------------------
 *
 * relayout.c
 *	  Rewriting the pages of an index that are not in its layout: after
 *	  VACUUM, and on demand with btlayout_relayout().
 *
 * A pass reads every block of the index once, in block order.  For each
 * live btree page it decides under a share lock whether the page needs a
 * rewrite (page.c says how it stands against the layout): on demand, every
 * page not exactly in the layout; after VACUUM, only the pages the search
 * no longer serves well, those out of layout and those with more items
 * inserted since their layout than btl_too_many_inserted() allows (the
 * search walks the others as they are, search.c).  A page left alone
 * costs no WAL.  Otherwise the share lock is traded for an exclusive one,
 * the page is looked at again (it may have changed in between), and in one
 * critical section the tuple bodies are moved, the buffer dirtied and the
 * move logged (wal.c: btlayout's own record where the library is
 * preloaded, else a full-page image).
 *
 * VACUUM runs a pass only when nbtree's own part of it read the whole
 * index (a bulk delete, or a cleanup scan): an insert-only VACUUM, which
 * nbtree answers without reading the index, stays that cheap.
 *
 * Between VACUUMs, lookups keep the pages they use in layout: a search that
 * meets a page in nbtree's own order (split or deduplicated since its
 * layout), or one crowded with inserts, notes the block (search.c), and
 * when the scan is rescanned or ends, the noted pages of its index are
 * rewritten as after VACUUM, one buffer lock at a time, each taken only if
 * it is free at once (lock_noted_page()), by the backend that met them.
 * Pages no lookup visits are never rewritten this way; a page looked at
 * and left alone (a damaged one, say) is not noted again until
 * it changes, while this backend remembers it.  Nothing is noted or rewritten on a standby or in parallel
 * mode.  Lookups write WAL this way, as heap pruning does: the reloption
 * lookup_relayout turns it off.
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
 * A standby replays the records and ends with the same bytes.
 *
 * src/relayout.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/parallel.h"
#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "commands/vacuum.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/rel.h"

/*
 * Does the page need a rewrite: is it out of layout, or (unless only pages
 * the search does not serve well are wanted) not exactly in it?  Leaves
 * the page's plan in *plan.
 */
static bool
page_needs_relayout(Page page, BtlLayout layout, bool all, BtlPagePlan *plan)
{
	int			inserted;

	switch (btl_page_state(page, layout, plan, &inserted))
	{
		case BTL_PAGE_LAID_OUT:
		case BTL_PAGE_UNPLANNABLE:
			break;
		case BTL_PAGE_INSERTED:
			return all || btl_too_many_inserted(inserted, plan->nsearch);
		case BTL_PAGE_OUT_OF_LAYOUT:
			return true;
	}
	return false;
}

/*
 * Put the page in buf, locked exclusively, in the layout if it needs it
 * (see page_needs_relayout).  Returns whether it was rewritten.
 */
static bool
relayout_locked(Relation index, Buffer buf, BtlLayout layout, bool all)
{
	Page		page = BufferGetPage(buf);
	BtlPagePlan plan;

	if (!page_needs_relayout(page, layout, all, &plan))
		return false;

	START_CRIT_SECTION();
	btl_page_apply(page, &plan);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(index))
		btl_wal_log_relayout(buf, &plan);
	END_CRIT_SECTION();

	return true;
}

/*
 * A pass's look at the page held (pinned, unlocked) in buf: put it in the
 * layout if it needs it (see page_needs_relayout), deciding under a share
 * lock so that the pages left alone, most of an index, never hold up its
 * readers.  Returns whether it was rewritten.
 */
static bool
relayout_buffer(Relation index, Buffer buf, BtlLayout layout, bool all)
{
	BtlPagePlan plan;
	bool		needed;
	bool		rewritten;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	needed = page_needs_relayout(BufferGetPage(buf), layout, all, &plan);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	if (!needed)
		return false;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	rewritten = relayout_locked(index, buf, layout, all);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);

	return rewritten;
}

/*
 * Pages noted by lookups, waiting for their scan to end or be rescanned in
 * the same transaction (a scan that ended in an error leaves notes that a
 * later transaction drops: the index may have been rebuilt since); and,
 * hashed by block, pages this backend looked at for that and left as they
 * were, with what they looked like then (LSN, pd_lower and pd_upper:
 * inserts change pd_lower even on unlogged indexes, which have no LSNs).
 * Both are plain backend-local memory: noting costs no shared state.
 * Pages are named by their index's identity (indexstate.c says why a
 * relation file alone does not name one) and block, and a relcache
 * invalidation of an index forgets its pages (btl_relayout_forget()): no
 * note of a dropped or rebuilt index is taken for its successor's.  A
 * note is only a hint anyway: relayout_buffer() decides on the page,
 * under its lock.
 */
typedef struct BtlNotedPage
{
	BtlRelIdentity id;
	BlockNumber blkno;
	XLogRecPtr	lsn;
	LocationIndex lower;
	LocationIndex upper;
} BtlNotedPage;

#define BTL_NOTED_PAGES		16
#define BTL_CHECKED_PAGES	256

static BtlNotedPage noted[BTL_NOTED_PAGES];
static int	nnoted;
static LocalTransactionId noted_lxid;	/* the transaction that noted them */
static BtlNotedPage checked[BTL_CHECKED_PAGES];

static inline BtlNotedPage *
checked_slot(const BtlRelIdentity *id, BlockNumber blkno)
{
	return &checked[(blkno * 31 + id->relid) % BTL_CHECKED_PAGES];
}

static inline bool
same_page(const BtlNotedPage *a, const BtlNotedPage *b)
{
	return a->blkno == b->blkno &&
		memcmp(&a->id, &b->id, sizeof(BtlRelIdentity)) == 0;
}

/* The page as it is now, in buf (locked), under its name */
static void
describe_page(Relation index, Buffer buf, BtlNotedPage *p)
{
	PageHeader	hdr = (PageHeader) BufferGetPage(buf);

	btl_rel_identity(index, &p->id);
	p->blkno = BufferGetBlockNumber(buf);
	p->lsn = PageGetLSN(BufferGetPage(buf));
	p->lower = hdr->pd_lower;
	p->upper = hdr->pd_upper;
}

/*
 * A lookup met the page in buf (locked) and found it stale: note it for a
 * relayout when the scan ends, unless it was looked at and left as it is,
 * or enough pages are noted already.
 */
void
btl_note_stale_page(Relation index, Buffer buf)
{
	BtlNotedPage page;
	BtlNotedPage *c;

	if (noted_lxid != BtlMyLocalTransactionId())
	{
		nnoted = 0;
		noted_lxid = BtlMyLocalTransactionId();
	}
	if (nnoted >= BTL_NOTED_PAGES || IsInParallelMode() ||
		BtlGetLayout(index) == BTL_LAYOUT_NONE)
		return;
	describe_page(index, buf, &page);
	c = checked_slot(&page.id, page.blkno);
	if (same_page(c, &page) &&
		c->lsn == page.lsn && c->lower == page.lower && c->upper == page.upper)
		return;
	for (int i = 0; i < nnoted; i++)
		if (same_page(&noted[i], &page))
			return;
	noted[nnoted++] = page;
}

/* A relcache invalidation of relid (or of all): forget its pages */
void
btl_relayout_forget(Oid relid)
{
	int			kept = 0;

	for (int i = 0; i < nnoted; i++)
		if (relid != InvalidOid && noted[i].id.relid != relid)
			noted[kept++] = noted[i];
	btl_state_counters.notes_forgotten += nnoted - kept;
	nnoted = kept;
	for (int i = 0; i < BTL_CHECKED_PAGES; i++)
		if (relid == InvalidOid || checked[i].id.relid == relid)
		{
			btl_state_counters.notes_forgotten += checked[i].id.relid != InvalidOid;
			memset(&checked[i], 0, sizeof(BtlNotedPage));
		}
}

/*
 * The notes held now: pages noted for a relayout and pages remembered as
 * looked at and left alone; for btlayout_backend_state()
 */
int64
btl_relayout_notes_held(void)
{
	int64		n = nnoted;

	for (int i = 0; i < BTL_CHECKED_PAGES; i++)
		n += checked[i].id.relid != InvalidOid;
	return n;
}

/*
 * Lock the noted page in buf (pinned) exclusively for its relayout, if that
 * can be done at once and nothing in this backend is in the page; else
 * leave it.  Every lock is conditional: the scan whose end takes up the
 * notes may be nested in another use of the same index by this backend
 * (an operator class's comparison function running a query), which may
 * hold the very page: its share lock, for a search, or its exclusive lock,
 * for an insert, which compares keys on its leaf under that lock (and an
 * open cursor's lookup may have noted that leaf).  A wait for either lock
 * would be a wait on this backend itself: forever, and uncancellable
 * (LWLock waits do not take interrupts, and one held keeps them off).
 * This backend cannot ask which locks it holds, but a conditional
 * attempt fails on them as on any other backend's.  The exclusive lock is
 * taken straight away, not after a look under a share lock as a pass does
 * (relayout_buffer()): bufmgr has no conditional share lock on every
 * version, and one lock is less than the three (look, rewrite, look again
 * to remember) that the read path took; pages noted are pages a lookup
 * found out of layout, which the rewrite mostly is for, and a page left
 * alone is not noted again until it changes.
 *
 * A temporary index's buffers are backend-local and their locks do
 * nothing: any attempt succeeds, even while an insert of this backend is
 * comparing keys in the page, holding pointers into its tuples, which a
 * rewrite would move under it.  Whoever uses a page holds a pin on it, so
 * a local buffer is rewritten only if our pin is its only one (a scan of a
 * temporary index keeps the pin of the page it is on: a cursor's note
 * waits for the cursor to move on, or to end).
 *
 * A page left for any of these reasons costs speed only: the search serves
 * it through its line pointers.
 */
static bool
lock_noted_page(Buffer buf)
{
	if (BufferIsLocal(buf))
		return LocalRefCount[-buf - 1] == 1;
	return ConditionalLockBuffer(buf);
}

/*
 * Rewrite the pages lookups noted in this index; called when a scan of it
 * is rescanned or ends, holding no buffer lock of its own (an outer use of
 * the index by this backend may hold one: lock_noted_page()).  Notes of
 * other indexes wait for their own scans.  A page that cannot be locked at
 * once is dropped from the notes without being remembered as looked at.
 */
void
btl_relayout_noted(Relation index)
{
	BtlLayout	layout;
	BtlRelIdentity id;
	int			kept = 0;

	if (nnoted == 0)
		return;
	layout = BtlGetLayout(index);
	if (noted_lxid != BtlMyLocalTransactionId())
	{
		nnoted = 0;
		return;
	}
	btl_rel_identity(index, &id);
	for (int i = 0; i < nnoted; i++)
	{
		Buffer		buf;

		if (memcmp(&noted[i].id, &id, sizeof(id)) != 0)
		{
			noted[kept++] = noted[i];
			continue;
		}
		if (layout == BTL_LAYOUT_NONE || RecoveryInProgress() ||
			IsInParallelMode() ||
			noted[i].blkno >= RelationGetNumberOfBlocks(index))
			continue;

		buf = ReadBuffer(index, noted[i].blkno);
		if (!lock_noted_page(buf))
		{
			/* dropped, not remembered: a lookup that meets it notes it anew */
			ReleaseBuffer(buf);
			continue;
		}
		if (relayout_locked(index, buf, layout, false))
			btl_search_counters.lookup_relayouts++;
		describe_page(index, buf, checked_slot(&id, noted[i].blkno));
		UnlockReleaseBuffer(buf);
	}
	nnoted = kept;
}

/*
 * One pass over the index, rewriting every page not exactly in its layout
 * (all) or only those that need it (see page_needs_relayout).  Returns the
 * number of pages rewritten.
 */
int64
btl_relayout_index(Relation index, BufferAccessStrategy strategy,
				   bool vacuum_delay, bool all)
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
			btl_vacuum_delay_point();

		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
								 strategy);
		if (relayout_buffer(index, buf, layout, all))
			rewritten++;
		ReleaseBuffer(buf);
	}

	return rewritten;
}

/*
 * amvacuumcleanup: nbtree's cleanup, then, if nbtree read the index (its
 * bulk delete ran, which is when stats come in, or its cleanup scanned the
 * index, which is when stats come out), a pass rewriting the pages that
 * need it.
 */
IndexBulkDeleteResult *
btlayout_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	bool		bulkdeleted = (stats != NULL);
	int64		rewritten;

	stats = btvacuumcleanup(info, stats);
	if (info->analyze_only || (!bulkdeleted && stats == NULL))
		return stats;

	rewritten = btl_relayout_index(info->index, info->strategy, true, false);
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
	rewritten = btl_relayout_index(index, strategy, false, true);
	FreeAccessStrategy(strategy);
	relation_close(index, RowExclusiveLock);

	PG_RETURN_INT64(rewritten);
}
