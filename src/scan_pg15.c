/*-------------------------------------------------------------------------
 *
 * scan_pg15.c
 *	  PostgreSQL 15 and 16: reading a scan's first leaf page into nbtree's
 *	  scan state, and the amgettuple/amgetbitmap drivers, array keys
 *	  included.
 *
 * nbtree's _bt_readpage() of these versions is static; read_leaf_page()
 * does what it does for scans that are not parallel, through nbtree's
 * exported _bt_checkkeys().  Array keys are ours too: the drivers start
 * them (_bt_start_array_keys) and, after each set of array values is used
 * up, advance them (_bt_advance_array_keys) and position the scan anew, as
 * btgettuple() and btgetbitmap() do.
 *
 * src/scan_pg15.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#if PG_VERSION_NUM < 170000

#include "btlayout.h"

#include "scan.h"
#include "storage/predicate.h"
#include "utils/rel.h"

/*
 * Read the items of the locked leaf page in so->currPos.buf that pass the
 * scan's keys, from offnum in the scan's direction, into so->currPos.
 * Returns whether there is at least one.  This is nbtree's _bt_readpage()
 * for scans that are not parallel.
 */
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
	bool		continuescan = true;
	int			itemIndex;

	so->currPos.currPage = BufferGetBlockNumber(so->currPos.buf);
	so->currPos.lsn = BufferGetLSNAtomic(so->currPos.buf);
	so->currPos.nextPage = opaque->btpo_next;
	so->currPos.nextTupleOffset = 0;

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
			if (_bt_checkkeys(scan, itup, indnatts, dir, &continuescan))
				itemIndex = btl_scan_save_tuple(so, itemIndex, offnum, itup, dir);
			if (!continuescan)
				break;
		}

		/* The high key can tell that the page to the right has no matches */
		if (continuescan && !P_RIGHTMOST(opaque))
		{
			IndexTuple	hikey = (IndexTuple) PageGetItem(page, PageGetItemId(page, P_HIKEY));

			_bt_checkkeys(scan, hikey, BTreeTupleGetNAtts(hikey, rel), dir,
						  &continuescan);
		}
		if (!continuescan)
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
			if (_bt_checkkeys(scan, itup, indnatts, dir, &continuescan) && alive)
				itemIndex = btl_scan_save_tuple(so, itemIndex, offnum, itup, dir);
			if (!continuescan)
			{
				so->currPos.moreLeft = false;
				break;
			}
		}

		so->currPos.firstItem = itemIndex;
		so->currPos.lastItem = MaxTIDsPerBTreePage - 1;
		so->currPos.itemIndex = MaxTIDsPerBTreePage - 1;
	}

	return so->currPos.firstItem <= so->currPos.lastItem;
}

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

	PredicateLockPage(rel, BufferGetBlockNumber(buf), scan->xs_snapshot);
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

	_bt_unlockbuf(rel, buf);
	if (IsMVCCSnapshot(scan->xs_snapshot) && RelationNeedsWAL(rel) &&
		!scan->xs_want_itup)
	{
		ReleaseBuffer(buf);
		so->currPos.buf = InvalidBuffer;
	}
	btl_scan_return_item(scan);
	return true;
}


/*
 * amgettuple
 */
bool
btlayout_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	bool		res;

	if (scan->parallel_scan != NULL)
		return btgettuple(scan, dir);

	scan->xs_recheck = false;

	/* Array keys start on the first call, when the direction is known */
	if (so->numArrayKeys && !BTScanPosIsValid(so->currPos))
	{
		if (so->numArrayKeys < 0)
			return false;		/* an array key can match nothing */
		_bt_start_array_keys(scan, dir);
	}

	do
	{
		if (!BTScanPosIsValid(so->currPos))
			res = btl_scan_first(scan, dir);
		else
			res = btl_scan_next(scan, dir);
	} while (!res && so->numArrayKeys && _bt_advance_array_keys(scan, dir));

	return res;
}

/*
 * amgetbitmap
 */
int64
btlayout_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	int64		ntids = 0;

	if (scan->parallel_scan != NULL)
		return btgetbitmap(scan, tbm);

	if (so->numArrayKeys)
	{
		if (so->numArrayKeys < 0)
			return 0;
		_bt_start_array_keys(scan, ForwardScanDirection);
	}

	do
	{
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
	} while (so->numArrayKeys && _bt_advance_array_keys(scan, ForwardScanDirection));

	return ntids;
}

#endif							/* PG_VERSION_NUM < 170000 */
