/*-------------------------------------------------------------------------
 *
 * walk_test.c
 *	  Unit test of the layout-directed search over pages whose tuple bodies
 *	  sit in any placement: every layout's descent (layout.h) plus the
 *	  slot geometry and the confirmation through line pointers (walk.h),
 *	  the code the search runs, against a plain binary search.
 *
 * For every item count 1 .. 408 (MaxIndexTuplesPerPage of an 8 kB page)
 * and item widths 8, 16, 24, 32 and 64 bytes (so btorder nodes of 8, 4
 * and 2 items), pages are built with their bodies in each placement a page
 * can have: each layout's (none, eytzinger, veb, btorder, blocked) and
 * three random permutations of the slots; each without inserts since and
 * with items inserted since (their bodies below the slots, their line
 * pointers among the others); each with a high key and as the rightmost
 * page, which has none (so the walk takes pd_upper for slot 0, and items
 * inserted since are walked as if they were slots).  On each page every
 * layout's search runs for every key below, between, equal to and above
 * the items, as a plain and as a nextkey search, and its answer (the walk,
 * confirmed, then the range it leaves searched through line pointers; or
 * the ordinary search where confirming fails) must equal the lower bound a
 * binary search over the line pointers gives.  Where the page holds the
 * search's own placement with nothing inserted since, the walk must also
 * be confirmed to a single item, so the test cannot pass by always falling
 * back.
 *
 * Test pages are 32 kB, so that 408 items of 64 bytes fit: walk.h reads
 * only the page header, line pointers and offsets, which 32 kB pages keep
 * in range.
 *
 * Prints "walk_test: N checks, M failed" and exits non-zero on failure.
 *
 * test/walk_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"
#include "walk.h"

#include <stdio.h>
#include <stdlib.h>

#define TEST_PAGE_SIZE	32768
#define SPECIAL_SIZE	MAXALIGN(sizeof(BTPageOpaqueData))
#define MAX_ITEMS		408
#define RANDOM_PLACEMENTS	3

static const int widths[] = {8, 16, 24, 32, 64};

static long checks;
static long failures;
static long confirmed;
static long fallbacks;

static void
check(bool ok, const char *what, const char *shape, int key, bool nextkey)
{
	checks++;
	if (!ok)
	{
		failures++;
		if (failures <= 20)
			printf("FAILED: %s (%s, key %d%s)\n", what, shape, key,
				   nextkey ? ", nextkey" : "");
	}
}

/* A search: the key, and what the walk found */
typedef struct Search
{
	const char *base;			/* slot 0 */
	int			width;
	int			key;
	bool		nextkey;
	int			last_below;		/* last slot found below the key */
} Search;

static int
key_at(const char *p)
{
	int			v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Below the key in the search's sense: < for a plain search, <= nextkey */
static inline bool
below(int item, int key, bool nextkey)
{
	return nextkey ? item <= key : item < key;
}

/* The walk's comparison, as search.c's: it remembers the last slot below */
static bool
search_less(void *ctx, int slot)
{
	Search	   *s = (Search *) ctx;

	if (below(key_at(s->base + slot * s->width), s->key, s->nextkey))
	{
		s->last_below = slot;
		return true;
	}
	return false;
}

static int
descend(BtlLayout layout, int n, int node, Search *s)
{
	switch (layout)
	{
		case BTL_LAYOUT_EYTZINGER:
			return btl_descend_eytzinger(n, s, search_less, NULL);
		case BTL_LAYOUT_VEB:
			return btl_descend_veb(n, btl_veb_tables(n), s, search_less, NULL);
		case BTL_LAYOUT_BTORDER:
			return btl_descend_btorder(n, node, s, search_less, NULL);
		default:
			return btl_descend_blocked(n, s, search_less, NULL);
	}
}

/* First offset of lo .. hi - 1 whose item is not below the key; else hi */
static OffsetNumber
lower_bound_lp(Page page, OffsetNumber lo, OffsetNumber hi, int key,
			   bool nextkey)
{
	while (hi > lo)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;

		if (below(key_at(PageGetItem(page, PageGetItemId(page, mid))), key,
				  nextkey))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Build a page of nitems data items of width bytes, keys 2, 4, 6, ... in
 * line pointer order, after a high key unless rightmost.  inserted[i] says
 * that data item i was inserted since the layout: its body goes below the
 * slots.  The others are laid out: slot s holds the laid-out item of rank
 * placement[s].  Returns the first data item's offset.
 */
static OffsetNumber
build_page(Page page, int width, int nitems, const bool *inserted,
		   const uint16 *placement, bool rightmost)
{
	PageHeader	hdr = (PageHeader) page;
	int			len = width - 3;	/* MAXALIGNs to width */
	int			special = TEST_PAGE_SIZE - SPECIAL_SIZE;
	OffsetNumber first = rightmost ? FirstOffsetNumber : P_FIRSTKEY;
	int			laid[MAX_ITEMS];	/* data item of each laid-out rank */
	int			n = 0;
	int			pos;
	int			s;

	memset(page, 0, TEST_PAGE_SIZE);
	for (int i = 0; i < nitems; i++)
		if (!inserted[i])
			laid[n++] = i;

	hdr->pd_special = special;
	hdr->pd_lower = SizeOfPageHeaderData +
		(first - 1 + nitems) * sizeof(ItemIdData);
	pos = special - n * width;
	for (s = 0; s < n; s++)
	{
		int			i = laid[placement[s]];
		ItemId		iid = PageGetItemId(page, first + i);
		int			key = 2 * i + 2;

		ItemIdSetNormal(iid, pos + s * width, len);
		memcpy((char *) page + pos + s * width, &key, sizeof(key));
	}
	if (!rightmost)
	{
		int			key = 2 * nitems + 2;

		pos -= width;
		ItemIdSetNormal(PageGetItemId(page, P_HIKEY), pos, len);
		memcpy((char *) page + pos, &key, sizeof(key));
	}
	for (int i = 0; i < nitems; i++)
	{
		int			key = 2 * i + 2;

		if (!inserted[i])
			continue;
		pos -= width;
		ItemIdSetNormal(PageGetItemId(page, first + i), pos, len);
		memcpy((char *) page + pos, &key, sizeof(key));
	}
	hdr->pd_upper = pos;
	return first;
}

/*
 * Search the page for every key, with every layout's walk, and compare
 * with a binary search through its line pointers.  own is the layout whose
 * placement the page holds with nothing inserted since (or -1).
 */
static void
search_page(Page page, OffsetNumber first, int nitems, int width, int own,
			const char *shape)
{
	int			baseoff;
	int			n;
	bool		walkable;
	uint16		ranks[MAX_ITEMS];

	walkable = btl_walk_slots(page, first, nitems, width, &baseoff, &n);
	check(walkable || own < 0, "page in a layout not walkable", shape, -1, false);
	if (!walkable)
		return;

	for (int layout = BTL_LAYOUT_EYTZINGER; layout <= BTL_LAYOUT_BLOCKED; layout++)
	{
		int			node = btl_btorder_node_items(width);

		btl_layout_ranks((BtlLayout) layout, n, node, ranks);
		for (int nk = 0; nk <= 1; nk++)
		{
			for (int key = 1; key <= 2 * nitems + 3; key++)
			{
				Search		s = {(const char *) page + baseoff, width, key, nk, -1};
				OffsetNumber expected = lower_bound_lp(page, first,
													   first + nitems, key, nk);
				OffsetNumber lo;
				OffsetNumber hi;
				OffsetNumber answer;
				int			slot = descend((BtlLayout) layout, n, node, &s);

				check(slot >= -1 && slot < n, "slot out of range", shape, key, nk);
				if (btl_confirm_walk(page, first, nitems, s.base, width, n,
									 ranks, slot, s.last_below, &lo, &hi))
				{
					confirmed++;
					check(first <= lo && lo <= hi && hi <= first + nitems,
						  "confirmed range out of the page's items",
						  shape, key, nk);
					answer = lower_bound_lp(page, lo, hi, key, nk);
					if (layout == own)
						check(lo == hi, "own layout confirmed to more than one item",
							  shape, key, nk);
				}
				else
				{
					fallbacks++;
					check(layout != own, "own layout not confirmed", shape, key, nk);
					answer = expected;
				}
				check(answer == expected, "wrong answer", shape, key, nk);
			}
		}
	}
}

static void
shuffle(uint16 *a, int n)
{
	for (int i = n - 1; i > 0; i--)
	{
		int			j = random() % (i + 1);
		uint16		t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

int
main(void)
{
	char	   *buffer = aligned_alloc(MAXIMUM_ALIGNOF, TEST_PAGE_SIZE);
	Page		page = (Page) buffer;

	srandom(20261126);
	for (int w = 0; w < lengthof(widths); w++)
	{
		int			width = widths[w];

		for (int n = 1; n <= MAX_ITEMS; n++)
		{
			for (int ins = 0; ins <= 1; ins++)
			{
				/* inserted since: about one item in five, where they fit */
				int			extra = ins ? 1 + n / 5 : 0;
				int			nitems;
				bool		inserted[MAX_ITEMS + MAX_ITEMS / 5 + 1] = {false};

				while (extra > 0 &&
					   SizeOfPageHeaderData + SPECIAL_SIZE +
					   (n + extra + 1) * (width + sizeof(ItemIdData)) > TEST_PAGE_SIZE)
					extra--;
				if (ins && extra == 0)
					continue;
				nitems = n + extra;
				/* which items came since: spread at random among the others */
				for (int e = 0; e < extra;)
				{
					int			i = random() % nitems;

					if (!inserted[i])
					{
						inserted[i] = true;
						e++;
					}
				}

				for (int p = 0; p < BTL_NUM_LAYOUTS + RANDOM_PLACEMENTS; p++)
				{
					uint16		placement[MAX_ITEMS];
					char		shape[128];
					int			own;

					/* none: nbtree's order, rank s in slot s */
					for (int s = 0; s < n; s++)
						placement[s] = s;
					if (p >= BTL_NUM_LAYOUTS)
						shuffle(placement, n);
					else if (p != BTL_LAYOUT_NONE)
						btl_layout_ranks((BtlLayout) p, n,
										 btl_btorder_node_items(width), placement);
					for (int rightmost = 0; rightmost <= 1; rightmost++)
					{
						OffsetNumber first;

						own = (p < BTL_NUM_LAYOUTS && p != BTL_LAYOUT_NONE &&
							   extra == 0) ? p : -1;
						snprintf(shape, sizeof(shape),
								 "%d items of %d bytes, %d inserted since, placement %s%s",
								 n, width, extra,
								 p < BTL_NUM_LAYOUTS ? btl_layout_name((BtlLayout) p) : "random",
								 rightmost ? ", rightmost" : "");
						first = build_page(page, width, nitems, inserted,
										   placement, rightmost);
						search_page(page, first, nitems, width, own, shape);
					}
				}
			}
		}
	}

	printf("walk_test: item counts 1..%d, widths 8..64, every layout over every placement: "
		   "%ld walks confirmed, %ld fell back; %ld checks, %ld failed\n",
		   MAX_ITEMS, confirmed, fallbacks, checks, failures);
	free(buffer);
	return failures == 0 ? 0 : 1;
}
