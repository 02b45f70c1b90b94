/*-------------------------------------------------------------------------
 *
 * checker.c
 *	  btlayout_check(): a structural verifier for btlayout indexes, and
 *	  optionally a check that every heap tuple is indexed.
 *
 * A btlayout index is an nbtree index on disk, so what is verified is
 * nbtree's own set of invariants (the server's contrib/amcheck cannot be
 * used: it refuses relations whose access method is not btree).  Layouts
 * only move tuple bodies inside a page, so apart from the bounds and overlap
 * of those bodies nothing here depends on the layout a page is in.
 *
 * What is checked:
 *
 *	- the metapage: magic, version, root and fast root in range and at the
 *	  levels the metapage gives;
 *	- every page reached: header and special space sane, no more line
 *	  pointers than a page holds, line pointers describing MAXALIGNed tuple
 *	  bodies inside the tuple area that do not overlap and fill it exactly
 *	  (nbtree's space accounting relies on that), tuple sizes agreeing with line pointers, attribute counts and
 *	  pivot/posting flags as nbtree sets them, every attribute value inside
 *	  its tuple, posting lists inside their tuples with at least two valid,
 *	  strictly increasing TIDs;
 *	- keys strictly increasing within each page (heap TID as tiebreaker),
 *	  and not above the page's high key;
 *	- each level, walked from its leftmost page to the right: sibling links
 *	  agreeing both ways, every page at the level's level, leaves flagged as
 *	  leaves, no cycles, no deleted or uninitialized page linked, the high
 *	  key of a page not above the first key of the next live page;
 *	- downlinks: each live page below the root is the target of exactly one
 *	  downlink (except the right half of an interrupted split and the top of
 *	  an interrupted page deletion, which nbtree leaves without one), from a
 *	  page one level up; the child's keys are not below the downlink's
 *	  separator, and its high key equals the next separator (or the parent's
 *	  high key after the parent's last downlink).
 *
 * Deleted pages are never reached by a correct walk; half-dead leaves are
 * walked over (they stay linked to their siblings) but their contents,
 * which nbtree has reduced to a stub, are not checked.
 *
 * Ordering is decided by the server's _bt_compare() with insertion scan
 * keys that _bt_mkscankey() builds from one of the two tuples compared, in
 * "pivot search" mode, where a truncated attribute or heap TID counts as
 * minus infinity on both sides.  With the key built from tuple K and
 * compared with tuple T, the result answers exactly the two questions
 * asked here: "> 0" iff K > T, and "<= 0" iff K <= T.  (It may be 0 when
 * K < T, so "K >= T" is always asked as "T <= K", with the key built from
 * T.)  The key of a posting list tuple carries the list's lowest heap TID
 * when asking ">" and its highest when asking "<=".
 *
 * With heapallindexed, every leaf tuple that is not LP_DEAD (one per heap
 * TID, posting lists expanded) is fingerprinted into a hash table first;
 * then the heap is scanned as CREATE INDEX CONCURRENTLY's first scan would
 * scan it, under an MVCC snapshot taken before the index was read, and the
 * index tuple each visible heap tuple should have must be found.
 * Fingerprints are 64-bit hashes of values and heap TID, not of tuple
 * bytes: each varlena is hashed decompressed and without its header, so a
 * value that one side stores compressed, or with another header, still
 * matches.  The heap side forms its tuple with index_form_tuple(), which
 * fetches out-of-line values, and goes through the same fingerprint
 * function as index tuples.
 *
 * Locking: ShareLock on the table, then on the index, like amcheck's
 * bt_index_parent_check(): writers (INSERT, UPDATE, DELETE, VACUUM) wait
 * until the check ends, readers are not blocked.  Nothing changes under us,
 * so cross-page invariants are checked exactly.  Pages are still read one
 * at a time under a buffer share lock and copied, and every check reads
 * only copies.
 *
 * During recovery (on a hot standby) no lock above RowExclusiveLock can be
 * taken, and replay would not wait for one anyway: pages change between
 * any two reads.  There the check takes AccessShareLock and checks every
 * block on its own, in physical order, from one consistent copy: the
 * metapage's own fields, then each page's header, items and key order
 * (what check_items() and check_page_order() cover).  Sibling links,
 * levels, downlinks and the root's level are invariants between pages and
 * are left to a check on the primary, as is heapallindexed, which is
 * refused: its fingerprints come from a level walk.
 *
 * Corrupt input must end in an error, never in a crash: a tuple is read
 * only once its line pointer has been found inside the page, its size
 * inside its line pointer, and each of its attributes, its posting list or
 * its pivot heap TID inside the tuple; compressed values must have a known
 * method and a possible size, and pglz ones must decompress.  Only then is
 * a tuple deformed or compared.  Every walk is bounded by the number of
 * blocks.
 *
 * src/checker.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/toast_compression.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "common/hashfn.h"
#include "common/pg_lzcompress.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* Everything one check needs */
typedef struct BtlCheckState
{
	Relation	index;
	Relation	heap;
	bool		heapkeyspace;	/* version 4: heap TID is a key attribute */
	BlockNumber nblocks;
	BlockNumber root;
	bool		in_recovery;	/* pages change between reads: see above */
	BufferAccessStrategy strategy;
	MemoryContext pagecxt;		/* reset for every page checked */

	/* Per block: reached by a level walk; downlinks pointing to it */
	bool	   *visited;
	uint32	   *downlinks;

	/* Page copies */
	char	   *cur;			/* the page being checked */
	char	   *prevlive;		/* last live page left of it on its level */
	char	   *child;			/* a child of the page being checked */
	char	   *other;			/* left walks and descents */

	/* heapallindexed */
	HTAB	   *fingerprints;	/* of leaf tuples, one per heap TID */
} BtlCheckState;

#define report_corruption(...) \
	ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED), __VA_ARGS__))

#define INDEXNAME(state) RelationGetRelationName((state)->index)

/* Special size of every nbtree page */
#define BTL_SPECIAL_SIZE	MAXALIGN(sizeof(BTPageOpaqueData))

/* Where a tuple body lies, for the overlap check */
typedef struct ItemBody
{
	uint16		start;
	uint16		len;
	OffsetNumber off;
} ItemBody;

/* Copy block blkno of the index into page, under a share lock */
static void
read_page_copy(BtlCheckState *state, BlockNumber blkno, char *page)
{
	Buffer		buf;

	Assert(blkno < state->nblocks);
	buf = ReadBufferExtended(state->index, MAIN_FORKNUM, blkno, RBM_NORMAL,
							 state->strategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(page, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
}

/* Is blkno a block a link or a downlink may point to from block from? */
static inline bool
link_in_range(BtlCheckState *state, BlockNumber from, BlockNumber blkno)
{
	return blkno != P_NONE && blkno != BTREE_METAPAGE &&
		blkno < state->nblocks && blkno != from;
}

/* A sibling link of block from must point to another page of the index */
static void
check_sibling_link(BtlCheckState *state, BlockNumber from, BlockNumber to,
				   const char *which)
{
	if (!link_in_range(state, from, to))
		report_corruption(errmsg("index \"%s\" has corrupted sibling link at block %u",
								 INDEXNAME(state), from),
						  errdetail("The %s sibling link points to block %u; the index has %u blocks.",
									which, to, state->nblocks));
}

/*
 * Header and special space of a page that must be a btree page other than
 * the metapage.  Returns its special space.
 */
static BTPageOpaque
check_page_header(BtlCheckState *state, BlockNumber blkno, Page page)
{
	PageHeader	hdr = (PageHeader) page;
	BTPageOpaque opaque;

	if (PageIsNew(page))
		report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
								 INDEXNAME(state), blkno),
						  errdetail("The page is linked from the tree but is uninitialized."));
	if (PageGetPageLayoutVersion(page) != PG_PAGE_LAYOUT_VERSION ||
		hdr->pd_special != BLCKSZ - BTL_SPECIAL_SIZE)
		report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
								 INDEXNAME(state), blkno),
						  errdetail("Page layout version %u and special space at %u, expected version %u and special space at %u.",
									PageGetPageLayoutVersion(page),
									(unsigned) hdr->pd_special,
									PG_PAGE_LAYOUT_VERSION,
									(unsigned) (BLCKSZ - BTL_SPECIAL_SIZE)));
	if (hdr->pd_lower < SizeOfPageHeaderData ||
		(hdr->pd_lower - SizeOfPageHeaderData) % sizeof(ItemIdData) != 0 ||
		hdr->pd_lower > hdr->pd_upper || hdr->pd_upper > hdr->pd_special)
		report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
								 INDEXNAME(state), blkno),
						  errdetail("Page header has pd_lower %u, pd_upper %u, pd_special %u.",
									(unsigned) hdr->pd_lower,
									(unsigned) hdr->pd_upper,
									(unsigned) hdr->pd_special));
	if (PageGetMaxOffsetNumber(page) > MaxIndexTuplesPerPage)
		report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
								 INDEXNAME(state), blkno),
						  errdetail("The page has %u line pointers; a page holds at most %u.",
									(unsigned) PageGetMaxOffsetNumber(page),
									(unsigned) MaxIndexTuplesPerPage));
	opaque = BTPageGetOpaque(page);
	if (P_ISMETA(opaque))
		report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
								 INDEXNAME(state), blkno),
						  errdetail("A page linked from the tree is flagged as a metapage."));
	return opaque;
}

/*
 * Can the inline compressed value at ptr, len bytes long, be decompressed?
 * Its method and size are checked; a pglz stream is decompressed into a
 * scratch buffer, which fails cleanly on corrupt input (an lz4 stream is
 * left to the server's decompression, which reports corruption itself).
 * Returns NULL if so, else what is wrong.
 */
static const char *
check_compressed(const char *ptr, Size len)
{
	Size		rawsize = VARDATA_COMPRESSED_GET_EXTSIZE(ptr);
	Size		slen = len - VARHDRSZ_COMPRESSED;
	ToastCompressionId method = VARDATA_COMPRESSED_GET_COMPRESS_METHOD(ptr);

	/*
	 * Neither method expands its input more than about 255 times (pglz: a
	 * control byte and eight 3-byte tags give at most 8 * 273 bytes), so a
	 * larger size is corrupt, and the scratch buffer stays small.
	 */
	if (rawsize > slen * 256 + 64)
		return "the compressed value's size is impossible";
	if (method == TOAST_PGLZ_COMPRESSION_ID)
	{
		char	   *raw = palloc(rawsize + 1);
		int32		got;

		got = pglz_decompress(ptr + VARHDRSZ_COMPRESSED, (int32) slen,
							  raw, (int32) rawsize, true);
		pfree(raw);
		if (got != (int32) rawsize)
			return "the compressed value is corrupt";
	}
	else if (method != TOAST_LZ4_COMPRESSION_ID)
		return "the value's compression method is unknown";
	return NULL;
}

/*
 * Do the first natts attributes of itup lie inside its data area, which
 * ends end bytes from the start of the tuple?  Locates every attribute the
 * way index_getattr() does, without reading past the area.  Returns NULL
 * if so, else what is wrong, with the attribute's number in *attnum.
 */
static const char *
check_attributes(TupleDesc desc, IndexTuple itup, int natts, Size end,
				 int *attnum)
{
	Size		dataoff = IndexInfoFindDataOffset(itup->t_info);
	uint8	   *nullbits = NULL;
	char	   *tp;
	Size		limit;
	Size		off = 0;

	*attnum = 0;
	if (dataoff > end)
		return "the tuple header and null bitmap run past the data area";
	if (IndexTupleHasNulls(itup))
		nullbits = (uint8 *) ((char *) itup + sizeof(IndexTupleData));
	tp = (char *) itup + dataoff;
	limit = end - dataoff;

	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		*attnum = i + 1;
		if (nullbits != NULL && att_isnull(i, nullbits))
			continue;

		if (att->attlen > 0)
		{
			off = att_align_nominal(off, att->attalign);
			if (off + att->attlen > limit)
				return "the value runs past the end of the tuple";
			off += att->attlen;
		}
		else if (att->attlen == -1)
		{
			Size		len;
			char	   *ptr;

			/* A nonzero byte starts a short varlena; zeroes are padding */
			if (off >= limit)
				return "the value runs past the end of the tuple";
			if (tp[off] == 0)
			{
				off = att_align_nominal(off, att->attalign);
				if (off >= limit)
					return "the value runs past the end of the tuple";
			}
			ptr = tp + off;
			if (VARATT_IS_1B_E(ptr))
				return "the value is an out-of-line TOAST pointer, which index tuples never hold";
			if (VARATT_IS_1B(ptr))
				len = VARSIZE_1B(ptr);
			else
			{
				if (off + VARHDRSZ > limit)
					return "the value runs past the end of the tuple";
				len = VARSIZE_4B(ptr);
				if (len < VARHDRSZ ||
					(VARATT_IS_4B_C(ptr) && len < VARHDRSZ_COMPRESSED))
					return "the value's length is shorter than its header";
			}
			if (off + len > limit)
				return "the value runs past the end of the tuple";
			if (VARATT_IS_4B_C(ptr))
			{
				const char *problem = check_compressed(ptr, len);

				if (problem != NULL)
					return problem;
			}
			off += len;
		}
		else if (att->attlen == -2)
		{
			Size		len;

			off = att_align_nominal(off, att->attalign);
			if (off >= limit)
				return "the value runs past the end of the tuple";
			len = strnlen(tp + off, limit - off);
			if (len == limit - off)
				return "the string is not terminated inside the tuple";
			off += len + 1;
		}
		else
			return "the attribute has an unknown length";
	}
	return NULL;
}

/* qsort comparator: tuple bodies by start */
static int
item_body_cmp(const void *a, const void *b)
{
	const ItemBody *x = (const ItemBody *) a;
	const ItemBody *y = (const ItemBody *) b;

	return (int) x->start - (int) y->start;
}

/*
 * The items of a page that is not deleted or half-dead: line pointers,
 * tuple bodies, and everything inside each tuple that nbtree relies on to
 * read it.  After this, every tuple of the page can be deformed and
 * compared safely.
 */
static void
check_items(BtlCheckState *state, BlockNumber blkno, Page page,
			BTPageOpaque opaque)
{
	PageHeader	hdr = (PageHeader) page;
	TupleDesc	desc = RelationGetDescr(state->index);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;
	ItemBody   *bodies;
	int			n = 0;

	Assert(!P_IGNORE(opaque));

	if (!P_RIGHTMOST(opaque) && maxoff < P_HIKEY)
		report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
								 INDEXNAME(state), blkno),
						  errdetail("The page has a right sibling but no high key."));
	if (!P_ISLEAF(opaque) && maxoff < P_FIRSTDATAKEY(opaque))
		report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
								 INDEXNAME(state), blkno),
						  errdetail("The internal page has no downlinks."));

	/* Line pointers: bodies inside the tuple area, sized as their tuples */
	bodies = palloc(sizeof(ItemBody) * Max(maxoff, 1));
	for (off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		unsigned	start = ItemIdGetOffset(iid);
		unsigned	len = ItemIdGetLength(iid);
		Size		size;

		if ((!ItemIdIsNormal(iid) && !ItemIdIsDead(iid)) || len == 0)
			report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("Line pointer has flags %u and length %u; index items are normal or dead and have storage.",
										(unsigned) iid->lp_flags, len));
		if (start < hdr->pd_upper || start + len > hdr->pd_special)
			report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("Line pointer (offset %u, length %u) lies outside the tuple area (%u to %u).",
										start, len, (unsigned) hdr->pd_upper,
										(unsigned) hdr->pd_special));
		if (start != MAXALIGN(start) || len < sizeof(IndexTupleData))
			report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("Line pointer (offset %u, length %u) is not aligned or too short for an index tuple.",
										start, len));
		size = IndexTupleSize((IndexTuple) PageGetItem(page, iid));
		if (size > len || MAXALIGN(size) != len)
			report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("Tuple size %zu does not match its line pointer's length %u.",
										size, len));
		bodies[n].start = start;
		bodies[n].len = len;
		bodies[n].off = off;
		n++;
	}

	/* No two bodies overlap */
	qsort(bodies, n, sizeof(ItemBody), item_body_cmp);
	for (int i = 1; i < n; i++)
		if (bodies[i - 1].start + bodies[i - 1].len > bodies[i].start)
			report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
									 INDEXNAME(state), blkno, bodies[i].off),
							  errdetail("Its tuple (bytes %u to %u) overlaps the tuple of offset %u (bytes %u to %u).",
										(unsigned) bodies[i].start,
										(unsigned) (bodies[i].start + bodies[i].len),
										bodies[i - 1].off,
										(unsigned) bodies[i - 1].start,
										(unsigned) (bodies[i - 1].start + bodies[i - 1].len)));

	/*
	 * The tuple area holds exactly the items, with no gap: nbtree's space
	 * accounting (_bt_findsplitloc() takes the data on a page to be what its
	 * free space leaves) relies on it, and every layout keeps it (page.c).
	 * The bodies do not overlap and lie inside the area, so it is enough that
	 * their lengths add up to its size.
	 */
	{
		unsigned	total = 0;

		for (int i = 0; i < n; i++)
			total += bodies[i].len;
		if (total != (unsigned) (hdr->pd_special - hdr->pd_upper))
			report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
									 INDEXNAME(state), blkno),
							  errdetail("The tuple area (bytes %u to %u) holds %u bytes of tuples; nbtree expects exactly its size.",
										(unsigned) hdr->pd_upper,
										(unsigned) hdr->pd_special, total),
							  errhint("btlayout_relayout() or REINDEX rewrites the page.  Earlier builds of btlayout left such a gap when they aligned a layout to cache lines."));
	}
	pfree(bodies);

	/* Inside each tuple */
	for (off = FirstOffsetNumber; off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		Size		size = IndexTupleSize(itup);
		Size		end = size;
		int			natts;
		int			attnum;
		const char *problem;

		if (!_bt_check_natts(state->index, state->heapkeyspace, page, off))
			report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("Tuple has %d attributes and flags 0x%04x, which nbtree never gives a tuple at this place (%s page, %s).",
										BTreeTupleGetNAtts(itup, state->index),
										(unsigned) itup->t_info,
										P_ISLEAF(opaque) ? "leaf" : "internal",
										(!P_RIGHTMOST(opaque) && off == P_HIKEY) ? "high key" :
										(!P_ISLEAF(opaque) && off == P_FIRSTDATAKEY(opaque)) ? "minus infinity item" :
										"data item"));
		natts = BTreeTupleGetNAtts(itup, state->index);

		if (BTreeTupleIsPosting(itup))
		{
			int			ntids = BTreeTupleGetNPosting(itup);
			Size		postoff = BTreeTupleGetPostingOffset(itup);
			ItemPointer prev = NULL;

			if (ntids < 2)
				report_corruption(errmsg("index \"%s\" has corrupted posting list at block %u, offset %u",
										 INDEXNAME(state), blkno, off),
								  errdetail("The posting list has %d heap TIDs; at least 2 expected.",
											ntids));
			if (postoff < IndexInfoFindDataOffset(itup->t_info) ||
				postoff != SHORTALIGN(postoff) ||
				postoff + ntids * sizeof(ItemPointerData) > size)
				report_corruption(errmsg("index \"%s\" has corrupted posting list at block %u, offset %u",
										 INDEXNAME(state), blkno, off),
								  errdetail("The posting list of %d heap TIDs at byte %zu does not fit in its tuple of %zu bytes.",
											ntids, postoff, size));
			for (int i = 0; i < ntids; i++)
			{
				ItemPointer tid = BTreeTupleGetPostingN(itup, i);

				if (!ItemPointerIsValid(tid))
					report_corruption(errmsg("index \"%s\" has corrupted posting list at block %u, offset %u",
											 INDEXNAME(state), blkno, off),
									  errdetail("Heap TID %d of the posting list is invalid.", i));
				if (prev != NULL && ItemPointerCompare(prev, tid) >= 0)
					report_corruption(errmsg("index \"%s\" has corrupted posting list at block %u, offset %u",
											 INDEXNAME(state), blkno, off),
									  errdetail("Heap TID %d of the posting list, (%u,%u), does not follow (%u,%u).",
												i,
												ItemPointerGetBlockNumberNoCheck(tid),
												ItemPointerGetOffsetNumberNoCheck(tid),
												ItemPointerGetBlockNumberNoCheck(prev),
												ItemPointerGetOffsetNumberNoCheck(prev)));
				prev = tid;
			}
			end = postoff;
		}
		else if (BTreeTupleIsPivot(itup))
		{
			if ((ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) &
				 BT_PIVOT_HEAP_TID_ATTR) != 0)
			{
				if (size < sizeof(IndexTupleData) + sizeof(ItemPointerData))
					report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
											 INDEXNAME(state), blkno, off),
									  errdetail("Pivot tuple of %zu bytes is too short for the heap TID it claims.",
												size));
				end = size - sizeof(ItemPointerData);
				if (!ItemPointerIsValid(BTreeTupleGetHeapTID(itup)))
					report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
											 INDEXNAME(state), blkno, off),
									  errdetail("The heap TID of the pivot tuple is invalid."));
			}
		}
		else if (!ItemPointerIsValid(&itup->t_tid))
			report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("The heap TID (%u,%u) of the tuple is invalid.",
										ItemPointerGetBlockNumberNoCheck(&itup->t_tid),
										ItemPointerGetOffsetNumberNoCheck(&itup->t_tid)));

		problem = check_attributes(desc, itup, natts, end, &attnum);
		if (problem != NULL)
			report_corruption(errmsg("index \"%s\" has corrupted item at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("In attribute %d, %s.", attnum, problem));
	}
}

/*
 * Compare the tuple at (kpage, koff) with the tuple at (tpage, toff), the
 * key being built from the first (see the file header): is it strictly
 * greater (gt), or not greater (!gt)?  Pre-v4 indexes may hold equal keys,
 * so for them "strictly greater" is relaxed to "not less".
 */
static bool
tuple_gt(BtlCheckState *state, Page kpage, OffsetNumber koff,
		 Page tpage, OffsetNumber toff)
{
	IndexTuple	itup = (IndexTuple) PageGetItem(kpage, PageGetItemId(kpage, koff));
	BTScanInsert key = _bt_mkscankey(state->index, itup);
	int32		cmp;

	btl_insertkey_set_pivotsearch(key);
	cmp = _bt_compare(state->index, key, tpage, toff);
	pfree(key);
	return state->heapkeyspace ? cmp > 0 : cmp >= 0;
}

static bool
tuple_le(BtlCheckState *state, Page kpage, OffsetNumber koff,
		 Page tpage, OffsetNumber toff)
{
	IndexTuple	itup = (IndexTuple) PageGetItem(kpage, PageGetItemId(kpage, koff));
	BTScanInsert key = _bt_mkscankey(state->index, itup);
	int32		cmp;

	btl_insertkey_set_pivotsearch(key);
	if (key->scantid != NULL && BTreeTupleIsPosting(itup))
		key->scantid = BTreeTupleGetMaxHeapTID(itup);
	cmp = _bt_compare(state->index, key, tpage, toff);
	pfree(key);
	return cmp <= 0;
}

/*
 * Offset of the first item of a page that has a key (on internal pages the
 * first data item is minus infinity), or InvalidOffsetNumber if none.
 */
static OffsetNumber
first_keyed_item(Page page, BTPageOpaque opaque)
{
	OffsetNumber off = P_FIRSTDATAKEY(opaque) + (P_ISLEAF(opaque) ? 0 : 1);

	return off <= PageGetMaxOffsetNumber(page) ? off : InvalidOffsetNumber;
}

/* Keys within a page: strictly increasing, none above the high key */
static void
check_page_order(BtlCheckState *state, BlockNumber blkno, Page page,
				 BTPageOpaque opaque)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber first = first_keyed_item(page, opaque);
	OffsetNumber off;

	if (first == InvalidOffsetNumber)
		return;

	for (off = Max(first, P_FIRSTDATAKEY(opaque) + 1); off <= maxoff; off++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!tuple_gt(state, page, off, page, off - 1))
			report_corruption(errmsg("index \"%s\" has corrupted key order at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("The item at offset %u is not greater than the item at offset %u.",
										off, off - 1));
	}

	/* Order makes the last item the greatest: it must not exceed the high key */
	if (!P_RIGHTMOST(opaque) &&
		!tuple_le(state, page, maxoff, page, P_HIKEY))
		report_corruption(errmsg("index \"%s\" has corrupted key order at block %u, offset %u",
								 INDEXNAME(state), blkno, maxoff),
						  errdetail("The item at offset %u is greater than the page's high key.",
									maxoff));
}

/*
 * Fingerprint of the values of an index tuple that has all its attributes:
 * each value hashed in a form that does not depend on how it is stored
 * (varlenas decompressed, without header), then combined in order.
 */
static uint64
values_hash(BtlCheckState *state, IndexTuple itup)
{
	TupleDesc	desc = RelationGetDescr(state->index);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	uint64		h = 0;

	index_deform_tuple(itup, desc, values, isnull);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		uint64		vh;

		if (isnull[i])
			vh = UINT64CONST(0x9e3779b97f4a7c15) + i;
		else if (att->attlen == -1)
		{
			struct varlena *v = (struct varlena *) DatumGetPointer(values[i]);

			/* Index tuples are checked for these; heap values are fetched */
			if (VARATT_IS_EXTERNAL(v))
				elog(ERROR, "unexpected out-of-line value in index tuple");
			v = pg_detoast_datum_packed(v);
			vh = DatumGetUInt64(hash_any_extended((unsigned char *) VARDATA_ANY(v),
												  VARSIZE_ANY_EXHDR(v), i));
		}
		else if (att->attlen == -2)
		{
			char	   *s = DatumGetCString(values[i]);

			vh = DatumGetUInt64(hash_any_extended((unsigned char *) s,
												  strlen(s), i));
		}
		else if (att->attbyval)
		{
			union
			{
				Datum		d;
				char		c[sizeof(Datum)];
			}			buf;

			buf.d = 0;
			store_att_byval(buf.c, values[i], att->attlen);
			vh = DatumGetUInt64(hash_any_extended((unsigned char *) buf.c,
												  att->attlen, i));
		}
		else
			vh = DatumGetUInt64(hash_any_extended((unsigned char *) DatumGetPointer(values[i]),
												  att->attlen, i));
		h = hash_combine64(h, vh);
	}
	return h;
}

/* Fingerprint of one (values, heap TID) pair */
static inline uint64
fingerprint(uint64 valueshash, ItemPointer tid)
{
	return DatumGetUInt64(hash_any_extended((unsigned char *) tid,
											sizeof(ItemPointerData),
											valueshash));
}

/* Fingerprint the data items of a checked leaf page */
static void
fingerprint_leaf(BtlCheckState *state, Page page, BTPageOpaque opaque)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;

	for (off = P_FIRSTDATAKEY(opaque); off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		IndexTuple	itup;
		uint64		h;
		uint64		fp;

		/* Killed items are not expected to be seen; see file header */
		if (ItemIdIsDead(iid))
			continue;
		itup = (IndexTuple) PageGetItem(page, iid);
		h = values_hash(state, itup);
		if (BTreeTupleIsPosting(itup))
		{
			for (int i = 0; i < BTreeTupleGetNPosting(itup); i++)
			{
				fp = fingerprint(h, BTreeTupleGetPostingN(itup, i));
				(void) hash_search(state->fingerprints, &fp, HASH_ENTER, NULL);
			}
		}
		else
		{
			fp = fingerprint(h, &itup->t_tid);
			(void) hash_search(state->fingerprints, &fp, HASH_ENTER, NULL);
		}
	}
}

/*
 * Is the internal page (checked, in state->cur) the top of a page deletion
 * that was interrupted after its leaf was marked half-dead?  nbtree then has
 * removed the page's downlink but not yet unlinked it: each page down from
 * it has a single downlink, and the leaf at the bottom is half-dead.
 */
static bool
is_deletion_top(BtlCheckState *state, BlockNumber blkno, Page page)
{
	BTPageOpaque opaque = BTPageGetOpaque(page);
	uint32		level = opaque->btpo_level;

	while (level > 0)
	{
		OffsetNumber first = P_FIRSTDATAKEY(opaque);
		BlockNumber child;

		if (PageGetMaxOffsetNumber(page) != first)
			return false;
		child = BTreeTupleGetDownLink((IndexTuple)
									  PageGetItem(page, PageGetItemId(page, first)));
		if (!link_in_range(state, blkno, child))
			return false;
		read_page_copy(state, child, state->other);
		page = state->other;
		opaque = check_page_header(state, child, page);
		if (opaque->btpo_level != level - 1)
			return false;
		if (opaque->btpo_level == 0)
			return P_ISLEAF(opaque) && P_ISHALFDEAD(opaque);
		if (P_IGNORE(opaque))
			return false;
		check_items(state, child, page, opaque);
		blkno = child;
		level--;
	}
	return false;
}

/*
 * Downlinks of a checked internal page (in state->cur): each to a live page
 * one level down whose keys lie between the separator and the next one.
 */
static void
check_children(BtlCheckState *state, BlockNumber blkno, Page page,
			   BTPageOpaque opaque)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber off;

	for (off = P_FIRSTDATAKEY(opaque); off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		BlockNumber child = BTreeTupleGetDownLink(itup);
		Page		cpage = state->child;
		BTPageOpaque copaque;
		OffsetNumber cfirst;
		bool		last = (off == maxoff);

		CHECK_FOR_INTERRUPTS();

		if (!link_in_range(state, blkno, child))
			report_corruption(errmsg("index \"%s\" has corrupted downlink at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("The downlink points to block %u; the index has %u blocks.",
										child, state->nblocks));
		read_page_copy(state, child, cpage);
		copaque = check_page_header(state, child, cpage);
		if (P_IGNORE(copaque))
			report_corruption(errmsg("index \"%s\" has corrupted downlink at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("The downlink points to block %u, which is %s.",
										child,
										P_ISDELETED(copaque) ? "deleted" : "half-dead"));
		if (copaque->btpo_level != opaque->btpo_level - 1 ||
			P_ISLEAF(copaque) != (copaque->btpo_level == 0))
			report_corruption(errmsg("index \"%s\" has corrupted downlink at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("The downlink from level %u points to block %u, a %s page at level %u.",
										opaque->btpo_level, child,
										P_ISLEAF(copaque) ? "leaf" : "internal",
										copaque->btpo_level));
		if (++state->downlinks[child] > 1)
			report_corruption(errmsg("index \"%s\" has corrupted downlink at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("Block %u is the target of more than one downlink.",
										child));
		check_items(state, child, cpage, copaque);

		/* The separator is not above the child's first key */
		cfirst = first_keyed_item(cpage, copaque);
		if (off > P_FIRSTDATAKEY(opaque) && cfirst != InvalidOffsetNumber &&
			!tuple_le(state, page, off, cpage, cfirst))
			report_corruption(errmsg("index \"%s\" has corrupted downlink at block %u, offset %u",
									 INDEXNAME(state), blkno, off),
							  errdetail("The first key of child block %u (offset %u) is below the downlink's separator.",
										child, cfirst));

		/*
		 * The child's high key is the next separator, or the parent's high
		 * key; only the last child of the rightmost page of a level has
		 * none.  A child whose split is incomplete has the high key of its
		 * left half, below the bound.
		 */
		if (P_RIGHTMOST(copaque))
		{
			if (!last || !P_RIGHTMOST(opaque))
				report_corruption(errmsg("index \"%s\" has corrupted downlink at block %u, offset %u",
										 INDEXNAME(state), blkno, off),
								  errdetail("Child block %u is the rightmost page of its level, but the downlink to it is not the last of its level.",
											child));
		}
		else if (last && P_RIGHTMOST(opaque))
		{
			if (!P_INCOMPLETE_SPLIT(copaque))
				report_corruption(errmsg("index \"%s\" has corrupted downlink at block %u, offset %u",
										 INDEXNAME(state), blkno, off),
								  errdetail("The downlink is the last of its level, but child block %u has a right sibling.",
											child));
		}
		else
		{
			OffsetNumber bound = last ? P_HIKEY : OffsetNumberNext(off);

			if (!tuple_le(state, cpage, P_HIKEY, page, bound))
				report_corruption(errmsg("index \"%s\" has corrupted downlink at block %u, offset %u",
										 INDEXNAME(state), blkno, off),
								  errdetail("The high key of child block %u is above the %s.",
											child, last ? "parent's high key" : "next separator"));
			if (!P_INCOMPLETE_SPLIT(copaque) &&
				!tuple_le(state, page, bound, cpage, P_HIKEY))
				report_corruption(errmsg("index \"%s\" has corrupted downlink at block %u, offset %u",
										 INDEXNAME(state), blkno, off),
								  errdetail("The high key of child block %u is below the %s.",
											child, last ? "parent's high key" : "next separator"));
		}
	}
}

/*
 * Check one level, from its leftmost page to its rightmost, starting from
 * start (the root, or the target of the leftmost downlink of the level
 * above, which is the leftmost page unless a deletion was interrupted).
 * Returns the leftmost downlink of the level, or P_NONE for the leaves.
 */
static BlockNumber
check_level(BtlCheckState *state, BlockNumber start, uint32 level,
			bool rootlevel)
{
	BlockNumber blkno = start;
	BlockNumber prevblk = P_NONE;
	uint16		prevflags = 0;
	bool		have_prevlive = false;
	BlockNumber prevliveblk = P_NONE;
	BlockNumber nextlevel = InvalidBlockNumber;
	BlockNumber steps = 0;
	BTPageOpaque opaque;

	/* Find the leftmost page: pages of an interrupted deletion may be left */
	read_page_copy(state, blkno, state->other);
	opaque = check_page_header(state, blkno, state->other);
	while (opaque->btpo_prev != P_NONE)
	{
		BlockNumber left = opaque->btpo_prev;

		CHECK_FOR_INTERRUPTS();
		check_sibling_link(state, blkno, left, "left");
		if (rootlevel)
			report_corruption(errmsg("index \"%s\" has corrupted sibling link at block %u",
									 INDEXNAME(state), blkno),
							  errdetail("The root page has a left sibling, block %u.", left));
		if (++steps > state->nblocks)
			report_corruption(errmsg("index \"%s\" has corrupted sibling link at block %u",
									 INDEXNAME(state), blkno),
							  errdetail("Left sibling links at level %u form a cycle.", level));
		read_page_copy(state, left, state->other);
		opaque = check_page_header(state, left, state->other);
		if (opaque->btpo_next != blkno)
			report_corruption(errmsg("index \"%s\" has corrupted sibling link at block %u",
									 INDEXNAME(state), left),
							  errdetail("Block %u has left sibling %u, whose right sibling is block %u.",
										blkno, left, opaque->btpo_next));
		blkno = left;
	}

	for (;;)
	{
		MemoryContext oldcxt;
		BlockNumber next;
		uint16		flags;
		bool		live;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(state->pagecxt);
		oldcxt = MemoryContextSwitchTo(state->pagecxt);

		read_page_copy(state, blkno, state->cur);
		opaque = check_page_header(state, blkno, state->cur);
		if (P_ISDELETED(opaque))
			report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
									 INDEXNAME(state), blkno),
							  errdetail("The page is deleted, but it is linked in level %u.",
										level));
		if (opaque->btpo_prev != prevblk)
			report_corruption(errmsg("index \"%s\" has corrupted sibling link at block %u",
									 INDEXNAME(state), blkno),
							  errdetail("Its left sibling link is %u, but it is the right sibling of block %u.",
										opaque->btpo_prev, prevblk));
		if (opaque->btpo_level != level || P_ISLEAF(opaque) != (level == 0))
			report_corruption(errmsg("index \"%s\" has corrupted level at block %u",
									 INDEXNAME(state), blkno),
							  errdetail("The %s page says level %u, but it is linked in level %u.",
										P_ISLEAF(opaque) ? "leaf" : "internal",
										opaque->btpo_level, level));

		/* Right links cannot cycle back, nor lead to a page seen before */
		if (state->visited[blkno])
			report_corruption(errmsg("index \"%s\" has corrupted sibling link at block %u",
									 INDEXNAME(state), prevblk),
							  errdetail("It leads to block %u, which the walk of level %u has already reached.",
										blkno, level));
		state->visited[blkno] = true;

		if (P_ISHALFDEAD(opaque) && !P_ISLEAF(opaque))
			report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
									 INDEXNAME(state), blkno),
							  errdetail("An internal page is marked half-dead."));

		/*
		 * The root is flagged as such, except while the split of its left
		 * half is incomplete: then its right half is also at the root
		 * level, and the flag is gone until the new root is made.
		 */
		if (blkno == state->root)
		{
			if (!P_ISROOT(opaque) && !P_INCOMPLETE_SPLIT(opaque))
				report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
										 INDEXNAME(state), blkno),
								  errdetail("The root page named by the metapage is not flagged as root."));
		}
		else if (P_ISROOT(opaque))
			report_corruption(errmsg("index \"%s\" has corrupted page at block %u",
									 INDEXNAME(state), blkno),
							  errdetail("The page is flagged as root, but the metapage names block %u as root.",
										state->root));
		else if (rootlevel && !(prevblk == state->root &&
								(prevflags & BTP_INCOMPLETE_SPLIT)))
			report_corruption(errmsg("index \"%s\" has corrupted sibling link at block %u",
									 INDEXNAME(state), prevblk),
							  errdetail("Block %u is a sibling of the root.", blkno));

		live = !P_IGNORE(opaque);
		if (live)
		{
			check_items(state, blkno, state->cur, opaque);
			check_page_order(state, blkno, state->cur, opaque);

			/* One downlink, except where nbtree leaves none */
			if (!rootlevel && state->downlinks[blkno] != 1 &&
				!(state->downlinks[blkno] == 0 &&
				  ((prevflags & BTP_INCOMPLETE_SPLIT) ||
				   (!P_ISLEAF(opaque) &&
					is_deletion_top(state, blkno, state->cur)))))
				report_corruption(errmsg("index \"%s\" has corrupted downlinks to block %u",
										 INDEXNAME(state), blkno),
								  errdetail("The page is the target of %u downlinks from level %u, expected 1.",
											state->downlinks[blkno], level + 1));

			/* The high key of the previous live page: not above our keys */
			if (have_prevlive)
			{
				OffsetNumber first = first_keyed_item(state->cur, opaque);

				if (first != InvalidOffsetNumber &&
					!tuple_le(state, state->prevlive, P_HIKEY, state->cur, first))
					report_corruption(errmsg("index \"%s\" has corrupted key order at block %u, offset %u",
											 INDEXNAME(state), blkno, first),
									  errdetail("The item is below the high key of block %u, the page to its left.",
												prevliveblk));
			}

			if (P_ISLEAF(opaque))
			{
				if (state->fingerprints != NULL)
					fingerprint_leaf(state, state->cur, opaque);
			}
			else
			{
				if (nextlevel == InvalidBlockNumber)
					nextlevel = BTreeTupleGetDownLink((IndexTuple)
													  PageGetItem(state->cur,
																  PageGetItemId(state->cur,
																				P_FIRSTDATAKEY(opaque))));
				check_children(state, blkno, state->cur, opaque);
			}
		}

		/* Move right */
		flags = opaque->btpo_flags;
		next = opaque->btpo_next;
		if (live)
		{
			char	   *tmp = state->prevlive;

			state->prevlive = state->cur;
			state->cur = tmp;
			have_prevlive = true;
			prevliveblk = blkno;
		}
		MemoryContextSwitchTo(oldcxt);

		if (next == P_NONE)
			break;
		check_sibling_link(state, blkno, next, "right");
		prevblk = blkno;
		prevflags = flags;
		blkno = next;
	}

	if (level == 0)
		return P_NONE;
	if (nextlevel == InvalidBlockNumber)
		report_corruption(errmsg("index \"%s\" has corrupted level %u",
								 INDEXNAME(state), level),
						  errdetail("The level has no live page."));
	return nextlevel;
}

/* The metapage; sets state->root and state->heapkeyspace */
static void
check_metapage(BtlCheckState *state, BTMetaPageData *meta)
{
	Page		page = state->cur;
	BTMetaPageData *metad;
	BTPageOpaque opaque;

	read_page_copy(state, BTREE_METAPAGE, page);
	if (PageIsNew(page) ||
		((PageHeader) page)->pd_special != BLCKSZ - BTL_SPECIAL_SIZE ||
		((PageHeader) page)->pd_lower < SizeOfPageHeaderData + sizeof(BTMetaPageData) ||
		!P_ISMETA(BTPageGetOpaque(page)))
		report_corruption(errmsg("index \"%s\" has corrupted metapage",
								 INDEXNAME(state)),
						  errdetail("Block 0 is not an nbtree metapage."));
	metad = BTPageGetMeta(page);
	if (metad->btm_magic != BTREE_MAGIC)
		report_corruption(errmsg("index \"%s\" has corrupted metapage",
								 INDEXNAME(state)),
						  errdetail("Magic number %08X, expected %08X.",
									metad->btm_magic, BTREE_MAGIC));
	if (metad->btm_version < BTREE_MIN_VERSION ||
		metad->btm_version > BTREE_VERSION)
		report_corruption(errmsg("index \"%s\" has corrupted metapage",
								 INDEXNAME(state)),
						  errdetail("Version %u, expected %u to %u.",
									metad->btm_version, BTREE_MIN_VERSION,
									BTREE_VERSION));
	if (metad->btm_allequalimage && metad->btm_version < BTREE_VERSION)
		report_corruption(errmsg("index \"%s\" has corrupted metapage",
								 INDEXNAME(state)),
						  errdetail("Deduplication is marked safe in a version %u index.",
									metad->btm_version));
	if ((metad->btm_root == P_NONE) != (metad->btm_fastroot == P_NONE) ||
		(metad->btm_root != P_NONE &&
		 (!link_in_range(state, BTREE_METAPAGE, metad->btm_root) ||
		  !link_in_range(state, BTREE_METAPAGE, metad->btm_fastroot))) ||
		metad->btm_fastlevel > metad->btm_level ||
		(metad->btm_root == P_NONE && metad->btm_level != 0))
		report_corruption(errmsg("index \"%s\" has corrupted metapage",
								 INDEXNAME(state)),
						  errdetail("Root block %u at level %u, fast root block %u at level %u; the index has %u blocks.",
									metad->btm_root, metad->btm_level,
									metad->btm_fastroot, metad->btm_fastlevel,
									state->nblocks));
	memcpy(meta, metad, sizeof(BTMetaPageData));

	state->root = meta->btm_root;
	state->heapkeyspace = meta->btm_version >= BTREE_VERSION;
	if (meta->btm_root == P_NONE || state->in_recovery)
		return;

	/* The root and fast root are at the levels the metapage says */
	read_page_copy(state, meta->btm_root, page);
	opaque = check_page_header(state, meta->btm_root, page);
	if (opaque->btpo_level != meta->btm_level || P_IGNORE(opaque))
		report_corruption(errmsg("index \"%s\" has corrupted metapage",
								 INDEXNAME(state)),
						  errdetail("The metapage gives level %u for root block %u, which is at level %u%s.",
									meta->btm_level, meta->btm_root,
									opaque->btpo_level,
									P_IGNORE(opaque) ? " and deleted" : ""));
	read_page_copy(state, meta->btm_fastroot, page);
	opaque = check_page_header(state, meta->btm_fastroot, page);
	if (opaque->btpo_level != meta->btm_fastlevel || P_IGNORE(opaque))
		report_corruption(errmsg("index \"%s\" has corrupted metapage",
								 INDEXNAME(state)),
						  errdetail("The metapage gives level %u for fast root block %u, which is at level %u%s.",
									meta->btm_fastlevel, meta->btm_fastroot,
									opaque->btpo_level,
									P_IGNORE(opaque) ? " and deleted" : ""));
}

/*
 * During recovery: every page after the metapage on its own.  A page never
 * initialized (the file was extended, then the server crashed) or deleted
 * or half-dead has no items to check.
 */
static void
check_each_page(BtlCheckState *state)
{
	for (BlockNumber blkno = BTREE_METAPAGE + 1; blkno < state->nblocks; blkno++)
	{
		MemoryContext oldcxt;
		BTPageOpaque opaque;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(state->pagecxt);
		oldcxt = MemoryContextSwitchTo(state->pagecxt);
		read_page_copy(state, blkno, state->cur);
		if (!PageIsNew(state->cur))
		{
			opaque = check_page_header(state, blkno, state->cur);
			if (!P_IGNORE(opaque))
			{
				check_items(state, blkno, state->cur, opaque);
				check_page_order(state, blkno, state->cur, opaque);
			}
		}
		MemoryContextSwitchTo(oldcxt);
	}
}

/* table_index_build_scan() callback: the heap tuple's index tuple exists */
static void
heap_tuple_callback(Relation index, ItemPointer tid, Datum *values,
					bool *isnull, bool tupleIsAlive, void *arg)
{
	BtlCheckState *state = (BtlCheckState *) arg;
	MemoryContext oldcxt = MemoryContextSwitchTo(state->pagecxt);
	IndexTuple	itup;
	uint64		fp;
	bool		found;

	itup = index_form_tuple(RelationGetDescr(index), values, isnull);
	fp = fingerprint(values_hash(state, itup), tid);
	(void) hash_search(state->fingerprints, &fp, HASH_FIND, &found);
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) from table \"%s\" lacks matching index tuple within index \"%s\"",
						ItemPointerGetBlockNumber(tid),
						ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(state->heap),
						RelationGetRelationName(index))));
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(state->pagecxt);
}

/* The whole check, under the caller's locks and user */
static void
check_index(Relation index, Relation heap, bool heapallindexed,
			bool in_recovery)
{
	BtlCheckState state = {0};
	BTMetaPageData meta;
	Snapshot	snapshot = InvalidSnapshot;
	MemoryContext hashcxt = NULL;

	Assert(!(heapallindexed && in_recovery));
	state.index = index;
	state.heap = heap;
	state.in_recovery = in_recovery;
	state.nblocks = RelationGetNumberOfBlocks(index);
	if (state.nblocks == 0)
		report_corruption(errmsg("index \"%s\" has corrupted metapage",
								 RelationGetRelationName(index)),
						  errdetail("The index has no blocks."));
	state.strategy = GetAccessStrategy(BAS_BULKREAD);
	state.pagecxt = AllocSetContextCreate(CurrentMemoryContext,
										  "btlayout_check page",
										  ALLOCSET_DEFAULT_SIZES);
	state.visited = MemoryContextAllocExtended(CurrentMemoryContext,
											   sizeof(bool) * state.nblocks,
											   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	state.downlinks = MemoryContextAllocExtended(CurrentMemoryContext,
												 sizeof(uint32) * state.nblocks,
												 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	state.cur = palloc(BLCKSZ);
	state.prevlive = palloc(BLCKSZ);
	state.child = palloc(BLCKSZ);
	state.other = palloc(BLCKSZ);

	check_metapage(&state, &meta);

	if (heapallindexed)
	{
		HASHCTL		ctl;

		/*
		 * The snapshot is taken before the index is read, so every tuple it
		 * sees was in the index by then.  A transaction snapshot older than
		 * the index's own horizon could see tuples the index need not hold.
		 */
		snapshot = RegisterSnapshot(GetTransactionSnapshot());
		if (IsolationUsesXactSnapshot() && index->rd_index->indcheckxmin &&
			!TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data),
								   snapshot->xmin))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("index \"%s\" cannot be verified using transaction snapshot",
							RelationGetRelationName(index))));

		hashcxt = AllocSetContextCreate(CurrentMemoryContext,
										"btlayout_check fingerprints",
										ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = sizeof(uint64);
		ctl.entrysize = sizeof(uint64);
		ctl.hcxt = hashcxt;
		state.fingerprints = hash_create("btlayout_check fingerprints",
										 Max(1024, (long) Min(heap->rd_rel->reltuples, 1e7)),
										 &ctl,
										 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	/* Every level, from the root down; or every page during recovery */
	if (in_recovery)
		check_each_page(&state);
	else if (meta.btm_root != P_NONE)
	{
		BlockNumber start = meta.btm_root;
		uint32		level = meta.btm_level;

		for (;;)
		{
			start = check_level(&state, start, level, level == meta.btm_level);
			if (level == 0)
				break;
			level--;
		}

		/* Every downlink led to a page of the walk, as did the fast root */
		for (BlockNumber blkno = 0; blkno < state.nblocks; blkno++)
			if (state.downlinks[blkno] > 0 && !state.visited[blkno])
				report_corruption(errmsg("index \"%s\" has corrupted sibling links around block %u",
										 RelationGetRelationName(index), blkno),
								  errdetail("A downlink points to the block, but its level's sibling links do not reach it."));
		if (!state.visited[meta.btm_fastroot])
			report_corruption(errmsg("index \"%s\" has corrupted metapage",
									 RelationGetRelationName(index)),
							  errdetail("Fast root block %u is not reached from the root.",
										meta.btm_fastroot));
	}

	/* Every heap tuple visible to the snapshot has its index tuple */
	if (heapallindexed)
	{
		IndexInfo  *indexInfo = BuildIndexInfo(index);
		TableScanDesc scan;

		/* As CREATE INDEX CONCURRENTLY's first scan; no uniqueness waits */
		scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, true);
		indexInfo->ii_Concurrent = true;
		indexInfo->ii_Unique = false;
		indexInfo->ii_ExclusionOps = NULL;
		indexInfo->ii_ExclusionProcs = NULL;
		indexInfo->ii_ExclusionStrats = NULL;
		MemoryContextReset(state.pagecxt);
		table_index_build_scan(heap, index, indexInfo, true, false,
							   heap_tuple_callback, &state, scan);
		UnregisterSnapshot(snapshot);
		hash_destroy(state.fingerprints);
		MemoryContextDelete(hashcxt);
	}

	FreeAccessStrategy(state.strategy);
	MemoryContextDelete(state.pagecxt);
	pfree(state.visited);
	pfree(state.downlinks);
	pfree(state.cur);
	pfree(state.prevlive);
	pfree(state.child);
	pfree(state.other);
}

PG_FUNCTION_INFO_V1(btlayout_check);

/*
 * btlayout_check(index regclass, heapallindexed bool DEFAULT false)
 *
 * Returns nothing if the index is sound; raises the first corruption found
 * as an error with ERRCODE_INDEX_CORRUPTED.
 */
Datum
btlayout_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	Oid			heapoid;
	Relation	heap = NULL;
	Relation	index;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	bool		in_recovery = RecoveryInProgress();
	LOCKMODE	lockmode = in_recovery ? AccessShareLock : ShareLock;

	if (heapallindexed && in_recovery)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("heapallindexed cannot be checked during recovery"),
				 errhint("Check the index on the primary, or without heapallindexed here: then each page is checked on its own.")));

	/*
	 * The lock on the table first, then the index, the order everyone else
	 * takes them in.  If indexoid is not an index, btl_open_index() says so.
	 */
	heapoid = IndexGetRelation(indexoid, true);
	if (OidIsValid(heapoid))
		heap = table_open(heapoid, lockmode);
	index = btl_open_index(indexoid, lockmode, false);

	/* The index may have been dropped and its OID reused before we locked */
	if (heap == NULL || heapoid != IndexGetRelation(indexoid, false))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("could not open the table of index \"%s\"",
						RelationGetRelationName(index))));
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot check index \"%s\"",
						RelationGetRelationName(index)),
				 errdetail("Index is not valid.")));

	/*
	 * Comparison and index expression functions run as the table's owner,
	 * in a restricted context, with GUC changes undone, as in VACUUM.
	 */
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(heap->rd_rel->relowner,
						   save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();

	check_index(index, heap, heapallindexed, in_recovery);

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	index_close(index, lockmode);
	table_close(heap, lockmode);

	PG_RETURN_VOID();
}
