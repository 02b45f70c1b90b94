/*-------------------------------------------------------------------------
 *
 * layout.h
 *	  In-page layouts: the search trees whose order tuple bodies are placed
 *	  in, and the descents that walk them by slot arithmetic.
 *
 * A page's searchable items (its data items; on internal pages without the
 * minus-infinity first item) are numbered by rank, 0 .. n-1 in key order,
 * which is line pointer order.  A layout places the item of each rank in a
 * slot, 0 .. n-1, and slots are laid out contiguously in slot order, so that
 * on a page whose items have one width w, slot s is at base + s * w.
 *
 * Each layout is defined by one search tree over the slots, and everything
 * about it derives from that tree: the permutation (the rank held by each
 * slot, an in-order walk of the tree) and the descent (the walk of the tree
 * from the root that finds the first item not below a search key).  The
 * descents take the comparison as a function argument and are inlined into
 * their callers, so the unit test (test/layout_test.c, integers) and the
 * page search (comparing index tuples) run the very same code.
 *
 * Nothing here depends on pages or on the server: this file and layout.c
 * are plain C over slot numbers.
 *
 * src/layout.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_LAYOUT_H
#define BTLAYOUT_LAYOUT_H

#include "c.h"

#include <math.h>

#include "port/pg_bitutils.h"

typedef enum BtlLayout
{
	BTL_LAYOUT_NONE = 0,		/* what nbtree writes; never rewritten */
	BTL_LAYOUT_EYTZINGER,		/* complete binary tree, breadth-first */
	BTL_LAYOUT_VEB,				/* van Emde Boas order of a binary tree */
	BTL_LAYOUT_BTORDER,			/* (B+1)-ary tree of B-item nodes, breadth-first */
	BTL_LAYOUT_BLOCKED			/* sqrt(n) separators, then their groups */
} BtlLayout;

#define BTL_NUM_LAYOUTS		5

/* The largest item count a page can have (MaxIndexTuplesPerPage for 8 kB) */
#define BTL_MAX_ITEMS		2048

/*
 * btorder nodes hold as many items as fit in this many bytes, at least
 * BTL_BTORDER_MIN_NODE and at most BTL_BTORDER_MAX_NODE items.
 */
#define BTL_BTORDER_NODE_BYTES	64
#define BTL_BTORDER_MIN_NODE	2
#define BTL_BTORDER_MAX_NODE	16

/* Height of the complete binary tree with at least n nodes */
#define BTL_VEB_MAX_HEIGHT	16

/*
 * Per-height tables of the van Emde Boas order of a complete binary tree.
 * For every depth d >= 1, the node at depth d is the root of a bottom tree
 * in exactly one recursive split: the split's root is at depth root[d], its
 * top tree has top[d] nodes, each of its bottom trees bottom[d] nodes.  So a
 * node's position is its ancestor's at depth root[d], plus top[d], plus
 * bottom[d] for every bottom tree to its left (the path bits below root[d]).
 */
typedef struct BtlVebTables
{
	int			height;
	uint8		root[BTL_VEB_MAX_HEIGHT];
	uint16		top[BTL_VEB_MAX_HEIGHT];
	uint16		bottom[BTL_VEB_MAX_HEIGHT];
} BtlVebTables;

extern const char *btl_layout_name(BtlLayout layout);
extern int	btl_btorder_node_items(int width);
extern const BtlVebTables *btl_veb_tables(int n);
extern void btl_layout_ranks(BtlLayout layout, int n, int node,
							 uint16 *slot_rank);

/*
 * The descents.  less(ctx, slot) says whether the item in that slot sorts
 * strictly before the search key.  Each returns the slot of the first item,
 * in rank order, for which less() is false, or -1 if there is none: the
 * lower bound, which the caller turns into a rank with btl_layout_ranks().
 *
 * That is so when the slots hold the layout's placement.  A page's slots
 * can hold anything (another layout's placement, nbtree's order, bodies
 * moved by deletions), so every descent also keeps, whatever the slots
 * hold, the one promise the search's confirmation rests on (search.c,
 * btl_confirm_walk() in btlayout.h): the slot it returns is -1 or a slot
 * it called less() on and got false for.  It never infers an answer from
 * what the placement would imply of slots it did not compare as it found
 * them.  test/layout_test.c checks that promise over every other
 * placement and random permutations.
 */
typedef bool (*BtlLessFn) (void *ctx, int slot);

/*
 * Each descent also says, through hint(ctx, first, count, final), which run
 * of slots it will need soon, so that a caller can prefetch them; count may
 * reach past n.  final says that the descent compares no slot outside this
 * run from now on, and that the run's slots hold consecutive ranks in
 * order (blocked's group), so a caller can also prefetch what it will read
 * about those ranks once the answer is known.  hint may be NULL.
 */
typedef void (*BtlHintFn) (void *ctx, int first, int count, bool final);

/* How many levels ahead the binary layouts announce their descendants */
#define BTL_PREFETCH_LEVELS	3

/*
 * Eytzinger: slot i has children 2i+1 and 2i+2.  Walk to a leaf, then the
 * answer is the last node where the walk went left: strip the trailing
 * right-turns (one bits) and the left turn before them from the 1-based
 * index.
 */
static pg_attribute_always_inline int
btl_descend_eytzinger(int n, void *ctx, BtlLessFn less, BtlHintFn hint)
{
	uint32		i = 0;

	/* The top levels first, then the 2^k descendants k levels down */
	if (hint)
		hint(ctx, 0, (1 << BTL_PREFETCH_LEVELS) - 1, false);
	while (i < (uint32) n)
	{
		if (hint)
			hint(ctx, (int) (((i + 1) << BTL_PREFETCH_LEVELS) - 1),
				 1 << BTL_PREFETCH_LEVELS, false);
		i = 2 * i + 1 + (less(ctx, (int) i) ? 1 : 0);
	}

	i += 1;
	i >>= pg_rightmost_one_pos32(~i) + 1;
	return (int) i - 1;
}

/*
 * van Emde Boas: the tree is the complete binary tree of the smallest
 * height with room for n nodes, of which the first n in van Emde Boas order
 * are present (parents come before children in that order, so they form a
 * tree).  Walk it by breadth-first index k, computing each node's position
 * from the tables; a position past n is an absent node.
 */
static pg_attribute_always_inline int
btl_descend_veb(int n, const BtlVebTables *t, void *ctx, BtlLessFn less,
				BtlHintFn hint)
{
	uint16		pos[BTL_VEB_MAX_HEIGHT];
	uint32		k = 1;
	int			d = 0;
	int			answer = -1;

	/* The top tree of the first split is contiguous from slot 0 */
	if (hint && t->height > 1)
		hint(ctx, 0, t->top[t->height - t->height / 2], false);
	pos[0] = 0;
	for (;;)
	{
		int			slot = pos[d];

		if (slot >= n)
			break;
		if (less(ctx, slot))
			k = 2 * k + 1;
		else
		{
			answer = slot;
			k = 2 * k;
		}
		if (++d >= t->height)
			break;
		pos[d] = pos[t->root[d]] + t->top[d] +
			(k & ((1u << (d - t->root[d])) - 1)) * t->bottom[d];
	}
	return answer;
}

/*
 * btorder: node j holds slots j*B .. j*B+B-1 in key order and has children
 * j*(B+1)+1+c, c = 0..B, between its items.  Compare all of the node's
 * items (no branch on each), take the first one not below the key (in a
 * sorted node, the count of those below), remember that one, and go down
 * between it and the one before.  Not the count itself: in a node whose
 * items are not sorted (a page out of this layout) the slot at the count
 * can hold an item below the key, which the descent must never return.
 */
static pg_attribute_always_inline int
btl_descend_btorder(int n, int node, void *ctx, BtlLessFn less,
					BtlHintFn hint)
{
	uint32		nnodes = (n + node - 1) / node;
	uint32		j = 0;
	int			answer = -1;

	if (hint)
		hint(ctx, 0, node, false);
	while (j < nnodes)
	{
		int			first = (int) j * node;
		int			count = Min(node, n - first);
		uint32		below_mask = 0;
		int			below;
		int			c;

		/* All children, one node ahead, while this node is compared */
		if (hint)
			hint(ctx, (int) (j * (node + 1) + 1) * node, (node + 1) * node, false);

		for (c = 0; c < count; c++)
			below_mask |= (less(ctx, first + c) ? 1u : 0u) << c;
		/* the first item not below: count < 32, so ~below_mask is not 0 */
		below = pg_rightmost_one_pos32(~below_mask);
		if (below < count)
			answer = first + below;
		j = j * (node + 1) + 1 + below;
	}
	return answer;
}

/* Lower bound among count contiguous slots from first: an index 0..count */
static pg_attribute_always_inline int
btl_lower_bound_run(int first, int count, void *ctx, BtlLessFn less)
{
	int			lo = 0;

	while (count > 0)
	{
		int			half = count / 2;

		if (less(ctx, first + lo + half))
		{
			lo += half + 1;
			count -= half + 1;
		}
		else
			count = half;
	}
	return lo;
}

/*
 * Items per group of the blocked layout: the largest g with g * g <= n, at
 * least 1.  Every visit of a blocked page needs it, so it is one square
 * root rather than a loop: the square root is correctly rounded, so for
 * the item counts of a page (far below 2^52) its integer part is exact.
 */
static inline int
btl_blocked_group_size(int n)
{
	return Max(1, (int) sqrt((double) n));
}

/*
 * blocked: with groups of g items, the separators are the items of rank
 * (j+1)*(g+1)-1, in slots 0..m-1, and group j (the g items before separator
 * j; the last group holds what is left) follows in slots m+j*g onwards.
 * Search the separators, then the one group below the separator found.
 */
static pg_attribute_always_inline int
btl_descend_blocked(int n, void *ctx, BtlLessFn less, BtlHintFn hint)
{
	int			g = btl_blocked_group_size(n);
	int			m = n / (g + 1);
	int			j;
	int			first;
	int			count;
	int			i;

	if (hint)
		hint(ctx, 0, m, false);
	j = btl_lower_bound_run(0, m, ctx, less);
	first = m + j * g;
	count = (j < m) ? g : n - m - m * g;
	if (hint)
		hint(ctx, first, count, true);
	i = btl_lower_bound_run(first, count, ctx, less);

	if (i < count)
		return first + i;
	return (j < m) ? j : -1;
}

#endif							/* BTLAYOUT_LAYOUT_H */
