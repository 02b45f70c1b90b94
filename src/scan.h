/*-------------------------------------------------------------------------
 *
 * scan.h
 *	  Between the positioning of index scans (scan.c), the same on every
 *	  version, and what differs by version: reading a leaf page into
 *	  nbtree's scan state and the amgettuple/amgetbitmap drivers
 *	  (scan_pg15.c for 15 and 16, scan_pg18.c for 18).
 *
 * src/scan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_SCAN_H
#define BTLAYOUT_SCAN_H

#include "access/nbtree.h"
#include "access/relscan.h"

/* scan.c */
extern void btl_scan_start_page(BTScanOpaque so, ScanDirection dir);
extern int	btl_scan_save_tuple(BTScanOpaque so, int itemIndex,
								OffsetNumber offnum, IndexTuple itup,
								ScanDirection dir);
extern void btl_scan_return_item(IndexScanDesc scan);
extern bool btl_scan_first(IndexScanDesc scan, ScanDirection dir);

/* scan_pgNN.c */
extern bool btl_scan_read_first_page(IndexScanDesc scan, ScanDirection dir,
									 Buffer buf, OffsetNumber offnum);

#endif							/* BTLAYOUT_SCAN_H */
