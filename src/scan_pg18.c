/*-------------------------------------------------------------------------
 *
 * scan_pg18.c
 *	  PostgreSQL 17, 18 and 19: reading a scan's first leaf page into
 *	  nbtree's scan state, and the amgettuple/amgetbitmap drivers.
 *
 * 17 rewrote nbtree's array keys and 18 added skip arrays: a scan with
 * either advances its arrays inside _bt_checkkeys() while it reads a page,
 * schedules new descents ("primitive scans") from there, and keeps state
 * for it that only nbtree's static functions maintain.  Such scans, and
 * scans with row comparisons (whose start keys 18 chooses by rules of its
 * own; the planner makes none for a btlayout index on either version), are
 * handed whole to nbtree: btgettuple() and btgetbitmap() with nbtree's
 * descent.  So are parallel scans, as on every version.  What
 * is left, and is ours: scans whose keys are plain comparisons (after
 * preprocessing: no IN lists, no skip arrays), which include every probe
 * of a single key and every plain range.
 *
 * Whether a scan has arrays is known only once its keys are preprocessed;
 * from 17 on preprocessing runs once per rescan (_bt_preprocess_keys()
 * does nothing when called again), so the drivers run it before deciding,
 * and nbtree's _bt_first() finds it done.  The decision holds until the next rescan:
 * numArrayKeys and the keys do not change before then.
 *
 * read_leaf_page() on 17 and 18 is their static _bt_readpage() for the
 * first page of a scan without arrays and not parallel: the page-level
 * state nbtree's exported _bt_checkkeys() reads, with the options that
 * concern arrays off.  19 exports _bt_readpage() and makes _bt_checkkeys()
 * private: read_leaf_page() there calls the server's reader, after
 * prefetching the bodies of the first items it will read (a point lookup
 * keeps its read-ahead; the rest of a range on that page goes without, as
 * every later page does).  Copying nbtree's tuple test instead is what
 * this file must never do: it is the part of nbtree that changes most.
 * From there on nbtree's _bt_next() reads the following pages.  The leaf's
 * pin is dropped when the version's rule allows it, and then currPos.lsn
 * remembers the page's LSN for _bt_killitems().  What the two versions name
 * differently (the page state's fields, the left sibling, the rule for the
 * pin) is in compat.h.
 *
 * src/scan_pg18.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#if PG_VERSION_NUM >= 170000

#include "btlayout.h"

#include "scan.h"
#include "storage/predicate.h"
#include "utils/rel.h"

/*
 * Read the items of the locked leaf page in so->currPos.buf that pass the
 * scan's keys, from offnum in the scan's direction, into so->currPos.
 * Returns whether there is at least one.
 */
#if BTL_SERVER_READS_FIRST_PAGE
static bool
read_leaf_page(IndexScanDesc scan, ScanDirection dir, OffsetNumber offnum)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (btl_scan_reads_ahead(scan->indexRelation))
	{
		Page		page = BufferGetPage(so->currPos.buf);
		BTPageOpaque opaque = BTPageGetOpaque(page);
		OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

		if (ScanDirectionIsForward(dir))
			btl_read_ahead_start(page, Max(offnum, minoff), 1, minoff, maxoff);
		else
			btl_read_ahead_start(page, Min(offnum, maxoff), -1, minoff, maxoff);
	}
	return _bt_readpage(scan, dir, offnum, true);
}
#else
static bool
read_leaf_page(IndexScanDesc scan, ScanDirection dir, OffsetNumber offnum)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	Page		page = BufferGetPage(so->currPos.buf);
	BTPageOpaque opaque = BTPageGetOpaque(page);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			indnatts = IndexRelationGetNumberOfAttributes(rel);
	bool		readahead = btl_scan_reads_ahead(rel);
	BTReadPageState pstate;
	int			itemIndex;

	so->currPos.currPage = BufferGetBlockNumber(so->currPos.buf);
	btl_scan_pos_set_prev(so, opaque);
	so->currPos.nextPage = opaque->btpo_next;
	so->currPos.dir = dir;
	so->currPos.nextTupleOffset = 0;

	PredicateLockPage(rel, so->currPos.currPage, scan->xs_snapshot);

	btl_readpage_state_init(&pstate, page, minoff, maxoff, dir);

	if (ScanDirectionIsForward(dir))
	{
		itemIndex = 0;
		offnum = Max(offnum, minoff);
		if (readahead)
			btl_read_ahead_start(page, offnum, 1, minoff, maxoff);
		for (; offnum <= maxoff; offnum++)
		{
			ItemId		iid = PageGetItemId(page, offnum);
			IndexTuple	itup;

			if (readahead)
				btl_read_ahead(page, offnum + BTL_READ_AHEAD, minoff, maxoff);

			if (scan->ignore_killed_tuples && ItemIdIsDead(iid))
				continue;
			itup = (IndexTuple) PageGetItem(page, iid);
			pstate.offnum = offnum;
			if (_bt_checkkeys(scan, &pstate, false, itup, indnatts))
				itemIndex = btl_scan_save_tuple(so, itemIndex, offnum, itup, dir);
			if (!pstate.continuescan)
				break;
		}

		/* The high key can tell that the page to the right has no matches */
		if (pstate.continuescan && !P_RIGHTMOST(opaque))
		{
			IndexTuple	hikey = (IndexTuple) PageGetItem(page, PageGetItemId(page, P_HIKEY));

			_bt_checkkeys(scan, &pstate, false, hikey,
						  BTreeTupleGetNAtts(hikey, rel));
		}
		if (!pstate.continuescan)
			so->currPos.moreRight = false;

		so->currPos.firstItem = 0;
		so->currPos.lastItem = itemIndex - 1;
		so->currPos.itemIndex = 0;
	}
	else
	{
		itemIndex = MaxTIDsPerBTreePage;
		offnum = Min(offnum, maxoff);
		if (readahead)
			btl_read_ahead_start(page, offnum, -1, minoff, maxoff);
		for (; offnum >= minoff; offnum--)
		{
			ItemId		iid = PageGetItemId(page, offnum);
			IndexTuple	itup;
			bool		alive = true;

			if (readahead)
				btl_read_ahead(page, offnum - BTL_READ_AHEAD, minoff, maxoff);

			/*
			 * A killed tuple is skipped, except the page's first, whose keys
			 * can still tell that the page to the left has no matches.
			 */
			if (scan->ignore_killed_tuples && ItemIdIsDead(iid))
			{
				if (offnum > minoff)
					continue;
				alive = false;
			}
			itup = (IndexTuple) PageGetItem(page, iid);
			pstate.offnum = offnum;
			if (_bt_checkkeys(scan, &pstate, false, itup, indnatts) && alive)
				itemIndex = btl_scan_save_tuple(so, itemIndex, offnum, itup, dir);
			if (!pstate.continuescan)
				break;
		}
		if (!pstate.continuescan)
			so->currPos.moreLeft = false;

		so->currPos.firstItem = itemIndex;
		so->currPos.lastItem = MaxTIDsPerBTreePage - 1;
		so->currPos.itemIndex = MaxTIDsPerBTreePage - 1;
	}

	return so->currPos.firstItem <= so->currPos.lastItem;
}
#endif

/*
 * The scan is on the locked leaf page in buf: read it from offnum, or step
 * on to the next page with matches if it has none.
 */
bool
btl_scan_read_first_page(IndexScanDesc scan, ScanDirection dir, Buffer buf,
						 OffsetNumber offnum)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;

	so->currPos.buf = buf;
	btl_scan_start_page(so, dir);

	if (!read_leaf_page(scan, dir, offnum))
	{
		/*
		 * The state says the page's items are used up, so nbtree's
		 * _bt_next() steps to the next page (the buffer must be pinned and
		 * unlocked for that) and returns its first item.
		 */
		_bt_unlockbuf(rel, buf);
		return _bt_next(scan, dir);
	}

	if (btl_scan_drops_pin(scan, so))
	{
		/* _bt_killitems() then checks that the page did not change */
		so->currPos.lsn = BufferGetLSNAtomic(buf);
		_bt_relbuf(rel, buf);
		so->currPos.buf = InvalidBuffer;
	}
	else
		_bt_unlockbuf(rel, buf);
	btl_scan_return_item(scan);
	return true;
}

/*
 * Is the scan, not yet positioned, one for nbtree: parallel, or (its keys
 * preprocessed) with array keys, skip arrays or row comparisons?
 */
static bool
scan_is_nbtrees(IndexScanDesc scan)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (scan->parallel_scan != NULL)
		return true;
	_bt_preprocess_keys(scan);
	if (so->numArrayKeys != 0)
		return true;
	for (int i = 0; i < so->numberOfKeys; i++)
		if (so->keyData[i].sk_flags & SK_ROW_HEADER)
			return true;
	return false;
}

/*
 * amgettuple.  Once a scan without arrays is positioned, by us or (row
 * comparisons) by nbtree, stepping on is what btgettuple() would do:
 * remember a killed item, then _bt_next().
 */
bool
btlayout_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (!BTScanPosIsValid(so->currPos))
	{
		if (scan_is_nbtrees(scan))
			return btgettuple(scan, dir);
		scan->xs_recheck = false;
		return btl_scan_first(scan, dir);
	}
	if (scan->parallel_scan != NULL || so->numArrayKeys != 0)
		return btgettuple(scan, dir);

	/* Remember the tuple the executor found dead, for _bt_killitems */
	if (scan->kill_prior_tuple)
	{
		if (so->killedItems == NULL)
			so->killedItems = (int *)
				palloc(MaxTIDsPerBTreePage * sizeof(int));
		if (so->numKilled < MaxTIDsPerBTreePage)
			so->killedItems[so->numKilled++] = so->currPos.itemIndex;
	}
	return _bt_next(scan, dir);
}

/*
 * amgetbitmap
 */
int64
btlayout_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	int64		ntids = 0;

	if (scan_is_nbtrees(scan))
		return btgetbitmap(scan, tbm);

	if (btl_scan_first(scan, ForwardScanDirection))
	{
		tbm_add_tuples(tbm, &scan->xs_heaptid, 1, false);
		ntids++;

		/* The rest of this page's items, then the next pages' */
		for (;;)
		{
			if (++so->currPos.itemIndex > so->currPos.lastItem)
			{
				if (!_bt_next(scan, ForwardScanDirection))
					break;
			}
			tbm_add_tuples(tbm, &so->currPos.items[so->currPos.itemIndex].heapTid,
						   1, false);
			ntids++;
		}
	}

	return ntids;
}

#endif							/* PG_VERSION_NUM >= 170000 */
