/*-------------------------------------------------------------------------
 *
 * search.c
 *	  The descent from the root to a leaf, and the search inside a page:
 *	  layout-directed where the page allows it, through line pointers
 *	  otherwise.
 *
 * On a page whose laid-out items all have one width w, the item of slot s
 * is at base + s * w, so the search can walk the layout's tree (layout.h)
 * computing each next tuple's address instead of reading its line pointer.
 * Items inserted since the layout lie below the slots (page.c) and leave
 * the tree of the others intact.  Nothing about the page is trusted for
 * that:
 *
 *	- base comes from the line pointer of the item before the first
 *	  searchable one (high key or minus-infinity item), w from the first
 *	  searchable one's; the walk only goes ahead if the slots, whole widths,
 *	  fill the tuple area from base to its end, and every read of the walk
 *	  stays inside its slot (the key attributes have fixed offsets, all
 *	  below w), so no read leaves the page, whatever the page holds;
 *	- the walk compares only through the inline comparisons (compare.h),
 *	  which are defined on any bytes: a slot that does not hold a tuple
 *	  yields a wrong comparison, never a function of the server's reading
 *	  garbage (a key compared through the function manager is searched the
 *	  ordinary way);
 *	- a tuple with NULLs, whose attributes would not be at those offsets,
 *	  stops the walk, and so does a varlena last key attribute that is
 *	  compressed or does not end inside its slot;
 *	- the walk's answer is confirmed through the line pointers (walk.h):
 *	  the descent returns a slot whose item it found not below the key, and
 *	  the walk remembers the last slot whose item it found below; only line
 *	  pointers that point at exactly those slots, with length w, count.
 *	  Line pointers are in key order, so with item p below the key and item
 *	  q not below it, the answer of any correct search lies in p + 1 .. q,
 *	  whatever else the page holds and whatever placement its bodies have;
 *	  the comparisons were made on those very bytes, with the comparison
 *	  the ordinary search uses.  On a page as its layout left it q is p + 1;
 *	  items inserted since in between are searched through their line
 *	  pointers.
 *
 * Any page that fails a check is searched the ordinary way, by binary
 * search through its line pointers.  Per-backend counters (plain stores,
 * no shared state) record which way each search went.
 *
 * The descent holds one buffer lock at a time (nbtree's rules for readers):
 * it reads the page's high key first, and moves right, as nbtree's
 * _bt_moveright() does for readers, when a concurrent split has moved the
 * key space or the page was deleted.
 *
 * src/search.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "collhint.h"
#include "compare.h"
#include "normkey.h"
#include "walk.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

BtlSearchCounters btl_search_counters;

/*
 * Rank tables of the layouts, by layout, btorder node size (0 for the
 * others) and item count, computed on first use and kept for the life of
 * the backend.
 */
static uint16 **rank_tables[BTL_NUM_LAYOUTS][BTL_BTORDER_MAX_NODE + 1];

static const uint16 *
layout_ranks(BtlLayout layout, int node, int n)
{
	uint16	  **tables = rank_tables[layout][node];

	if (tables == NULL)
		tables = rank_tables[layout][node] =
			MemoryContextAllocZero(TopMemoryContext,
								   (MaxIndexTuplesPerPage + 1) * sizeof(uint16 *));
	if (tables[n] == NULL)
	{
		uint16	   *ranks = MemoryContextAlloc(TopMemoryContext,
											   Max(n, 1) * sizeof(uint16));

		btl_layout_ranks(layout, n, node, ranks);
		tables[n] = ranks;
	}
	return tables[n];
}

/* State of one layout-directed walk */
typedef struct BtlWalk
{
	const BtlSearchKey *key;
	Page		page;
	OffsetNumber first;			/* offset of the item of rank 0 */
	const uint16 *ranks;		/* the rank held by each slot */
	int			inserted;		/* items inserted since the layout */
	const char *base;			/* address of slot 0 */
	int			n;				/* slots */
	int			width;			/* bytes per slot */
	int			natts;			/* attributes of a non-pivot tuple */
	int			cmpval;			/* 1, or 0 for a nextkey search */
	int			last_below;		/* last slot whose item was below the key */
	bool		stopped;		/* met a tuple it cannot read by offset */
} BtlWalk;

/*
 * Is the item in this slot below the key (in the search's sense)?  kind and
 * kind2 are constants: the key's walk_kind and walk_kind2, for which the
 * comparison is compiled on its own (btl_compare_fixed_one(), or
 * btl_compare_fixed_two() for two attributes), or BTL_CMP_GENERIC for any
 * walkable key.  Of those kinds only strings (BTL_CMP_BYTES) are varlenas.
 */
static pg_attribute_always_inline bool
walk_below_as(void *ctx, int slot, BtlCmpKind kind, BtlCmpKind kind2)
{
	BtlWalk    *w = (BtlWalk *) ctx;
	IndexTuple	itup = (IndexTuple) (w->base + slot * w->width);
	int			ntupatts;

	if (unlikely(IndexTupleHasNulls(itup)))
	{
		w->stopped = true;
		return false;
	}
	ntupatts = BTreeTupleIsPivot(itup) ?
		(ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) & BT_OFFSET_MASK) :
		w->natts;
	if ((kind == BTL_CMP_GENERIC || kind == BTL_CMP_BYTES) &&
		w->key->varatt >= 0 && ntupatts > w->key->varatt)
	{
		int			attoff = w->key->att[w->key->varatt].attoff;

		/* A varlena last attribute must lie inside the slot, uncompressed */
		if (unlikely(!btl_varlena_fits((const char *) itup + attoff,
									   w->width - attoff)))
		{
			w->stopped = true;
			return false;
		}
	}
	if ((kind == BTL_CMP_GENERIC ?
		 btl_compare_fixed(w->key, itup, ntupatts) :
		 kind2 == BTL_CMP_GENERIC ?
		 btl_compare_fixed_one(w->key, itup, ntupatts, kind) :
		 btl_compare_fixed_two(w->key, itup, ntupatts, kind, kind2)) >= w->cmpval)
	{
		w->last_below = slot;
		return true;
	}
	return false;
}

/* Prefetch the cache lines of start .. end - 1, at most max of them */
static pg_attribute_always_inline void
prefetch_lines(const char *start, const char *end, int max)
{
	uintptr_t	line = TYPEALIGN_DOWN(BTL_CACHE_LINE, (uintptr_t) start);

	for (; line < (uintptr_t) end && max > 0; line += BTL_CACHE_LINE, max--)
		__builtin_prefetch((const void *) line, 0, 3);
}

/*
 * Prefetch the cache lines of a run of slots the walk will need soon.  When
 * the walk ends in that run (final), the confirmation will read the line
 * pointers of its ranks, or of the ranks just before and after it, moved
 * up by at most the items inserted since the layout: prefetch those too,
 * so that their miss overlaps the walk's last comparisons instead of
 * following them.
 */
static pg_attribute_always_inline void
walk_hint(void *ctx, int first, int count, bool final)
{
	BtlWalk    *w = (BtlWalk *) ctx;
	int			last;

	if (!w->key->prefetch || first >= w->n)
		return;
	last = Min(first + count, w->n) - 1;
	prefetch_lines(w->base + first * w->width,
				   w->base + (last + 1) * w->width, INT_MAX);
	if (final)
	{
		OffsetNumber lo = w->first + Max(w->ranks[first] - 1, 0);
		OffsetNumber hi = Min(w->first + w->ranks[last] + 1 + w->inserted,
							  w->first + w->n + w->inserted - 1);

		prefetch_lines((const char *) PageGetItemId(w->page, lo),
					   (const char *) (PageGetItemId(w->page, hi) + 1), 4);
	}
}

/* Prefetch the item whose line pointer is at off, kept inside the page */
static pg_attribute_always_inline void
prefetch_item(Page page, OffsetNumber off)
{
	__builtin_prefetch((const char *) page +
					   Min(ItemIdGetOffset(PageGetItemId(page, off)), BLCKSZ - 1),
					   0, 3);
}

/* The middle offset of lo .. hi - 1, where a binary search compares */
static pg_attribute_always_inline int
middle(int lo, int hi)
{
	return lo + (hi - lo) / 2;
}

/*
 * Binary search through line pointers for the first item of lo .. hi - 1
 * not below the key; hi if there is none.
 *
 * Each step reads a line pointer, then the item it points at, and the next
 * step's line pointer depends on the comparison: two cache misses a step
 * on a page not in cache, each waiting for the one before.  With prefetch
 * on, while a step's item is being compared, the items of both halves'
 * middles are prefetched (their line pointers, prefetched a step earlier,
 * are read for that), and so are the line pointers of the four quarters'
 * middles; the misses of the next steps then overlap this one's.  Only
 * while the range is wide enough for those to lie on other cache lines.
 * The offsets read there are only prefetch addresses, kept inside the
 * page, and every line pointer read is one of lo .. hi - 1.  Forced inline:
 * as a function of its own it cost the layout walk's pages, which never
 * run it, 10% (docs/performance.md).
 *
 * With hints (the key's collation hints, collhint.h), the comparisons are
 * btl_compare_hinted()'s, and *below_hinted and *above_hinted tell whether
 * a hint decided the last item found below the key (the answer's
 * predecessor) and the last found not below it (the answer): the two
 * verdicts search_hinted() has the collation prove.
 */
static pg_attribute_always_inline OffsetNumber
search_lines(Relation rel, const BtlSearchKey *key, Page page,
			 OffsetNumber lo, OffsetNumber hi, bool hints,
			 bool *below_hinted, bool *above_hinted)
{
	int			cmpval = key->nextkey ? 0 : 1;

	while (hi > lo)
	{
		OffsetNumber mid = middle(lo, hi);
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, mid));
		bool		hinted = false;

		if (key->prefetch && hi - lo >= 16)
		{
			OffsetNumber left = middle(lo, mid);
			OffsetNumber right = middle(mid + 1, hi);

			prefetch_item(page, left);
			prefetch_item(page, right);
			__builtin_prefetch(PageGetItemId(page, middle(lo, left)), 0, 3);
			__builtin_prefetch(PageGetItemId(page, middle(left + 1, mid)), 0, 3);
			__builtin_prefetch(PageGetItemId(page, middle(mid + 1, right)), 0, 3);
			__builtin_prefetch(PageGetItemId(page, middle(right + 1, hi)), 0, 3);
		}
		if ((hints ? btl_compare_hinted(key, rel, itup, &hinted) :
			 btl_compare(key, rel, itup)) >= cmpval)
		{
			lo = mid + 1;
			if (hints)
				*below_hinted = hinted;
		}
		else
		{
			hi = mid;
			if (hints)
				*above_hinted = hinted;
		}
	}
	return lo;
}

static pg_attribute_always_inline OffsetNumber
search_ordinary(Relation rel, const BtlSearchKey *key, Page page,
				OffsetNumber lo, OffsetNumber hi)
{
	return search_lines(rel, key, page, lo, hi, false, NULL, NULL);
}

/*
 * search_ordinary() for a key with a usable collation hint: the binary
 * search follows the hint, then the collation proves its answer r, if a
 * hint decided either verdict it rests on: item r - 1 below the key, item
 * r not below it (each only if it is in lo .. hi - 1).  Line pointers are
 * in key order, so with both proven r is the first item not below the
 * key, exactly what search_ordinary() returns, whatever the hint said
 * elsewhere.  If either fails the page is searched again without the
 * hint.  prove false: the page is an image of the copy of the upper
 * levels, whose answer the leaf proves (leaf_search_proven()), so the
 * collation need not; a leaf is always searched with prove true, and
 * leaf_search_proven() rests on that.
 */
static pg_noinline OffsetNumber
search_hinted(Relation rel, const BtlSearchKey *key, Page page,
			  OffsetNumber lo, OffsetNumber hi, bool prove)
{
	int			cmpval = key->nextkey ? 0 : 1;
	bool		below_hinted = false;
	bool		above_hinted = false;
	OffsetNumber r;
	bool		held;

	btl_search_counters.hinted_searches++;
	r = search_lines(rel, key, page, lo, hi, true, &below_hinted,
					 &above_hinted);
	if (!prove || (!below_hinted && !above_hinted))
		return r;
	held = (!below_hinted || r == lo ||
			btl_compare(key, rel, (IndexTuple)
						PageGetItem(page, PageGetItemId(page, r - 1))) >= cmpval) &&
		(!above_hinted || r == hi ||
		 btl_compare(key, rel, (IndexTuple)
					 PageGetItem(page, PageGetItemId(page, r))) < cmpval);
	btl_collhint_proof(key->hint, held);
	if (held)
		return r;
	btl_search_counters.hint_failures++;
	return search_ordinary(rel, key, page, lo, hi);
}

/*
 * Walk the n slots of a page in layout (one of the four), comparing with
 * less: the slot of the first item not below the key, or -1.
 */
static pg_attribute_always_inline int
walk_layout(BtlLayout layout, int n, int node, BtlWalk *w, BtlLessFn less)
{
	switch (layout)
	{
		case BTL_LAYOUT_EYTZINGER:
			return btl_descend_eytzinger(n, w, less, walk_hint);
		case BTL_LAYOUT_VEB:
			return btl_descend_veb(n, btl_veb_tables(n), w, less, walk_hint);
		case BTL_LAYOUT_BTORDER:
			return btl_descend_btorder(n, node, w, less, walk_hint);
		default:
			Assert(layout == BTL_LAYOUT_BLOCKED);
			return btl_descend_blocked(n, w, less, walk_hint);
	}
}

/*
 * The walk of each kind: its comparison, and the walk compiled for it, a
 * function of its own.  Inlined together into one, the walks grew it past
 * what the compiler inlines into a function, and the server's small inline
 * functions the walks call became calls.
 */
#define BTL_WALK_OF_KIND(name, kind, kind2) \
static pg_attribute_always_inline bool \
walk_below_##name(void *ctx, int slot) \
{ \
	return walk_below_as(ctx, slot, kind, kind2); \
} \
\
static pg_noinline int \
walk_##name(BtlLayout layout, int n, int node, BtlWalk *w) \
{ \
	return walk_layout(layout, n, node, w, walk_below_##name); \
}

BTL_WALK_OF_KIND(int32, BTL_CMP_INT32, BTL_CMP_GENERIC)
BTL_WALK_OF_KIND(int64, BTL_CMP_INT64, BTL_CMP_GENERIC)
BTL_WALK_OF_KIND(uuid, BTL_CMP_UUID, BTL_CMP_GENERIC)
BTL_WALK_OF_KIND(bytes, BTL_CMP_BYTES, BTL_CMP_GENERIC)
BTL_WALK_OF_KIND(int32_int32, BTL_CMP_INT32, BTL_CMP_INT32)
BTL_WALK_OF_KIND(int32_int64, BTL_CMP_INT32, BTL_CMP_INT64)
BTL_WALK_OF_KIND(int64_int32, BTL_CMP_INT64, BTL_CMP_INT32)
BTL_WALK_OF_KIND(int64_int64, BTL_CMP_INT64, BTL_CMP_INT64)
BTL_WALK_OF_KIND(generic, BTL_CMP_GENERIC, BTL_CMP_GENERIC)

/*
 * Search the nitems searchable items from offset first by walking the
 * layout.  Returns the offset of the first item not below the key (first +
 * nitems if none), or InvalidOffsetNumber if the page cannot be searched
 * this way or the walk's answer was not confirmed.  Sets *crowded if the
 * items inserted since the layout are enough for a relayout to pay.
 *
 * The layout's slots are the n items the page had when it was laid out,
 * packed from right after the high key and minus-infinity item (whose line
 * pointers nothing moves) to the end of the tuple area.  Inserts since then
 * put their tuples below all of them and shift line pointers up (page.c),
 * so the slots still form the layout's tree of n items, and nitems - n is
 * the number of items inserted since.  Pages without a high key (the
 * rightmost of each level) have nothing that says where slot 0 was, and
 * are walked from pd_upper: that serves them only while nothing has been
 * inserted since their layout.
 */
static OffsetNumber
search_by_layout(Relation rel, const BtlSearchKey *key, Page page,
				 OffsetNumber first, int nitems, bool *crowded)
{
	BtlLayout	layout = (BtlLayout) key->layout;
	ItemId		iid = PageGetItemId(page, first);
	int			width = MAXALIGN(ItemIdGetLength(iid));
	int			node = (layout == BTL_LAYOUT_BTORDER) ?
	btl_btorder_node_items(width) : 0;
	const uint16 *ranks;
	int			baseoff;
	int			n;
	int			slot;
	OffsetNumber lo;
	OffsetNumber hi;
	BtlWalk		w;

	if (width < key->minwidth)
		return InvalidOffsetNumber;
	if (layout != BTL_LAYOUT_EYTZINGER && layout != BTL_LAYOUT_VEB &&
		layout != BTL_LAYOUT_BTORDER && layout != BTL_LAYOUT_BLOCKED)
		return InvalidOffsetNumber;
	if (!btl_walk_slots(page, first, nitems, width, &baseoff, &n))
		return InvalidOffsetNumber;
	ranks = layout_ranks(layout, node, n);

	btl_search_counters.layout_searches++;
	w.key = key;
	w.page = page;
	w.first = first;
	w.ranks = ranks;
	w.inserted = nitems - n;
	w.base = (const char *) page + baseoff;
	w.n = n;
	w.width = width;
	w.natts = IndexRelationGetNumberOfAttributes(rel);
	w.cmpval = key->nextkey ? 0 : 1;
	w.last_below = -1;
	w.stopped = false;

	switch (key->walk_kind)
	{
		case BTL_CMP_INT32:
			slot = key->walk_kind2 == BTL_CMP_INT32 ?
				walk_int32_int32(layout, n, node, &w) :
				key->walk_kind2 == BTL_CMP_INT64 ?
				walk_int32_int64(layout, n, node, &w) :
				walk_int32(layout, n, node, &w);
			break;
		case BTL_CMP_INT64:
			slot = key->walk_kind2 == BTL_CMP_INT32 ?
				walk_int64_int32(layout, n, node, &w) :
				key->walk_kind2 == BTL_CMP_INT64 ?
				walk_int64_int64(layout, n, node, &w) :
				walk_int64(layout, n, node, &w);
			break;
		case BTL_CMP_UUID:
			slot = walk_uuid(layout, n, node, &w);
			break;
		case BTL_CMP_BYTES:
			slot = walk_bytes(layout, n, node, &w);
			break;
		default:
			slot = walk_generic(layout, n, node, &w);
			break;
	}
	if (w.stopped)
		goto fallback;

	/*
	 * Confirm through the line pointers (walk.h gives the argument): the
	 * first item not below the key is among lo .. hi, whatever the page
	 * holds.  Without inserts since the layout, lo == hi; otherwise the few
	 * items inserted between are searched through their line pointers.
	 */
	if (!btl_confirm_walk(page, first, nitems, w.base, width, n, ranks, slot,
						  w.last_below, &lo, &hi))
		goto fallback;
	btl_search_counters.layout_confirmed++;
	if (w.inserted > 0)
	{
		btl_search_counters.layout_with_inserts++;
		*crowded = btl_too_many_inserted(w.inserted, nitems);
	}
	if (lo == hi)
		return hi;
	return search_ordinary(rel, key, page, lo, hi);

fallback:
	btl_search_counters.layout_fallbacks++;
	return InvalidOffsetNumber;
}

/*
 * The in-page search of a page, with the results of nbtree's _bt_binsrch()
 * for scans: on a leaf, the offset of the first item not below the key
 * (maxoff + 1 if none); on an internal page, the offset of the downlink to
 * follow.  The minus-infinity item, first on an internal page, is below
 * every key, so the search starts after it.  The page is the one in buf
 * (locked), or, with buf invalid, an image in this backend's copy of the
 * upper levels (upper.c) of block blkno.
 *
 * A page claiming more line pointers than a page can hold (a damaged
 * pd_lower that the buffer manager's header check lets through) is refused
 * here, once per page visit, so that neither search indexes its tables or
 * reads line pointers by a count no page can have.
 *
 * A page in buf the layout-directed search could not serve because it is
 * in nbtree's own order (its high key's body at the top of the page, where
 * a split or a deduplication pass puts it, and no layout does), or served
 * with many items inserted since the layout, is noted for a relayout when
 * the scan ends (relayout.c), if the index lets lookups do that.  Not a
 * page the search cannot serve in any order (items of several widths): a
 * relayout would not help it.  Not the rightmost page of a level, where
 * appends go: every lookup after every append would rewrite it.
 */
static OffsetNumber
binsrch_page(Relation rel, const BtlSearchKey *key, Page page,
			 BlockNumber blkno, Buffer buf)
{
	BTPageOpaque opaque = BTPageGetOpaque(page);
	bool		isleaf = P_ISLEAF(opaque);
	OffsetNumber low = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber first = isleaf ? low : low + 1;
	OffsetNumber result = InvalidOffsetNumber;
	bool		stale = false;

	if (unlikely(maxoff > MaxIndexTuplesPerPage))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains corrupted page at block %u",
						RelationGetRelationName(rel), blkno),
				 errdetail("The page has %u line pointers; a page holds at most %u.",
						   (unsigned) maxoff, (unsigned) MaxIndexTuplesPerPage)));
	if (unlikely(maxoff < low))
		return low;

	if (key->layout != BTL_LAYOUT_NONE && key->walkable && maxoff >= first)
	{
		result = search_by_layout(rel, key, page, first, maxoff - first + 1,
								  &stale);
		if (result == InvalidOffsetNumber && !P_RIGHTMOST(opaque))
		{
			ItemId		hikey = PageGetItemId(page, P_HIKEY);

			stale = ItemIdGetOffset(hikey) + MAXALIGN(ItemIdGetLength(hikey)) ==
				((PageHeader) page)->pd_special;
		}
	}
	if (result == InvalidOffsetNumber)
	{
		btl_search_counters.ordinary_searches++;
		if (key->hint != NULL && key->hint->usable)
			result = search_hinted(rel, key, page, first, maxoff + 1,
								   BufferIsValid(buf));
		else
			result = search_ordinary(rel, key, page, first, maxoff + 1);
	}
	if (unlikely(stale) && key->note_stale && BufferIsValid(buf))
		btl_note_stale_page(rel, buf);

	return isleaf ? result : OffsetNumberPrev(result);
}

/* binsrch_page() of the page in buf */
static OffsetNumber
binsrch_buf(Relation rel, const BtlSearchKey *key, Buffer buf)
{
	return binsrch_page(rel, key, BufferGetPage(buf),
						BufferGetBlockNumber(buf), buf);
}

/*
 * Pin block blkno: in the buffer it was in last time if it is still there
 * (recent.c), else through the buffer mapping table; then prefetch the
 * page's header and special space as soon as its buffer is pinned, so that
 * their cache misses overlap taking the lock instead of following it
 * (_bt_checkpage() and the checks of a leaf read both right after), and
 * lock it for reading.
 */
static Buffer
read_and_lock(Relation rel, BlockNumber blkno, const BtlSearchKey *key)
{
	Buffer		buf;

	if (key->recent_buffers)
		buf = btl_read_recent(rel, blkno);
	else
		buf = ReadBuffer(rel, blkno);
	if (key->prefetch)
	{
		const char *page = (const char *) BufferGetPage(buf);

		__builtin_prefetch(page, 0, 3);
		__builtin_prefetch(page + BLCKSZ - MAXALIGN(sizeof(BTPageOpaqueData)), 0, 3);
	}
	_bt_lockbuf(rel, buf, BT_READ);
	return buf;
}

/* Step down to a child: nbtree's _bt_relandgetbuf(), with read_and_lock() */
static Buffer
step_down(Relation rel, Buffer buf, BlockNumber child,
		  const BtlSearchKey *key)
{
	_bt_relbuf(rel, buf);
	buf = read_and_lock(rel, child, key);
	_bt_checkpage(rel, buf);
	return buf;
}

/*
 * Is the page not the one for the key: deleted or half-dead, or (if the
 * page is not the rightmost of its level) its high key below the key (or
 * not above it, for nextkey)?
 */
static inline bool
page_left_of_key(Relation rel, const BtlSearchKey *key, Page page,
				 BTPageOpaque opaque)
{
	int			cmpval = key->nextkey ? 0 : 1;

	return !P_RIGHTMOST(opaque) &&
		(P_IGNORE(opaque) ||
		 btl_compare(key, rel,
					 (IndexTuple) PageGetItem(page, PageGetItemId(page, P_HIKEY))) >= cmpval);
}

/*
 * A split since we read the parent may have moved our key space to the
 * right, or the page may have been deleted: step right, one lock at a
 * time, until the page is the key's.  What nbtree's _bt_moveright() does
 * for readers (a reader leaves incomplete splits to writers).
 */
static Buffer
move_right(Relation rel, const BtlSearchKey *key, Buffer buf,
		   Snapshot snapshot)
{
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		BTPageOpaque opaque = BTPageGetOpaque(page);

		if (!page_left_of_key(rel, key, page, opaque))
			break;
		if (P_RIGHTMOST(opaque))
			break;
		buf = _bt_relandgetbuf(rel, buf, opaque->btpo_next, BT_READ);
		btl_test_for_old_snapshot(snapshot, rel, BufferGetPage(buf));
	}
	if (P_IGNORE(BTPageGetOpaque(BufferGetPage(buf))))
		elog(ERROR, "fell off the end of index \"%s\"",
			 RelationGetRelationName(rel));
	return buf;
}

/*
 * Prefetch what a leaf's search and its proof may read first: the lines
 * after the high key, where every layout puts the slots its walk starts
 * with (btlayout.h), the high key at offset hikey (which the proof compares
 * when the answer is past the last item) and the first data item at
 * offset first (where a search that ends at the page's start reads).  Each
 * of those is otherwise a cache miss that waits for the one before.  The
 * offsets are only prefetch addresses, kept inside the page; nothing is
 * read through them.
 */
static inline void
prefetch_leaf_items(const char *page, int hikey, int first)
{
	hikey = Min(hikey, BLCKSZ - 1);
	__builtin_prefetch(page + Min(first, BLCKSZ - 1), 0, 3);
	prefetch_lines(page + hikey, page + Min(hikey + 4 * BTL_CACHE_LINE, BLCKSZ), 4);
}

/* prefetch_leaf_items() from the leaf's line pointers, once its header is read */
static inline void
prefetch_leaf_start(Page page, OffsetNumber first)
{
	prefetch_leaf_items((const char *) page,
						ItemIdGetOffset(PageGetItemId(page, P_HIKEY)),
						ItemIdGetOffset(PageGetItemId(page, first)));
}

/*
 * The copy has named leaf blkno, about to be pinned and locked.  Prefetch,
 * in the buffer it was in last time (recent.c), the page's header and
 * special space and, at the offsets they had when the leaf last proved
 * itself, its high key, first item and first lines: otherwise each of
 * those waits for the pin, and all but the header then wait for the
 * header's line pointers.  Addresses only: if the buffer holds another page
 * by now or the page changed, the prefetches are wasted, and the pin, the
 * lock and the proof go on exactly as without them.
 */
static inline void
prefetch_named_leaf(Relation rel, BlockNumber blkno)
{
	const char *page;
	uint16		hikey;
	uint16		first;

	if (!btl_recent_hint(rel, blkno, &page, &hikey, &first))
		return;
	__builtin_prefetch(page, 0, 3);
	__builtin_prefetch(page + BLCKSZ - MAXALIGN(sizeof(BTPageOpaqueData)), 0, 3);
	if (hikey != 0)
		prefetch_leaf_items(page, hikey, first);
}

/* Is the page, read by block number from a copy's downlink, a btree page? */
static inline bool
is_btree_page(Page page)
{
	return !PageIsNew(page) &&
		PageGetSpecialSize(page) == MAXALIGN(sizeof(BTPageOpaqueData));
}

/*
 * The leaf's search, and its proof that it is the page the ordinary
 * descent would end on for the key (read-locked by the caller; see
 * descend()): the offset of the first item not below the key, or
 * InvalidOffsetNumber if the page is not the key's leaf.
 *
 * The proof needs the leaf's first data item before the key (or the leaf
 * leftmost) and its high key not before it (or the leaf rightmost), and
 * the search answers most of it.  Its answer r is the first item not
 * below the key, whichever way it was found (binsrch_page()): item r - 1,
 * if r is past the first data item, is before the key, and item r, if
 * there is one, is not.  Items lie in the level's order under the lock,
 * none above the high key, and "before the key" holds for an initial
 * segment of that order; so r past the first data item proves the first
 * item before the key, and r an item of the page proves the high key not
 * before it.  An answer at the first data item fails the proof (unless the
 * leaf is leftmost), and only an answer past the last item leaves the
 * high key to compare.  Comparing the high key and the first item before
 * the search cost a comparison each, and a collation call each for a key
 * with a collation hint, whose search the collation proves anyway
 * (search_hinted()).  A leaf that fails the proof has been searched
 * whole: like any page searched, it counts in btlayout_search_stats(),
 * and a stale layout found there is noted for a relayout.
 */
static OffsetNumber
leaf_search_proven(Relation rel, const BtlSearchKey *key, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	BTPageOpaque opaque;
	OffsetNumber first;
	OffsetNumber maxoff;
	OffsetNumber r;

	if (!is_btree_page(page))
		return InvalidOffsetNumber;
	opaque = BTPageGetOpaque(page);
	if (!P_ISLEAF(opaque) || P_IGNORE(opaque))
		return InvalidOffsetNumber;
	first = P_FIRSTDATAKEY(opaque);
	maxoff = PageGetMaxOffsetNumber(page);
	if (maxoff > MaxIndexTuplesPerPage)
		return InvalidOffsetNumber;
	if (key->prefetch)
		prefetch_leaf_start(page, first);
	r = binsrch_buf(rel, key, buf);
	if (r == first && !P_LEFTMOST(opaque))
		return InvalidOffsetNumber;
	if (r > maxoff && page_left_of_key(rel, key, page, opaque))
		return InvalidOffsetNumber;
	return r;
}

/*
 * The downlink to follow on an image whose keys were stored without the
 * prefixlen bytes at prefix, that all of them share (make_image() in
 * upper.c), for a key that compares as bytes (the copy serves no other).
 * A key that starts with the prefix compares with the rest of each pivot
 * as with the whole pivot, and is searched for by its rest.  A key that
 * does not is below every pivot (its bytes are below the prefix's where
 * they first differ, or it is a proper prefix of the prefix) or above
 * every pivot, strictly either way, so its downlink is the first one (the
 * minus-infinity item's) or the last.
 */
static OffsetNumber
binsrch_stripped(Relation rel, const BtlSearchKey *key, Page page,
				 BlockNumber blkno, const char *prefix, int prefixlen)
{
	const BtlKeyAtt *att = &key->att[0];
	int			c = memcmp(att->sarg, prefix, Min(att->slen, prefixlen));
	OffsetNumber low = P_FIRSTDATAKEY(BTPageGetOpaque(page));
	BtlSearchKey rest;

	if (c < 0 || (c == 0 && att->slen < prefixlen))
		return low;
	if (c > 0)
		return Max(low, PageGetMaxOffsetNumber(page));
	btl_key_skip_prefix(key, prefixlen, &rest);
	return binsrch_page(rel, &rest, page, blkno, InvalidBuffer);
}

/*
 * The item of an image with keys for the key: its normalized string nk
 * searched in the keys (btl_nk_search(), which gives the argument), after
 * a prefetch of the heads.
 */
static BlockNumber
downlink_by_keys(Relation rel, const BtlSearchKey *key, BtlNormKey *nk,
				 const BtlNkKeys *keys, Page page)
{
	btl_search_counters.upper_key_searches++;

	/*
	 * Each step of the search reads where the one before it chose, so the
	 * heads of an image the nearer caches lack (the pages above the leaves
	 * of a large index: 1.1 kB of heads for int4) would cost a miss per
	 * step, one after another.  Ask for all their lines at once.
	 */
	if (key->prefetch)
		prefetch_lines(BTL_NK_HEADS(keys),
					   BTL_NK_HEADS(keys) + keys->nkeys * keys->width, INT_MAX);
	return BTL_NK_DOWNLINKS(keys)[btl_nk_search(keys, nk, key, rel, page)];
}

/*
 * The leaf for the key through this backend's copy of the upper levels
 * (upper.c), read-locked and proven to be the key's, with the offset of
 * its first item not below the key in *offnum; InvalidBuffer if the copy
 * has no path to a leaf or the leaf it names is not the key's.
 *
 * A copy held at its memory cap lacks pages it cannot take: a page below
 * those it holds is then searched in its buffer, read-locked, if it is a
 * live internal page of the level the walk expects, and the walk goes on
 * from its downlink (each page read so is one pin and lock instead of the
 * ordinary descent's pins and locks from the root).  That page is just
 * another step whose answer the leaf must prove, like the images'.  A copy
 * below the cap lacks a page only because no descent has read it yet, and
 * the ordinary descent reads and keeps it.
 */
static Buffer
search_copy(Relation rel, const BtlSearchKey *key, Snapshot snapshot,
			OffsetNumber *offnum)
{
	BtlUpperCopy *copy = btl_upper_copy_of(rel);
	BlockNumber blkno;
	uint32		level;
	Buffer		buf;
	BtlNormKey	nk;
	int			has_nk = 0;		/* made: 1; has none: -1 */

	if (copy == NULL ||
		(btl_upper_bytewise(copy) && !btl_key_bytewise(key)))
		return InvalidBuffer;

	/*
	 * Each page is an internal page; the levels of a stale copy need not
	 * chain, so each step must go one level down, which ends the walk.
	 */
	blkno = btl_upper_start(copy);
	level = PG_UINT32_MAX;		/* the first image's, whatever it is */
	for (;;)
	{
		const char *prefix;
		int			prefixlen = 0;
		const BtlNkKeys *keys = NULL;
		Page		page = btl_upper_page(copy, blkno, &prefix, &prefixlen,
										  &keys);
		Buffer		ibuf = InvalidBuffer;
		BTPageOpaque opaque;
		OffsetNumber off;

		if (page == NULL)
		{
			if (level == PG_UINT32_MAX || btl_upper_can_grow())
				break;
			ibuf = read_and_lock(rel, blkno, key);
			page = BufferGetPage(ibuf);
			if (!is_btree_page(page) || P_IGNORE(BTPageGetOpaque(page)))
			{
				_bt_relbuf(rel, ibuf);
				break;
			}
		}
		opaque = BTPageGetOpaque(page);
		if (opaque->btpo_level == 0 ||
			(level != PG_UINT32_MAX && opaque->btpo_level != level))
		{
			if (BufferIsValid(ibuf))
				_bt_relbuf(rel, ibuf);
			break;
		}

		/*
		 * A page read in its buffer is tested for an old snapshot as a
		 * descent tests each page it uses, and only once it proved to be one
		 * to use: a page a stale copy names may be anything, and no other
		 * page than those nbtree's descent would read may raise "snapshot
		 * too old".
		 */
		if (BufferIsValid(ibuf))
			btl_test_for_old_snapshot(snapshot, rel, page);
		level = opaque->btpo_level - 1;
		/* The key's normalized string, made for the first image with keys */
		if (keys != NULL && has_nk == 0 && key->upper_keys)
			has_nk = btl_nk_make_key(btl_upper_plan(copy), key, &nk) ? 1 : -1;
		if (keys != NULL && has_nk > 0)
			blkno = downlink_by_keys(rel, key, &nk, keys, page);
		else
		{
			if (prefixlen > 0)
				off = binsrch_stripped(rel, key, page, blkno, prefix,
									   prefixlen);
			else
				off = binsrch_page(rel, key, page, blkno, ibuf);
			blkno = BTreeTupleGetDownLink((IndexTuple)
										  PageGetItem(page,
													  PageGetItemId(page, off)));
		}
		if (BufferIsValid(ibuf))
			_bt_relbuf(rel, ibuf);
		if (level > 0)
			continue;

		if (key->prefetch && key->recent_buffers)
			prefetch_named_leaf(rel, blkno);
		buf = read_and_lock(rel, blkno, key);
		*offnum = leaf_search_proven(rel, key, buf);
		if (*offnum != InvalidOffsetNumber)
		{
			btl_test_for_old_snapshot(snapshot, rel, BufferGetPage(buf));
			if (key->prefetch && key->recent_buffers)
				btl_recent_note_leaf(rel, blkno, BufferGetPage(buf));
			btl_search_counters.upper_copy_hits++;
			return buf;
		}
		_bt_relbuf(rel, buf);
		break;
	}
	btl_search_counters.upper_copy_misses++;
	return InvalidBuffer;
}

/*
 * Descend from the root to the leaf page where the first item not below
 * the key is, or would be, and search it.  Returns that page's buffer,
 * read-locked, with the offset of that item (maxoff + 1 if none) in
 * *offnum, or InvalidBuffer if the index is empty.
 *
 * With a copy of the upper levels, the search first goes down the copy to
 * a leaf and keeps it if the leaf proves to be the one this descent would
 * end on.  Why that proof is enough: let "t is before the key" mean
 * btl_compare(key, t) >= cmpval (cmpval 1, or 0 for nextkey), the test by
 * which the descent moves right of a high key and nbtree's _bt_binsrch()
 * passes a pivot.  In a heapkeyspace index every tuple of a level, high
 * keys and pivots included, sorts in one order in which each page's items
 * lie above its low bound (its left sibling's high key) and not above its
 * high key, and "before the key" holds for an initial segment of that
 * order: the property every descent relies on.  The descent ends, after
 * any moves right, on the live leaf whose low bound is before the key (or
 * which is leftmost) and whose high key is not (or which is rightmost);
 * the leaves' bounds partition the order, so exactly one leaf is that.  A
 * leaf read under its read lock that is live, whose high key is not before
 * the key (or which is rightmost) and whose first data item is before it
 * (so that its low bound, not above that item, is too), or which is
 * leftmost, is therefore that leaf (leaf_search_proven() reads most of
 * this from its search), at the time of the lock, exactly as
 * the leaf of an ordinary descent is the key's at the time of its lock:
 * a scan starting there reads what a scan starting after an ordinary
 * descent reads, nextkey, backward (whose rules for truncated pivots
 * btl_compare() applies) and equality scans alike, and duplicates of the
 * key on pages to the left are excluded by the first item being before
 * the key.  Nothing else of the copy matters: a stale copy, a leaf split,
 * deleted, recycled elsewhere or on another level, or a page without data
 * items fails the proof, and the ordinary descent runs.  An index that is
 * not heapkeyspace never uses the copy (compare.c).
 *
 * The ordinary descent keeps an image of each internal page it searches
 * in the copy (after moving right, so the image is of the page it used),
 * the first one as where the copy's descents start.
 */
static Buffer
descend(Relation rel, const BtlSearchKey *key, Snapshot snapshot,
		OffsetNumber *offnum)
{
	Buffer		buf;
	bool		top = true;
	BtlNkPlan	plan;

	if (key->upper_copy)
	{
		buf = search_copy(rel, key, snapshot, offnum);
		if (BufferIsValid(buf))
			return buf;
		/* the shape of a new copy, worked out before any page is locked */
		btl_nk_plan_of(rel, &plan);
	}

	buf = btl_getroot(rel, BT_READ);
	while (BufferIsValid(buf))
	{
		Page		page = BufferGetPage(buf);
		BTPageOpaque opaque = BTPageGetOpaque(page);
		OffsetNumber off;
		IndexTuple	itup;

		btl_test_for_old_snapshot(snapshot, rel, page);
		if (page_left_of_key(rel, key, page, opaque))
		{
			buf = move_right(rel, key, buf, snapshot);
			page = BufferGetPage(buf);
			opaque = BTPageGetOpaque(page);
		}

		if (P_ISLEAF(opaque))
		{
			*offnum = binsrch_buf(rel, key, buf);
			break;
		}

		if (key->upper_copy)
			btl_upper_remember(rel, buf, top, &plan);
		top = false;
		off = binsrch_buf(rel, key, buf);
		itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		buf = step_down(rel, buf, BTreeTupleGetDownLink(itup), key);
	}

	return buf;
}

/*
 * btl_search() proper: descend(), counted as a lookup under way, during
 * which nothing this backend keeps of any index is freed (indexstate.c).
 */
Buffer
btl_search(Relation rel, const BtlSearchKey *key, Snapshot snapshot,
		   OffsetNumber *offnum)
{
	Buffer		buf;

	btl_lookup_begin();
	buf = descend(rel, key, snapshot, offnum);
	btl_lookup_end();
	return buf;
}
