/*-------------------------------------------------------------------------
 *
 * scan_pg18.c
 *	  PostgreSQL 17, 18 and 19: reading the first leaf page of a primitive
 *	  scan into nbtree's scan state, and the amgettuple/amgetbitmap
 *	  drivers, scans with array keys and skip arrays included.
 *
 * 17 rewrote nbtree's array keys and 18 added skip arrays: a scan with
 * either advances its arrays inside _bt_checkkeys() while it reads a page,
 * and when the next elements lie beyond the page it schedules a new
 * descent, a primitive scan (so->needPrimScan).  That logic stays nbtree's
 * whole; what is ours is the descent of every primitive scan and the read
 * of the page it lands on.  The drivers run the loop btgettuple() and
 * btgetbitmap() run: position (scan.c), step on with _bt_next(), and when
 * a primitive scan ends without a tuple ask nbtree (btl_start_prim_scan(),
 * compat.h) whether another was scheduled, then position again from the
 * arrays' new elements.  The arrays are started for the scan's direction
 * only when no primitive scan was scheduled: a scheduled one continues
 * from the elements _bt_checkkeys() left.
 *
 * Parallel scans stay nbtree's (their first page comes from shared state
 * through functions an extension cannot call), and so do scans with row
 * comparisons, whose start keys 17 and 18 choose by rules of their own (the
 * planner makes none for a btlayout index on these versions).  Whether a
 * scan has either is known once its keys are preprocessed; from 17 on
 * preprocessing runs once per rescan (_bt_preprocess_keys() does nothing
 * when called again), so the drivers run it before deciding, and nbtree's
 * _bt_first() finds it done.  The decision holds until the next rescan.
 *
 * read_leaf_page() on 17 and 18 is their static _bt_readpage() for the
 * first page of a primitive scan that is not parallel: the page-level
 * state nbtree's exported _bt_checkkeys() reads (compat.h), the page's
 * final tuple given to it up front when the scan has arrays (the high key
 * forward, the first item backward: where the arrays' next elements are
 * decided), and the offsets it tells the read to skip to.  19 exports
 * _bt_readpage() and makes _bt_checkkeys() private: read_leaf_page() there
 * calls the server's reader, after prefetching the bodies of the first
 * items it will read (a point lookup keeps its read-ahead; the rest of a
 * range on that page goes without, as every later page does).  Copying
 * nbtree's tuple test instead is what this file must never do: it is the
 * part of nbtree that changes most.  From there on nbtree's _bt_next()
 * reads the following pages.  The leaf's pin is dropped when the version's
 * rule allows it, and then currPos.lsn remembers the page's LSN for
 * _bt_killitems().  What the versions name differently (the page state's
 * fields, the left sibling, the rule for the pin, 18's scanBehind) is in
 * compat.h.
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
	bool		arrayKeys = so->numArrayKeys != 0;
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

	/*
	 * With arrays, _bt_checkkeys() wants the page's final tuple in the scan's
	 * direction before the first: how the arrays advance depends on it.
	 */
	if (arrayKeys)
	{
		if (ScanDirectionIsForward(dir) ? !P_RIGHTMOST(opaque) :
			(minoff <= maxoff && !P_LEFTMOST(opaque)))
			pstate.finaltup = (IndexTuple)
				PageGetItem(page, PageGetItemId(page, ScanDirectionIsForward(dir) ?
												P_HIKEY : minoff));
		if (btl_array_page_behind(scan, dir, pstate.finaltup))
		{
			/* No items: _bt_next() ends the primitive scan, as scheduled */
			so->needPrimScan = true;
			if (ScanDirectionIsForward(dir))
				so->currPos.moreRight = false;
			else
				so->currPos.moreLeft = false;
			so->currPos.firstItem = 0;
			so->currPos.lastItem = -1;
			so->currPos.itemIndex = 0;
			return false;
		}
	}

	if (ScanDirectionIsForward(dir))
	{
		itemIndex = 0;
		offnum = Max(offnum, minoff);
		if (readahead)
			btl_read_ahead_start(page, offnum, 1, minoff, maxoff);
		while (offnum <= maxoff)
		{
			ItemId		iid = PageGetItemId(page, offnum);
			IndexTuple	itup;
			bool		passes;

			if (readahead)
				btl_read_ahead(page, offnum + BTL_READ_AHEAD, minoff, maxoff);

			if (scan->ignore_killed_tuples && ItemIdIsDead(iid))
			{
				offnum++;
				continue;
			}
			itup = (IndexTuple) PageGetItem(page, iid);
			pstate.offnum = offnum;
			passes = _bt_checkkeys(scan, &pstate, arrayKeys, itup, indnatts);

			/* The arrays' elements told the read to jump ahead */
			if (arrayKeys && OffsetNumberIsValid(pstate.skip))
			{
				offnum = pstate.skip;
				pstate.skip = InvalidOffsetNumber;
				if (readahead)
					btl_read_ahead_start(page, offnum, 1, minoff, maxoff);
				continue;
			}
			if (passes)
				itemIndex = btl_scan_save_tuple(so, itemIndex, offnum, itup, dir);
			if (!pstate.continuescan)
				break;
			offnum++;
		}

		/* The high key can tell that the page to the right has no matches */
		if (pstate.continuescan && !btl_array_scan_behind(so) &&
			!P_RIGHTMOST(opaque))
		{
			IndexTuple	hikey = (IndexTuple) PageGetItem(page, PageGetItemId(page, P_HIKEY));

			_bt_checkkeys(scan, &pstate, arrayKeys, hikey,
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
		while (offnum >= minoff)
		{
			ItemId		iid = PageGetItemId(page, offnum);
			IndexTuple	itup;
			bool		alive = true;
			bool		passes;

			if (readahead)
				btl_read_ahead(page, offnum - BTL_READ_AHEAD, minoff, maxoff);

			/*
			 * A killed tuple is skipped, except the page's first, whose keys
			 * can still tell that the page to the left has no matches.
			 */
			if (scan->ignore_killed_tuples && ItemIdIsDead(iid))
			{
				if (offnum > minoff)
				{
					offnum--;
					continue;
				}
				alive = false;
			}
			itup = (IndexTuple) PageGetItem(page, iid);
			pstate.offnum = offnum;
			passes = _bt_checkkeys(scan, &pstate, arrayKeys, itup, indnatts);

			/* 18: the arrays are past this page, the primitive scan is not */
			if (arrayKeys && btl_array_scan_behind(so))
				break;
			/* The arrays' elements told the read to jump back */
			if (arrayKeys && OffsetNumberIsValid(pstate.skip))
			{
				offnum = pstate.skip;
				pstate.skip = InvalidOffsetNumber;
				if (readahead)
					btl_read_ahead_start(page, offnum, -1, minoff, maxoff);
				continue;
			}
			if (passes && alive)
				itemIndex = btl_scan_save_tuple(so, itemIndex, offnum, itup, dir);
			if (!pstate.continuescan)
				break;
			offnum--;
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

	/*
	 * A primitive scan that _bt_checkkeys() scheduled may later turn back
	 * and find matches on either side (as nbtree sets it up); the scan keeps
	 * the elements it advanced the arrays to.
	 */
	if (so->needPrimScan)
	{
		so->currPos.moreLeft = true;
		so->currPos.moreRight = true;
		so->needPrimScan = false;
	}

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
 * preprocessed) with row comparisons?
 */
static bool
scan_is_nbtrees(IndexScanDesc scan)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (scan->parallel_scan != NULL)
		return true;
	_bt_preprocess_keys(scan);
	for (int i = 0; i < so->numberOfKeys; i++)
		if (so->keyData[i].sk_flags & SK_ROW_HEADER)
			return true;
	return false;
}

/*
 * Position a scan that is ours, or start its next primitive scan: the
 * arrays, if any, get their first elements for the direction unless
 * _bt_checkkeys() scheduled this primitive scan with later ones, as in
 * nbtree's _bt_first().
 */
static bool
scan_first(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (so->qual_ok && so->numArrayKeys != 0 && !so->needPrimScan)
		_bt_start_array_keys(scan, dir);
	return btl_scan_first(scan, dir);
}

/*
 * amgettuple: btgettuple()'s loop of primitive scans, with our scan_first()
 * where it calls _bt_first().  A scan positioned by nbtree (row
 * comparisons) steps on here just as in btgettuple(), and goes back to
 * nbtree whenever it must be positioned again.
 */
bool
btlayout_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	bool		res;

	if (scan->parallel_scan != NULL)
		return btgettuple(scan, dir);
	scan->xs_recheck = false;

	do
	{
		if (!BTScanPosIsValid(so->currPos))
		{
			if (scan_is_nbtrees(scan))
				return btgettuple(scan, dir);
			res = scan_first(scan, dir);
		}
		else
			res = btl_scan_next(scan, dir);
		if (res)
			break;
	} while (so->numArrayKeys != 0 && btl_start_prim_scan(scan, dir));

	return res;
}

/*
 * amgetbitmap: btgetbitmap()'s loop, with our scan_first()
 */
int64
btlayout_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	int64		ntids = 0;

	if (scan_is_nbtrees(scan))
		return btgetbitmap(scan, tbm);

	do
	{
		if (!scan_first(scan, ForwardScanDirection))
			continue;
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
	} while (so->numArrayKeys != 0 &&
			 btl_start_prim_scan(scan, ForwardScanDirection));

	return ntids;
}

#endif							/* PG_VERSION_NUM >= 170000 */
