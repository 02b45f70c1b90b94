/*-------------------------------------------------------------------------
 *
 * walk.h
 *	  The page half of the layout-directed search: where a laid-out page's
 *	  slots are, and how the answer of a walk over them is confirmed
 *	  through the page's line pointers.
 *
 * The walk itself (layout.h) is plain arithmetic over slot numbers, and
 * trusts nothing: it compares the bytes it finds in the slots it visits.
 * What makes its answer nbtree's answer is the confirmation here, which
 * rests on two facts only:
 *
 *	1. line pointers are in key order (nbtree's invariant, under the page's
 *	   lock, whatever the bodies' placement: no layout moves a line pointer);
 *	2. every descent returns -1 or a slot whose item it compared and found
 *	   not below the key, and the walk's last_below is -1 or a slot whose
 *	   item it compared and found below the key (layout.h; search.c sets
 *	   last_below only when a comparison says "below").
 *
 * Confirming finds the line pointer that points at exactly the bytes of
 * each of those two slots (its offset the slot's address, its MAXALIGNed
 * length the slot's width), searching only the offsets the slot's rank
 * allows, moved up by at most the items inserted since the layout.  If
 * item p is below the key and item q is not, then by 1 the first item not
 * below the key is among p + 1 .. q: the caller searches just those
 * through their line pointers (none when q = p + 1).  If either line
 * pointer is not found, the page is searched the ordinary way.  Nothing
 * else about the page matters: the slot-to-rank table only says where to
 * start looking for a line pointer, the geometry only keeps every read
 * inside the page, and a page holding any placement at all (another
 * layout's, nbtree's order, a relayout that never finished, bodies moved
 * by deletions, any permutation) gets nbtree's answer or the fallback.
 * docs/design.md ("Why a stale layout cannot give a wrong answer") gives
 * the argument per layout; test/walk_test.c runs this code over every
 * item count and placement.
 *
 * Plain code over a page: no server function, so that the unit test runs
 * exactly what the search runs.
 *
 * src/walk.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_WALK_H
#define BTLAYOUT_WALK_H

#include "btlayout.h"

/*
 * Where the walk's n slots of width bytes are on a page with nitems
 * searchable items from offset first: slot 0 at *baseoff, right after the
 * item before the first searchable one (btl_slots_start()), or at pd_upper
 * on a page with no such item, the slots whole widths filling the tuple
 * area to its end, no more of them than the items.  False if the page
 * does not have that shape.  Every slot then lies inside the page.
 */
static inline bool
btl_walk_slots(Page page, OffsetNumber first, int nitems, int width,
			   int *baseoff, int *n)
{
	PageHeader	hdr = (PageHeader) page;
	int			base = btl_slots_start(page, first);

	if (base < 0)
		base = hdr->pd_upper;
	if (width <= 0 || base < hdr->pd_upper || base >= hdr->pd_special)
		return false;
	*n = (hdr->pd_special - base) / width;
	*baseoff = base;
	return base + *n * width == hdr->pd_special && *n <= nitems;
}

/* Does the line pointer of this offset point at this slot, with its width? */
static inline bool
btl_item_in_slot(Page page, OffsetNumber off, const char *slotaddr, int width)
{
	ItemId		iid = PageGetItemId(page, off);

	return (const char *) page + ItemIdGetOffset(iid) == slotaddr &&
		MAXALIGN(ItemIdGetLength(iid)) == width;
}

/*
 * How far the line pointer of the laid-out item of this rank (of n) most
 * likely moved up with the items inserted since the layout: in proportion
 * to its rank.  No division on a page without inserts.
 */
static inline int
btl_shift_guess(int inserted, int rank, int n)
{
	return inserted > 0 ? (inserted * rank + n / 2) / n : 0;
}

/*
 * The offset of the line pointer, among lo .. hi, that points at the slot
 * at slotaddr with width bytes; InvalidOffsetNumber if none does.  The
 * scan starts at guess and widens.
 */
static inline OffsetNumber
btl_find_slot_item(Page page, const char *slotaddr, int width, int lo, int hi,
				   int guess)
{
	if (lo > hi)
		return InvalidOffsetNumber;
	guess = Max(lo, Min(guess, hi));
	for (int d = 0; guess + d <= hi || guess - d >= lo; d++)
	{
		if (guess + d <= hi && btl_item_in_slot(page, guess + d, slotaddr, width))
			return guess + d;
		if (d > 0 && guess - d >= lo &&
			btl_item_in_slot(page, guess - d, slotaddr, width))
			return guess - d;
	}
	return InvalidOffsetNumber;
}

/*
 * Confirm a walk over the n slots at base (width bytes each; ranks[] the
 * rank the layout puts in each slot) of a page with nitems searchable
 * items from offset first: slot is what the descent returned, last_below
 * the last slot the walk found below the key (each -1 if none).  On
 * success the first item not below the key is among *lo .. *hi (*hi =
 * first + nitems standing for "none"), and the caller searches that range
 * through its line pointers.  False: search the page the ordinary way.
 */
static inline bool
btl_confirm_walk(Page page, OffsetNumber first, int nitems, const char *base,
				 int width, int n, const uint16 *ranks, int slot,
				 int last_below, OffsetNumber *lo, OffsetNumber *hi)
{
	int			inserted = nitems - n;

	*lo = first;
	*hi = first + nitems;
	if (slot >= 0)
	{
		int			rank = ranks[slot];

		*hi = btl_find_slot_item(page, base + slot * width, width,
								 first + rank, first + rank + inserted,
								 first + rank + btl_shift_guess(inserted, rank, n));
		if (*hi == InvalidOffsetNumber)
			return false;
	}
	if (last_below >= 0)
	{
		int			rank = ranks[last_below];
		OffsetNumber below;

		/* below *hi: an item below the key cannot follow one that is not */
		below = btl_find_slot_item(page, base + last_below * width, width,
								   first + rank,
								   Min(first + rank + inserted, *hi - 1),
								   first + rank + btl_shift_guess(inserted, rank, n));
		if (below == InvalidOffsetNumber)
			return false;
		*lo = below + 1;
	}
	return true;
}

#endif							/* BTLAYOUT_WALK_H */
