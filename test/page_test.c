/*-------------------------------------------------------------------------
 *
 * page_test.c
 *	  Unit test of page planning (src/page.c) on synthetic nbtree pages.
 *
 * Pages are built the way nbtree leaves them (bodies packed against the
 * special space in line pointer order), of every shape that stresses the
 * plan's bounds: one to twelve items, leaves with and without a high key
 * and internal pages, items of one width and of several, from 16 bytes to
 * the largest nbtree allows, each page full to within 0 to 64 bytes.  For
 * every layout, a plan that is accepted must
 *   - put every body inside pd_lower .. pd_special, its pd_upper at or
 *     above pd_lower, and the bodies exactly filling pd_upper .. pd_special
 *     (nbtree's space accounting: no gap, no overlap);
 *   - once applied, to a page between guard bytes, leave the guards, the
 *     header but pd_upper, the line pointers but their offsets and every
 *     item's bytes as they were, and match its own plan afterwards.
 * Damaged pages must be refused without a write outside the plan: more
 * line pointers than a page holds (small items, so that they fit), and
 * bodies that overlap.  A page with a gap in its tuple area (what the pad
 * of earlier builds left) is accepted and the gap closed.
 *
 * Prints "page_test: N checks, M failed" and exits non-zero on failure.
 *
 * test/page_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include <stdio.h>
#include <stdlib.h>

#define GUARD		4096		/* bytes checked on each side of the page */
#define GUARD_BYTE	0xA5

static long checks;
static long failures;

static void
check(bool ok, const char *what, const char *shape)
{
	checks++;
	if (!ok)
	{
		failures++;
		if (failures <= 20)
			printf("FAILED: %s (%s)\n", what, shape);
	}
}

/* A page and the guard bytes around it; the page is MAXALIGNed */
typedef struct GuardedPage
{
	char		before[GUARD];
	PGAlignedBlock page;
	char		after[GUARD];
} GuardedPage;

/* A plan and guard bytes after it, to see a write past its arrays */
typedef struct GuardedPlan
{
	BtlPagePlan plan;
	char		after[GUARD];
} GuardedPlan;

static bool
guard_intact(const char *bytes)
{
	for (int i = 0; i < GUARD; i++)
		if ((unsigned char) bytes[i] != GUARD_BYTE)
			return false;
	return true;
}

/*
 * Build an nbtree page with items of the given lengths (MAXALIGNed), the
 * first at the highest address; item i's bytes are a pattern of i.  Returns
 * false if they do not fit.
 */
static bool
build_page(Page page, bool leaf, bool rightmost, int n, const int *len)
{
	PageHeader	hdr = (PageHeader) page;
	BTPageOpaque opaque;
	int			upper = BLCKSZ - MAXALIGN(sizeof(BTPageOpaqueData));
	int			lower = SizeOfPageHeaderData + n * sizeof(ItemIdData);

	memset(page, 0, BLCKSZ);
	for (int i = 0; i < n; i++)
		upper -= len[i];
	if (upper < lower)
		return false;
	hdr->pd_lower = lower;
	hdr->pd_upper = upper;
	hdr->pd_special = BLCKSZ - MAXALIGN(sizeof(BTPageOpaqueData));
	PageSetPageSizeAndVersion(page, BLCKSZ, PG_PAGE_LAYOUT_VERSION);
	opaque = BTPageGetOpaque(page);
	opaque->btpo_flags = (leaf ? BTP_LEAF : 0);
	opaque->btpo_next = rightmost ? P_NONE : 99;

	upper = hdr->pd_special;
	for (int i = 0; i < n; i++)
	{
		ItemId		iid = PageGetItemId(page, i + 1);

		upper -= len[i];
		ItemIdSetNormal(iid, upper, len[i]);
		for (int b = 0; b < len[i]; b++)
			page[upper + b] = (char) (i * 31 + b);
	}
	return true;
}

/* Does every item still hold its pattern, wherever its body went? */
static bool
items_intact(Page page, int n, const int *len)
{
	for (int i = 0; i < n; i++)
	{
		ItemId		iid = PageGetItemId(page, i + 1);
		const char *body = (const char *) page + ItemIdGetOffset(iid);

		if (ItemIdGetLength(iid) != len[i])
			return false;
		for (int b = 0; b < len[i]; b++)
			if (body[b] != (char) (i * 31 + b))
				return false;
	}
	return true;
}

/* Sum of the MAXALIGNed lengths of a page's items */
static int
items_total(Page page)
{
	int			total = 0;

	for (OffsetNumber off = FirstOffsetNumber; off <= PageGetMaxOffsetNumber(page); off++)
		total += MAXALIGN(ItemIdGetLength(PageGetItemId(page, off)));
	return total;
}

/*
 * btl_page_plan_valid(), which checks the plans WAL records carry, accepts
 * a plan btl_page_plan() made, and refuses it changed to place two bodies
 * over each other, a body off its alignment or past the special space, or
 * the tuple area below pd_lower.
 */
static void
check_plan_validation(Page page, const BtlPagePlan *plan, const char *shape)
{
	static BtlPagePlan bad;
	PageHeader	hdr = (PageHeader) page;
	OffsetNumber last = plan->maxoff;

	check(btl_page_plan_valid(page, plan), "a plan made for the page is valid", shape);

	if (last >= 2)
	{
		bad = *plan;
		bad.offset[2] = bad.offset[1];
		check(!btl_page_plan_valid(page, &bad), "overlapping bodies are refused", shape);
	}
	bad = *plan;
	bad.offset[last] += 4;
	check(!btl_page_plan_valid(page, &bad), "a misaligned body is refused", shape);
	bad = *plan;
	bad.offset[last] = hdr->pd_special - MAXIMUM_ALIGNOF;
	check(!btl_page_plan_valid(page, &bad) ||
		  MAXALIGN(ItemIdGetLength(PageGetItemId(page, last))) <= MAXIMUM_ALIGNOF,
		  "a body past the special space is refused", shape);
	bad = *plan;
	bad.upper = hdr->pd_lower - 1;
	check(!btl_page_plan_valid(page, &bad), "a tuple area below pd_lower is refused", shape);
	bad = *plan;
	bad.maxoff = last - 1;
	check(!btl_page_plan_valid(page, &bad), "a plan for another item count is refused", shape);
}

/*
 * Plan the page built from these items in every layout; check the plans
 * and apply them.
 */
static void
check_shape(bool leaf, bool rightmost, int n, const int *len, const char *shape)
{
	static GuardedPage g;
	static GuardedPlan p;

	for (int layout = BTL_LAYOUT_NONE + 1; layout < BTL_NUM_LAYOUTS; layout++)
	{
		PageHeader	hdr = (PageHeader) g.page.data;
		PageHeaderData before;
		bool		ok;

		memset(g.before, GUARD_BYTE, GUARD);
		memset(g.after, GUARD_BYTE, GUARD);
		memset(p.after, GUARD_BYTE, GUARD);
		if (!build_page(g.page.data, leaf, rightmost, n, len))
			return;
		before = *hdr;

		ok = btl_page_plan(g.page.data, (BtlLayout) layout, &p.plan);
		check(guard_intact(p.after), "planning writes nothing past the plan", shape);
		check(ok, "a sound page is planned", shape);
		if (!ok)
			continue;

		/* Bounds, before anything is written */
		check(p.plan.upper >= hdr->pd_lower && p.plan.upper <= hdr->pd_special,
			  "the plan's pd_upper lies between pd_lower and pd_special", shape);
		check(p.plan.upper == hdr->pd_special - items_total(g.page.data),
			  "the plan's tuple area holds exactly the items", shape);
		ok = p.plan.upper >= hdr->pd_lower && p.plan.upper <= hdr->pd_special;
		for (int off = FirstOffsetNumber; off <= n; off++)
		{
			int			end = p.plan.offset[off] +
				MAXALIGN(ItemIdGetLength(PageGetItemId(g.page.data, off)));

			if (p.plan.offset[off] < p.plan.upper || end > hdr->pd_special)
				ok = false;
		}
		check(ok, "every planned body lies inside the plan's tuple area", shape);
		if (!ok)
			continue;			/* applying it would write outside the page */
		check_plan_validation(g.page.data, &p.plan, shape);

		btl_page_apply(g.page.data, &p.plan);
		check(guard_intact(g.before) && guard_intact(g.after),
			  "applying writes nothing outside the page", shape);
		check(hdr->pd_lower == before.pd_lower &&
			  hdr->pd_special == before.pd_special &&
			  hdr->pd_upper == p.plan.upper,
			  "the header is kept but pd_upper", shape);
		check(items_intact(g.page.data, n, len),
			  "every item keeps its bytes and length", shape);
		check(hdr->pd_special - hdr->pd_upper == items_total(g.page.data),
			  "the applied page's tuple area holds exactly the items", shape);
		check(btl_page_plan(g.page.data, (BtlLayout) layout, &p.plan) &&
			  btl_page_matches(g.page.data, &p.plan),
			  "the applied page matches its plan", shape);
	}
}

/*
 * Pages of few items full to within 0..64 bytes: the high key (or, on a
 * rightmost leaf, the first item) takes what the others leave.
 */
static void
check_nearly_full_pages(void)
{
	static const int widths[] = {16, 24, 40, 56, 64, 72, 104, 200, 264, 1000,
	1352, 2000, 2704, 2712};
	char		shape[128];
	int			len[16];

	for (int kind = 0; kind < 3; kind++)
	{
		bool		leaf = (kind != 2);
		bool		rightmost = (kind == 1);

		for (int n = 1; n <= 12; n++)
			for (int w = 0; w < lengthof(widths); w++)
				for (int freebytes = 0; freebytes <= 64; freebytes += 8)
				{
					int			room = BLCKSZ - MAXALIGN(sizeof(BTPageOpaqueData)) -
						SizeOfPageHeaderData - n * (int) sizeof(ItemIdData) - freebytes;

					for (int i = 1; i < n; i++)
						len[i] = widths[w];
					len[0] = (int) TYPEALIGN_DOWN(MAXIMUM_ALIGNOF,
												  room - (n - 1) * widths[w]);
					if (len[0] < 16 || len[0] > BLCKSZ / 2)
						continue;
					snprintf(shape, sizeof(shape),
							 "%s, %d items, width %d, first %d, %d bytes free",
							 kind == 0 ? "leaf" : kind == 1 ? "rightmost leaf" : "internal",
							 n, widths[w], len[0], freebytes);
					check_shape(leaf, rightmost, n, len, shape);
				}
	}
}

/* Pages of many items, of one width and of several */
static void
check_full_pages(void)
{
	char		shape[128];
	int			len[MaxIndexTuplesPerPage];

	for (int w = 16; w <= 64; w += 8)
		for (int mixed = 0; mixed <= 1; mixed++)
		{
			int			n = 0;
			int			room = BLCKSZ - MAXALIGN(sizeof(BTPageOpaqueData)) -
				SizeOfPageHeaderData;

			while (n < MaxIndexTuplesPerPage)
			{
				int			l = mixed ? w + 8 * (n % 3) : w;

				if (room < l + (int) sizeof(ItemIdData))
					break;
				len[n++] = l;
				room -= l + sizeof(ItemIdData);
			}
			snprintf(shape, sizeof(shape), "full page, %d items of width %d%s",
					 n, w, mixed ? " and more" : "");
			check_shape(true, false, n, len, shape);
			check_shape(false, false, n, len, shape);
		}
}

/* Damaged pages: refused, and nothing written past the plan */
static void
check_damaged_pages(void)
{
	static GuardedPage g;
	static GuardedPlan p;
	int			len[BLCKSZ / 12];
	int			n;
	int			lower;

	/* More line pointers than a page holds: 8-byte items do fit */
	n = (BLCKSZ - MAXALIGN(sizeof(BTPageOpaqueData)) - SizeOfPageHeaderData) / 12;
	for (int i = 0; i < n; i++)
		len[i] = 8;
	for (int layout = BTL_LAYOUT_NONE + 1; layout < BTL_NUM_LAYOUTS; layout++)
	{
		memset(p.after, GUARD_BYTE, GUARD);
		check(build_page(g.page.data, true, false, n, len),
			  "the page of too many line pointers is built", "damaged");
		check(!btl_page_plan(g.page.data, (BtlLayout) layout, &p.plan),
			  "a page of more line pointers than a page holds is refused",
			  "damaged");
		check(guard_intact(p.after), "planning writes nothing past the plan",
			  "damaged");
	}

	/*
	 * Two line pointers sharing a body, the lowest body left out of the
	 * tuple area: the bodies exceed it
	 */
	for (int i = 0; i < 10; i++)
		len[i] = 32;
	build_page(g.page.data, true, false, 10, len);
	*PageGetItemId(g.page.data, 10) = *PageGetItemId(g.page.data, 9);
	((PageHeader) g.page.data)->pd_upper += 32;
	for (int layout = BTL_LAYOUT_NONE + 1; layout < BTL_NUM_LAYOUTS; layout++)
		check(!btl_page_plan(g.page.data, (BtlLayout) layout, &p.plan),
			  "a page whose bodies overlap is refused", "damaged");

	/* A gap below the special space (the pad of earlier builds): closed */
	build_page(g.page.data, true, false, 10, len);
	lower = ((PageHeader) g.page.data)->pd_lower;
	for (OffsetNumber off = 10; off >= FirstOffsetNumber; off--)
	{
		ItemId		iid = PageGetItemId(g.page.data, off);

		memmove(g.page.data + ItemIdGetOffset(iid) - 40,
				g.page.data + ItemIdGetOffset(iid), 32);
		iid->lp_off -= 40;
	}
	((PageHeader) g.page.data)->pd_upper -= 40;
	check(((PageHeader) g.page.data)->pd_upper >= lower, "the gap page is built", "gap");
	check(btl_page_plan(g.page.data, BTL_LAYOUT_EYTZINGER, &p.plan) &&
		  p.plan.upper == ((PageHeader) g.page.data)->pd_special - 10 * 32,
		  "a page with a gap in its tuple area is planned without it", "gap");
}

int
main(void)
{
	check_nearly_full_pages();
	check_full_pages();
	check_damaged_pages();

	printf("page_test: %ld checks, %ld failed\n", checks, failures);
	return failures == 0 ? 0 : 1;
}
