/*-------------------------------------------------------------------------
 *
 * page.c
 *	  Placing the tuple bodies of one nbtree page in a layout.
 *
 * A page's plan says where each tuple body goes; applying it moves the
 * bodies and rewrites the line pointers' offsets, nothing else: the line
 * pointers keep their order, lengths and flags, the header its pd_lower and
 * the special space its contents.  The bodies are placed contiguously, from
 * low addresses to high:
 *
 *		[high key] [minus infinity] [slot 0] [slot 1] ... [slot n-1]
 *
 * The high key (absent on the rightmost page of a level) is read at every
 * visit of the page, before the binary search, so it sits right before the
 * search tree's root.  The minus-infinity item of an internal page takes no
 * part in the search and is next.  Then the searchable items in the slots
 * the layout gives their ranks (layout.h), each one MAXALIGNed after the
 * one before, up to pd_special.  The page stays an ordinary nbtree page:
 * free space is pd_lower .. pd_upper, the tuples fill pd_upper ..
 * pd_special without gaps, as after nbtree's own compaction.
 *
 * Whether a page is in a layout is answered by planning it and comparing
 * the plan with the page: the same function decides both, so VACUUM and
 * btlayout_relayout() never rewrite a page already laid out, and
 * btlayout_stats() counts what they would leave alone.
 *
 * Planning reads only the page header, special space and line pointers, and
 * refuses any page whose line pointers do not describe tuples inside the
 * tuple area, or that has more of them than a page can hold (so a corrupt
 * page is left as it is, for btlayout_check() to report).  All its bounds
 * are computed in signed arithmetic: a plan never places a body outside
 * pd_lower .. pd_special, whatever the header says.
 *
 * src/page.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "storage/bufpage.h"

/*
 * Plan the page in the layout.  Returns false, leaving *plan undefined, if
 * the page is not a live nbtree page with sane line pointers.
 */
bool
btl_page_plan(Page page, BtlLayout layout, BtlPagePlan *plan)
{
	PageHeader	hdr = (PageHeader) page;
	BTPageOpaque opaque;
	OffsetNumber maxoff;
	OffsetNumber off;
	uint16		slot_rank[MaxIndexTuplesPerPage];
	int			total = 0;
	int			pos;
	int			s;

	Assert(layout != BTL_LAYOUT_NONE);

	/* A live btree page, not the metapage, with a sane header */
	if (PageIsNew(page) ||
		hdr->pd_special != BLCKSZ - MAXALIGN(sizeof(BTPageOpaqueData)) ||
		hdr->pd_lower < SizeOfPageHeaderData ||
		hdr->pd_lower > hdr->pd_upper || hdr->pd_upper > hdr->pd_special)
		return false;
	opaque = BTPageGetOpaque(page);
	if (P_ISMETA(opaque) || P_IGNORE(opaque))
		return false;

	/* No more items than the plan has room for (a damaged pd_lower) */
	maxoff = PageGetMaxOffsetNumber(page);
	if (maxoff > MaxIndexTuplesPerPage)
		return false;
	plan->maxoff = maxoff;
	plan->firstsearch = P_FIRSTDATAKEY(opaque) + (P_ISLEAF(opaque) ? 0 : 1);
	plan->nsearch = Max((int) maxoff - (int) plan->firstsearch + 1, 0);
	plan->width = -1;

	/* Every line pointer holds a tuple inside the tuple area */
	for (off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		Size		len = ItemIdGetLength(iid);

		if (!ItemIdHasStorage(iid) || len < sizeof(IndexTupleData) ||
			ItemIdGetOffset(iid) < hdr->pd_upper ||
			ItemIdGetOffset(iid) + len > hdr->pd_special)
			return false;
		total += (int) MAXALIGN(len);
		if (off < plan->firstsearch)
			continue;
		if (plan->width == -1)
			plan->width = (int) MAXALIGN(len);
		else if (plan->width != (int) MAXALIGN(len))
			plan->width = 0;
	}
	if (plan->width == -1)
		plan->width = 0;

	/*
	 * The bodies, packed against the special space, take no more room than
	 * the tuple area has: more would mean bodies that overlap (corruption),
	 * and it keeps the plan's pd_upper at or above the page's, so above
	 * pd_lower.  Less is a page with a gap in its tuple area, which a layout
	 * of earlier builds of btlayout could leave: the plan closes it.
	 */
	if (total > (int) hdr->pd_special - (int) hdr->pd_upper)
		return false;
	plan->upper = (LocationIndex) ((int) hdr->pd_special - total);

	/* High key and minus infinity first, in offset order, then the slots */
	pos = plan->upper;
	for (off = FirstOffsetNumber; off < plan->firstsearch && off <= maxoff; off++)
	{
		plan->offset[off] = pos;
		pos += MAXALIGN(ItemIdGetLength(PageGetItemId(page, off)));
	}

	plan->node = btl_btorder_node_items(plan->width > 0 ? plan->width :
										(int) MAXALIGN(sizeof(IndexTupleData) + 1));
	btl_layout_ranks(layout, plan->nsearch, plan->node, slot_rank);
	for (s = 0; s < plan->nsearch; s++)
	{
		off = plan->firstsearch + slot_rank[s];
		plan->offset[off] = pos;
		pos += MAXALIGN(ItemIdGetLength(PageGetItemId(page, off)));
	}
	Assert(pos == hdr->pd_special);

	return true;
}

/* Is the page exactly as its plan would leave it? */
bool
btl_page_matches(Page page, const BtlPagePlan *plan)
{
	OffsetNumber off;

	if (((PageHeader) page)->pd_upper != plan->upper)
		return false;
	for (off = FirstOffsetNumber; off <= plan->maxoff; off++)
		if (ItemIdGetOffset(PageGetItemId(page, off)) != plan->offset[off])
			return false;
	return true;
}

/*
 * Is a plan that came from elsewhere (a WAL record) one that can be applied
 * to the page: one offset per line pointer, each body then inside the tuple
 * area the plan gives (pd_upper .. pd_special, above pd_lower), aligned,
 * and no two overlapping?  The page's own line pointers must describe
 * bodies inside its tuple area, as btl_page_plan() requires.  What makes
 * btl_page_apply() write only inside the page.
 */
bool
btl_page_plan_valid(Page page, const BtlPagePlan *plan)
{
	PageHeader	hdr = (PageHeader) page;
	uint8		used[BLCKSZ / MAXIMUM_ALIGNOF / 8];
	OffsetNumber off;

	if (plan->maxoff != PageGetMaxOffsetNumber(page) ||
		plan->maxoff > MaxIndexTuplesPerPage ||
		hdr->pd_lower > hdr->pd_upper || hdr->pd_upper > hdr->pd_special ||
		hdr->pd_special > BLCKSZ ||
		plan->upper < hdr->pd_lower || plan->upper > hdr->pd_special)
		return false;
	memset(used, 0, sizeof(used));
	for (off = FirstOffsetNumber; off <= plan->maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		int			len = (int) ItemIdGetLength(iid);
		int			to = plan->offset[off];

		if (!ItemIdHasStorage(iid) || len < (int) sizeof(IndexTupleData) ||
			ItemIdGetOffset(iid) < hdr->pd_upper ||
			ItemIdGetOffset(iid) + len > hdr->pd_special ||
			to % MAXIMUM_ALIGNOF != 0 || to < plan->upper ||
			to + (int) MAXALIGN(len) > hdr->pd_special)
			return false;
		for (int unit = to / MAXIMUM_ALIGNOF;
			 unit < (to + (int) MAXALIGN(len)) / MAXIMUM_ALIGNOF; unit++)
		{
			if (used[unit / 8] & (1 << (unit % 8)))
				return false;
			used[unit / 8] |= 1 << (unit % 8);
		}
	}
	return true;
}

/*
 * Move the tuple bodies where the plan says.  No allocation and no error:
 * this runs inside the critical section of a WAL-logged rewrite.  The
 * space between line pointers and tuples is zeroed, so that a page and its
 * full-page image are the same bytes.
 */
void
btl_page_apply(Page page, const BtlPagePlan *plan)
{
	PageHeader	hdr = (PageHeader) page;
	PGAlignedBlock copy;
	OffsetNumber off;

	memcpy(copy.data, page, BLCKSZ);
	memset((char *) page + hdr->pd_lower, 0, hdr->pd_special - hdr->pd_lower);

	for (off = FirstOffsetNumber; off <= plan->maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);

		memcpy((char *) page + plan->offset[off],
			   copy.data + ItemIdGetOffset(iid), ItemIdGetLength(iid));
		iid->lp_off = plan->offset[off];
	}
	hdr->pd_upper = plan->upper;
}

/*
 * Put the page in the layout if it is not already.  Returns whether it
 * changed.  For pages outside shared buffers (the build).
 */
bool
btl_page_layout(Page page, BtlLayout layout)
{
	BtlPagePlan plan;

	if (layout == BTL_LAYOUT_NONE || !btl_page_plan(page, layout, &plan) ||
		btl_page_matches(page, &plan))
		return false;
	btl_page_apply(page, &plan);
	return true;
}

/*
 * How a page stands against the layout: see BtlPageState.  A page is laid
 * out with inserts since when the items whose bodies lie past its high key
 * and minus-infinity item fill the rest of the tuple area in one width, and
 * are, in line pointer order, the layout of their own count (the page as a
 * relayout left it); the others, those inserted since, lie below them.
 * That is what the search can walk (search.c).  Pages without a high key
 * (the rightmost of a level) do not say where their laid-out items begin,
 * and are laid out or out of layout.  *inserted is set for every state but
 * BTL_PAGE_UNPLANNABLE: the items inserted since the layout, or, out of
 * layout, all of them.
 */
BtlPageState
btl_page_state(Page page, BtlLayout layout, BtlPagePlan *plan, int *inserted)
{
	PageHeader	hdr = (PageHeader) page;
	uint16		slot_rank[MaxIndexTuplesPerPage];
	int			base;
	int			width = 0;
	int			n = 0;
	int			rank = 0;
	OffsetNumber off;

	if (!btl_page_plan(page, layout, plan))
		return BTL_PAGE_UNPLANNABLE;
	*inserted = 0;
	if (btl_page_matches(page, plan))
		return BTL_PAGE_LAID_OUT;
	*inserted = plan->nsearch;
	base = btl_slots_start(page, plan->firstsearch);
	if (base < 0)
		return BTL_PAGE_OUT_OF_LAYOUT;

	/* The laid-out items: their width and count */
	for (off = plan->firstsearch; off <= plan->maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);

		if (ItemIdGetOffset(iid) < base)
			continue;
		if (width == 0)
			width = MAXALIGN(ItemIdGetLength(iid));
		else if (width != MAXALIGN(ItemIdGetLength(iid)))
			return BTL_PAGE_OUT_OF_LAYOUT;
		n++;
	}
	if (n == 0 || base + n * width != hdr->pd_special)
		return BTL_PAGE_OUT_OF_LAYOUT;

	/* Each in the slot the layout of n items gives its rank among them */
	btl_layout_ranks(layout, n, btl_btorder_node_items(width), slot_rank);
	for (off = plan->firstsearch; off <= plan->maxoff; off++)
	{
		int			start = ItemIdGetOffset(PageGetItemId(page, off));

		if (start < base)
			continue;
		if ((start - base) % width != 0 ||
			slot_rank[(start - base) / width] != rank)
			return BTL_PAGE_OUT_OF_LAYOUT;
		rank++;
	}
	*inserted = plan->nsearch - n;
	return BTL_PAGE_INSERTED;
}
