/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  Permutations of the in-page layouts: which rank each slot holds.
 *
 * Each permutation is an in-order walk of the layout's search tree (see
 * layout.h), the same tree the layout's descent walks, so that the n-th
 * slot the walk reaches holds the item of rank n.  They are pure functions
 * of the item count (and, for btorder, the node size), checked for every
 * count a page can have by test/layout_test.c.
 *
 * src/layout.c
 *
 *-------------------------------------------------------------------------
 */
#include "layout.h"

static const char *const layout_names[BTL_NUM_LAYOUTS] = {
	[BTL_LAYOUT_NONE] = "none",
	[BTL_LAYOUT_EYTZINGER] = "eytzinger",
	[BTL_LAYOUT_VEB] = "veb",
	[BTL_LAYOUT_BTORDER] = "btorder",
	[BTL_LAYOUT_BLOCKED] = "blocked",
};

/* van Emde Boas tables, one per tree height, filled on first use */
static BtlVebTables veb_tables[BTL_VEB_MAX_HEIGHT + 1];

const char *
btl_layout_name(BtlLayout layout)
{
	return layout_names[layout];
}

/* Items per btorder node for items of the given width */
int
btl_btorder_node_items(int width)
{
	int			items = BTL_BTORDER_NODE_BYTES / Max(width, 1);

	return Min(Max(items, BTL_BTORDER_MIN_NODE), BTL_BTORDER_MAX_NODE);
}

/*
 * Record, for the recursive split of the subtree rooted at depth d0 with
 * the given height, where its bottom trees' roots are; then split the top
 * and the bottom trees in turn.  The top tree takes the larger half.
 */
static void
veb_split(BtlVebTables *t, int d0, int height)
{
	int			bottom_height = height / 2;
	int			top_height = height - bottom_height;
	int			d = d0 + top_height;

	if (height <= 1)
		return;
	t->root[d] = d0;
	t->top[d] = (1 << top_height) - 1;
	t->bottom[d] = (1 << bottom_height) - 1;
	veb_split(t, d0, top_height);
	veb_split(t, d, bottom_height);
}

const BtlVebTables *
btl_veb_tables(int n)
{
	int			height = pg_leftmost_one_pos32((uint32) n) + 1;
	BtlVebTables *t = &veb_tables[height];

	if (t->height == 0)
	{
		veb_split(t, 0, height);
		t->height = height;
	}
	return t;
}

/* In-order walk of the Eytzinger tree from slot i */
static void
ranks_eytzinger(int n, int i, uint16 *slot_rank, int *next)
{
	if (i >= n)
		return;
	ranks_eytzinger(n, 2 * i + 1, slot_rank, next);
	slot_rank[i] = (*next)++;
	ranks_eytzinger(n, 2 * i + 2, slot_rank, next);
}

/*
 * In-order walk of the van Emde Boas tree from the node with breadth-first
 * index k at depth d, whose ancestors' positions are in pos[0..d-1].
 */
static void
ranks_veb(int n, const BtlVebTables *t, uint32 k, int d, uint16 *pos,
		  uint16 *slot_rank, int *next)
{
	if (d >= t->height)
		return;
	pos[d] = (d == 0) ? 0 :
		pos[t->root[d]] + t->top[d] +
		(k & ((1u << (d - t->root[d])) - 1)) * t->bottom[d];
	if (pos[d] >= n)
		return;
	ranks_veb(n, t, 2 * k, d + 1, pos, slot_rank, next);
	slot_rank[pos[d]] = (*next)++;
	ranks_veb(n, t, 2 * k + 1, d + 1, pos, slot_rank, next);
}

/* In-order walk of the btorder tree from node j */
static void
ranks_btorder(int n, int node, int j, uint16 *slot_rank, int *next)
{
	int			nnodes = (n + node - 1) / node;
	int			first = j * node;
	int			count;
	int			c;

	if (j >= nnodes)
		return;
	count = Min(node, n - first);
	for (c = 0; c < count; c++)
	{
		ranks_btorder(n, node, j * (node + 1) + 1 + c, slot_rank, next);
		slot_rank[first + c] = (*next)++;
	}
	ranks_btorder(n, node, j * (node + 1) + 1 + count, slot_rank, next);
}

/* The blocked layout: separators first, then the groups in order */
static void
ranks_blocked(int n, uint16 *slot_rank)
{
	int			g = btl_blocked_group_size(n);
	int			m = n / (g + 1);
	int			rank;

	for (rank = 0; rank < n; rank++)
	{
		int			j = rank / (g + 1);
		int			within = rank % (g + 1);

		if (j < m && within == g)
			slot_rank[j] = rank;
		else
			slot_rank[m + j * g + within] = rank;
	}
}

/*
 * Fill slot_rank[0..n-1] with the rank of the item each slot holds under
 * the layout.  node is the btorder node size (ignored by the others).  The
 * layout none has no order of its own: it is not a valid argument.
 */
void
btl_layout_ranks(BtlLayout layout, int n, int node, uint16 *slot_rank)
{
	int			next = 0;
	uint16		pos[BTL_VEB_MAX_HEIGHT];

	Assert(n >= 0 && n <= BTL_MAX_ITEMS);
	if (n == 0)
		return;

	switch (layout)
	{
		case BTL_LAYOUT_EYTZINGER:
			ranks_eytzinger(n, 0, slot_rank, &next);
			break;
		case BTL_LAYOUT_VEB:
			ranks_veb(n, btl_veb_tables(n), 1, 0, pos, slot_rank, &next);
			break;
		case BTL_LAYOUT_BTORDER:
			ranks_btorder(n, node, 0, slot_rank, &next);
			break;
		case BTL_LAYOUT_BLOCKED:
			ranks_blocked(n, slot_rank);
			break;
		case BTL_LAYOUT_NONE:
			Assert(false);
			break;
	}
}
