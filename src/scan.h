/*-------------------------------------------------------------------------
 *
 * scan.h
 *	  Between the positioning of index scans (scan.c), the same on every
 *	  version, and what differs by version: reading a leaf page into
 *	  nbtree's scan state and the amgettuple/amgetbitmap drivers
 *	  (scan_pg15.c for 15 and 16, scan_pg18.c for 17 and 18).
 *
 * src/scan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_SCAN_H
#define BTLAYOUT_SCAN_H

#include "access/nbtree.h"
#include "access/relscan.h"

/*
 * Reading a page in key order visits its items in line-pointer order, and
 * on a laid-out page their bodies are scattered over the tuple area, each
 * one's cache line a miss of its own.  So the first page of a scan
 * (read by our code; nbtree's own _bt_readpage reads the pages after it)
 * prefetches the body BTL_READ_AHEAD items ahead of the one it checks.
 * Only an address is computed from the line pointer, which lies inside the
 * line pointer array (off between minoff and maxoff), with its offset as
 * it is (an unused or dead one included, which PageGetItem() would refuse
 * in an assertion-enabled build); a prefetch never faults, whatever the
 * line pointer holds.
 */
#define BTL_READ_AHEAD	8

static inline void
btl_read_ahead(Page page, int off, OffsetNumber minoff, OffsetNumber maxoff)
{
	if (off >= minoff && off <= maxoff)
		__builtin_prefetch((char *) page +
						   ItemIdGetOffset(PageGetItemId(page, off)), 0, 3);
}

/* Start the read-ahead at offnum, step +1 or -1 */
static inline void
btl_read_ahead_start(Page page, int offnum, int step, OffsetNumber minoff,
					 OffsetNumber maxoff)
{
	for (int i = 0; i < BTL_READ_AHEAD; i++)
		btl_read_ahead(page, offnum + i * step, minoff, maxoff);
}

/* Does the scan read ahead: a laid-out index with prefetching on */
#define btl_scan_reads_ahead(rel) \
	(btl_prefetch && BtlGetPrefetch(rel) && BtlGetLayout(rel) != BTL_LAYOUT_NONE)

/* scan.c */
extern void btl_scan_start_page(BTScanOpaque so, ScanDirection dir);
extern int	btl_scan_save_posting(BTScanOpaque so, int itemIndex,
								  OffsetNumber offnum, IndexTuple itup,
								  ScanDirection dir);
extern void btl_scan_return_item(IndexScanDesc scan);
extern bool btl_scan_next(IndexScanDesc scan, ScanDirection dir);
extern bool btl_scan_first(IndexScanDesc scan, ScanDirection dir);

/*
 * Save the heap TIDs of a matching tuple of the page into so->currPos, from
 * itemIndex upwards (forward) or from itemIndex - 1 downwards (backward),
 * with a copy of the tuple for an index-only scan; return the next
 * itemIndex.  A plain tuple, what most pages hold, is saved here, inline in
 * the page readers' loops; posting lists by btl_scan_save_posting().
 */
static inline int
btl_scan_save_tuple(BTScanOpaque so, int itemIndex, OffsetNumber offnum,
					IndexTuple itup, ScanDirection dir)
{
	BTScanPosItem *item;

	if (BTreeTupleIsPosting(itup))
		return btl_scan_save_posting(so, itemIndex, offnum, itup, dir);

	if (ScanDirectionIsBackward(dir))
		itemIndex--;
	item = &so->currPos.items[itemIndex];
	item->heapTid = itup->t_tid;
	item->indexOffset = offnum;
	if (so->currTuples != NULL)
	{
		Size		size = IndexTupleSize(itup);

		item->tupleOffset = so->currPos.nextTupleOffset;
		memcpy(so->currTuples + so->currPos.nextTupleOffset, itup, size);
		so->currPos.nextTupleOffset += MAXALIGN(size);
	}
	return ScanDirectionIsForward(dir) ? itemIndex + 1 : itemIndex;
}

/* scan_pgNN.c */
extern bool btl_scan_read_first_page(IndexScanDesc scan, ScanDirection dir,
									 Buffer buf, OffsetNumber offnum);

#endif							/* BTLAYOUT_SCAN_H */
