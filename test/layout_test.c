/*-------------------------------------------------------------------------
 *
 * layout_test.c
 *	  Unit test of the in-page layouts: each permutation and its descent
 *	  encode the same search tree.
 *
 * For every item count a page can hold and every layout (btorder with every
 * node size), check that
 *   - the permutation is one: every rank is in exactly one slot;
 *   - searching every key, and every value between and around the keys, by
 *     the layout's descent over slots returns the rank an ordinary binary
 *     search returns (the lower bound);
 *   - no search makes more comparisons than the tree's height allows, so a
 *     degenerate tree would show;
 *   - every slot a search compares was named before by the descent's
 *     prefetch hints (but in veb, which names only its top tree), none
 *     after a final hint lies outside its run, and that run's slots hold
 *     consecutive ranks.
 * Items are the odd numbers 2*rank+1, placed in slots by the permutation.
 *
 * Prints "layout_test: N checks, M failed" and exits non-zero on failure.
 *
 * test/layout_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>

/* MaxIndexTuplesPerPage: the page header, then the smallest item and its line pointer */
#define MAX_PAGE_ITEMS (int) \
	((BLCKSZ - 24) / (MAXALIGN(8 + 1) + 4))

typedef struct Probe
{
	const int  *slot_key;		/* key held by each slot */
	int			key;			/* search key */
	int			comparisons;
	bool		check_announced;	/* must compared slots be hinted first? */
} Probe;

/*
 * Prefetch hints: runs of slots a descent announces before it needs them.
 * Every slot compared must have been announced first, except in veb, which
 * announces only its top tree.
 */
static int	hint_n;
static bool hint_ok;
static bool announced[BTL_MAX_ITEMS];
static const uint16 *hint_rank;	/* the rank held by each slot */
static int	final_first;		/* the run of a final hint, or -1 */
static int	final_count;
static bool final_ok;

static void
probe_hint(void *ctx, int first, int count, bool final)
{
	int			s;

	if (first < 0 || count < 0)
		hint_ok = false;
	for (s = first; s < first + count && s < hint_n; s++)
		announced[s] = true;
	if (final)
	{
		final_first = first;
		final_count = count;
		for (s = first + 1; s < first + count && s < hint_n; s++)
			if (hint_rank[s] != hint_rank[s - 1] + 1)
				final_ok = false;
	}
}

static bool
probe_less(void *ctx, int slot)
{
	Probe	   *p = (Probe *) ctx;

	p->comparisons++;
	if (!announced[slot] && p->check_announced)
		hint_ok = false;
	if (final_first >= 0 &&
		(slot < final_first || slot >= final_first + final_count))
		final_ok = false;
	return p->slot_key[slot] < p->key;
}

static long checks;
static long failures;

static void
check(bool ok, const char *what, BtlLayout layout, int n, int node, int key)
{
	checks++;
	if (!ok)
	{
		failures++;
		if (failures <= 20)
			fprintf(stderr, "FAILED: %s: layout %s, n = %d, node = %d, key = %d\n",
					what, btl_layout_name(layout), n, node, key);
	}
}

static int
ceil_log2(int x)
{
	int			bits = 0;

	while ((1 << bits) < x)
		bits++;
	return bits;
}

/* Most comparisons a search may make in the layout's tree */
static int
max_comparisons(BtlLayout layout, int n, int node)
{
	switch (layout)
	{
		case BTL_LAYOUT_EYTZINGER:
		case BTL_LAYOUT_VEB:
			return ceil_log2(n + 1);
		case BTL_LAYOUT_BTORDER:
			{
				int			nnodes = (n + node - 1) / node;
				int			levels = 0;
				long		width = 1;
				long		covered = 0;

				while (covered < nnodes)
				{
					covered += width;
					width *= node + 1;
					levels++;
				}
				return levels * node;
			}
		case BTL_LAYOUT_BLOCKED:
			{
				int			g = btl_blocked_group_size(n);
				int			m = n / (g + 1);

				return ceil_log2(m + 1) + ceil_log2(g + 1);
			}
		case BTL_LAYOUT_NONE:
			break;
	}
	return 0;
}

static int
descend(BtlLayout layout, int n, int node, Probe *p)
{
	switch (layout)
	{
		case BTL_LAYOUT_EYTZINGER:
			return btl_descend_eytzinger(n, p, probe_less, probe_hint);
		case BTL_LAYOUT_VEB:
			return btl_descend_veb(n, btl_veb_tables(n), p, probe_less, probe_hint);
		case BTL_LAYOUT_BTORDER:
			return btl_descend_btorder(n, node, p, probe_less, probe_hint);
		case BTL_LAYOUT_BLOCKED:
			return btl_descend_blocked(n, p, probe_less, probe_hint);
		case BTL_LAYOUT_NONE:
			break;
	}
	return -2;
}

static void
test_layout(BtlLayout layout, int n, int node)
{
	uint16		slot_rank[BTL_MAX_ITEMS];
	int			slot_key[BTL_MAX_ITEMS];
	bool		seen[BTL_MAX_ITEMS] = {false};
	bool		permutation = true;
	int			limit = max_comparisons(layout, n, node);
	int			s;
	int			key;

	btl_layout_ranks(layout, n, node, slot_rank);
	for (s = 0; s < n; s++)
	{
		if (slot_rank[s] >= n || seen[slot_rank[s]])
			permutation = false;
		else
			seen[slot_rank[s]] = true;
		slot_key[s] = 2 * slot_rank[s] + 1;
	}
	check(permutation, "not a permutation", layout, n, node, -1);
	if (!permutation)
		return;

	for (key = 0; key <= 2 * n + 1; key++)
	{
		Probe		p = {slot_key, key, 0, layout != BTL_LAYOUT_VEB};
		int			slot;
		int			rank;

		hint_n = n;
		hint_rank = slot_rank;
		hint_ok = true;
		final_first = -1;
		final_ok = true;
		memset(announced, 0, sizeof(announced));
		slot = descend(layout, n, node, &p);
		rank = (slot < 0) ? n : slot_rank[slot];
		check(hint_ok, "slot compared before a prefetch hint named it", layout, n, node, key);
		check(final_ok, "slot compared outside the run of a final hint", layout, n, node, key);

		check(slot >= -1 && slot < n, "slot out of range", layout, n, node, key);
		check(rank == key / 2, "wrong lower bound", layout, n, node, key);
		check(p.comparisons <= limit, "too many comparisons", layout, n, node, key);
	}
}

int
main(void)
{
	int			n;
	int			node;

	for (n = 1; n <= MAX_PAGE_ITEMS; n++)
	{
		int			g = btl_blocked_group_size(n);

		/* the blocked layout's group size: the integer square root */
		checks++;
		if (g < 1 || (g > 1 && g * g > n) || (g + 1) * (g + 1) <= n)
		{
			printf("blocked group size of %d items: %d\n", n, g);
			failures++;
		}

		test_layout(BTL_LAYOUT_EYTZINGER, n, 0);
		test_layout(BTL_LAYOUT_VEB, n, 0);
		test_layout(BTL_LAYOUT_BLOCKED, n, 0);
		for (node = BTL_BTORDER_MIN_NODE; node <= BTL_BTORDER_MAX_NODE; node++)
			test_layout(BTL_LAYOUT_BTORDER, n, node);
	}

	printf("layout_test: item counts 1..%d, %ld checks, %ld failed\n",
		   MAX_PAGE_ITEMS, checks, failures);
	return failures == 0 ? 0 : 1;
}
