/*-------------------------------------------------------------------------
 *
 * upper.c
 *	  A backend-local copy of the upper levels of an index: the internal
 *	  pages its descents have read, so that a lookup can find its leaf
 *	  without pinning and locking every level again.
 *
 * A descent locks each internal page it passes through in turn, and its
 * buffer pins, content locks and the buffer-mapping lookups behind them
 * are the cost of every level above the leaf, at every lookup.  The upper
 * levels of a hot index change rarely (a page split adds a downlink; a
 * page deletion removes one), so a backend keeps an image of each internal
 * page its ordinary descents read, made under the page's read
 * lock, and the next lookup searches those images down to a leaf's block
 * number, then reads and locks only the leaf.
 *
 * Nothing the copy says is trusted.  A copy can be stale in every way:
 * the leaf it names may have split, been deleted, recycled as a page
 * elsewhere in the key space or on another level.  So the leaf is read
 * under its read lock and must prove that it is the very page an ordinary
 * descent would end on (btl_search() in search.c gives the argument);
 * if it does not, its lock and pin are released and the ordinary descent
 * runs, refreshing the copy of each internal page it reads.  The blocks a
 * copy names are blocks of the index's relation file that existed when
 * their downlinks were read; nbtree never truncates an index, and a new
 * relation file (REINDEX, TRUNCATE) gets a new copy: copies are found by
 * the index's OID and relation file, and a relcache invalidation of the
 * index (which REINDEX, TRUNCATE, DROP and every catalog update of the
 * index send) ends the use of its copy at once and frees it when no lookup
 * is under way (indexstate.c).
 *
 * Images: a page is kept without its free space (make_image()), in the
 * form every reader of a page reads, line pointers and all; and for an
 * index whose one key column compares as bytes (text under "C", bytea,
 * the BIN classes), without the bytes all keys of the page share, stored
 * once after it: the pages above the leaves of an index of long keys with
 * long common prefixes (URLs, paths) then take a fraction of their size.
 * A copy made so serves only keys that compare as bytes (search.c); any
 * other key takes the ordinary descent.
 *
 * Keys: for an index whose key columns all have a normalized encoding
 * (normkey.c: integers, date and time types, oid, bool, "char", floats,
 * uuid, and strings compared as bytes, in any number of columns, DESC,
 * NULLS FIRST or LAST), but for the one column of bytes above, an image
 * also holds its pivots' normalized keys: the bytes they all share once,
 * then a 4- or 8-byte head per pivot and the downlinks in arrays, a
 * search of a few cache lines instead of the page's items, their line
 * pointers and tuples (btl_nk_search(), which gives the argument).  The
 * keys are made from the page under its lock with the image, by byte
 * encodings only; a page whose items are not pivots the encoding takes
 * gets none, and its image is searched as a page.
 * btlayout.upper_copy_keys = off, or the index option upper_copy_keys =
 * off, searches every image as a page (compare.c decides, per search
 * key).  Both shapes, keys and prefixes, are the index's (btl_nk_plan_of()
 * in normkey.c), whichever search makes a copy.
 *
 * Memory: one memory context holds every copy of the backend, each hung
 * on its index's entry (indexstate.c), with no limit on how many indexes
 * have one.  Everything in it (images, hash tables) counts, by the chunk
 * sizes it takes, against btlayout.upper_copy kilobytes per backend.  At
 * the cap, room is made a page at a time: an eviction hand goes round all
 * images of all copies and takes those no lookup has used for a while
 * (make_room() says how long, and why a miss's work stays bounded); if it
 * finds none, the copies stop taking images for a while, and a walk that
 * reaches a page its copy lacks searches that page in its buffer
 * (search_copy() in search.c).  An index the backend stops using thus
 * gives its room back page by page to the indexes it uses now, and a set
 * of indexes whose upper levels fit is never evicted, however many
 * indexes that is.  A copy goes whole only at a relcache invalidation of
 * its index (REINDEX, TRUNCATE, DROP, a changed option, new statistics) or
 * with its entry (once the hand has taken its last image, the trimming of
 * entries not used lately, indexstate.c).
 * Changing the setting drops every copy.  0 turns copies off, and so does
 * an index's upper_copy option (compare.c decides per search key).
 *
 * Nothing is freed or replaced while a lookup may be reading it: a lookup
 * nested in another (a comparison function running a query) neither makes
 * nor evicts images, and copies are freed only when no lookup is under way
 * (indexstate.c).
 *
 * src/upper.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "common/hashfn.h"
#include "compare.h"
#include "normkey.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

/* Steps the eviction hand may take for one image (see make_room()) */
#define CLOCK_STEPS			32

/* Lookups without trying again after make_room() found nothing to evict */
#define FULL_BACKOFF		256

/*
 * Bytes a page's keys must share for its image to store them without
 * them (make_image()); a page whose keys share fewer gets normalized keys
 */
#define STRIP_MIN			16

/*
 * One page image: this header, then the compact page (MAXALIGNed), then
 * the prefix its keys were stored without (prefixlen bytes, none if 0).
 */
typedef struct UpperImage
{
	uint64		version;		/* the page's LSN when the image was made, or
								 * (!logged) its page_digest() */
	uint64		lastuse;		/* the lookup that used it last (lookups) */
	BtlUpperCopy *copy;			/* whose image it is */
	BlockNumber blkno;			/* of which page */
	uint32		ringpos;		/* where in ring[] */
	uint32		size;			/* bytes of the whole image, header included */
	uint16		prefixoff;		/* where the prefix is, from the page */
	uint16		prefixlen;
	uint32		keysoff;		/* where its keys (BtlNkKeys) are, from the
								 * image; 0: none */
	bool		logged;			/* made while the index was WAL-logged */
} UpperImage;

#define IMAGE_PAGE(img) ((Page) ((char *) (img) + MAXALIGN(sizeof(UpperImage))))

/*
 * The copy of one index (hung on its entry, indexstate.c): images by block
 * number, in an open-addressing hash table (linear probing) of nslots
 * slots, a power of two at least twice the pages held.
 */
struct BtlUpperCopy
{
	bool		bytewise;		/* keys stored without their page's prefix */
	BlockNumber start;			/* the top page descents searched last */
	uint32		nslots;
	uint32		npages;
	BlockNumber *blknos;		/* by slot; InvalidBlockNumber: empty */
	UpperImage **images;		/* by slot */
	BtlNkPlan	plan;			/* images have normalized keys of this
								 * encoding; plan.ncols 0: none.  Last: a
								 * copy is allocated with room for ncols
								 * columns only */
};

/* GUC btlayout.upper_copy: kilobytes of images per backend, 0 for none */
int			btl_upper_copy = 4096;

/* GUC btlayout.upper_copy_keys: search images through their keys */
bool		btl_upper_copy_keys = true;

/*
 * GUC btlayout.debug_fail_upper_alloc: for tests, the n-th allocation of
 * the copies' memory from now on fails as if out of memory (0: none), so
 * that every allocation a copy makes can be made to fail in turn.
 */
int			btl_debug_fail_upper_alloc = 0;
static int	allocs_until_failure;

/* Where every copy, table and image is allocated */
static MemoryContext upper_cxt;

/* Bytes of upper_cxt's chunks held by copies, tables, images and the ring */
static Size total_bytes;

/* Every image, in the order the eviction hand visits them */
static UpperImage **ring;
static uint32 nring;
static uint32 ring_size;
static uint32 hand;

/* Lookups that searched a copy, for the images' last use */
static uint64 lookups;

/* No image is admitted at the cap before this lookup (make_room()) */
static uint64 full_until;

/* Every copy is to go (the setting changed) */
static bool drop_all_pending;

/* The bytes all images may take, from btlayout.upper_copy */
static inline Size
max_bytes(void)
{
	return (Size) btl_upper_copy * 1024;
}

/* GUC assign hook of btlayout.debug_fail_upper_alloc */
void
btl_debug_fail_upper_alloc_assign(int newval, void *extra)
{
	allocs_until_failure = newval;
}

/* An allocation of the copies' memory is about to be made */
static inline void
before_alloc(void)
{
	if (unlikely(allocs_until_failure > 0) && --allocs_until_failure == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Failure injected by btlayout.debug_fail_upper_alloc.")));
}

static void *
upper_alloc(Size size)
{
	void	   *p;

	before_alloc();

	/*
	 * Small blocks: an allocation past a quarter of the largest block (an
	 * image of any but a small page) gets a block of its own, of its own
	 * size, given back to malloc when it is freed, so that the chunks
	 * counted are about the bytes asked for and evicted images leave no
	 * holes.
	 */
	if (upper_cxt == NULL)
		upper_cxt = AllocSetContextCreate(TopMemoryContext,
										  "btlayout upper levels",
										  ALLOCSET_SMALL_SIZES);
	p = MemoryContextAlloc(upper_cxt, size);
	total_bytes += GetMemoryChunkSpace(p);
	return p;
}

static void
upper_free(void *p)
{
	total_bytes -= GetMemoryChunkSpace(p);
	pfree(p);
}

/* Take img out of the ring and free it (its copy's slot is the caller's) */
static void
free_image(UpperImage *img)
{
	Assert(ring[img->ringpos] == img);
	ring[img->ringpos] = ring[--nring];
	ring[img->ringpos]->ringpos = img->ringpos;
	if (hand >= nring)
		hand = 0;
	img->copy->npages--;
	upper_free(img);
}

/* Free the copy of an index entry and all its images (indexstate.c) */
void
btl_upper_free_copy(BtlIndexState *state)
{
	BtlUpperCopy *copy = state->copy;

	if (copy == NULL)
		return;
	for (uint32 s = 0; s < copy->nslots; s++)
		if (copy->blknos[s] != InvalidBlockNumber)
			free_image(copy->images[s]);
	upper_free(copy->blknos);
	upper_free(copy->images);
	upper_free(copy);
	state->copy = NULL;
	btl_state_counters.copies_dropped++;
}

/* Has the copy no image left (indexstate.c may then drop its entry)? */
bool
btl_upper_copy_empty(const BtlUpperCopy *copy)
{
	return copy->npages == 0;
}

/*
 * Drop every copy if the setting changed (indexstate.c calls this when no
 * lookup is under way).
 */
void
btl_upper_sweep(void)
{
	if (!drop_all_pending)
		return;
	btl_index_state_drop_copies();
	drop_all_pending = false;
	full_until = 0;
}

/*
 * GUC assign hook of btlayout.upper_copy: a new cap starts from nothing.
 * A lookup may be searching a copy now (a comparison function can set
 * the setting), so the copies are dropped when none is under way: at the
 * start of the next lookup or at the end of the transaction, whichever
 * comes first (with 0, no lookup uses them, and the transaction's end
 * frees them).
 */
void
btl_upper_copy_assign(int newval, void *extra)
{
	drop_all_pending = true;
	btl_index_state_request_sweep();
}

/*
 * GUC assign hook of btlayout.upper_copy_sort_keys: the images of indexes
 * of text in a collation have keys or not by it, so the copies go, as for
 * btlayout.upper_copy.
 */
void
btl_upper_copy_sort_keys_assign(int newval, void *extra)
{
	btl_upper_copy_assign(0, NULL);
}

/* The copy of rel; NULL if it has none, or if its entry is stale */
BtlUpperCopy *
btl_upper_copy_of(Relation rel)
{
	BtlIndexState *state = btl_index_state(rel);

	lookups++;
	return state->stale ? NULL : state->copy;
}

/*
 * Can the copies take more images: is the cap not reached, or did
 * make_room() find an image to evict the last time it looked?
 */
bool
btl_upper_can_grow(void)
{
	return lookups >= full_until;
}

/*
 * The block the descents of the copy start from: the first page the last
 * ordinary descent searched, or InvalidBlockNumber while no descent has
 * searched its first page since the copy was made.
 */
BlockNumber
btl_upper_start(const BtlUpperCopy *copy)
{
	return copy->start;
}

static inline uint32
slot_of(const BtlUpperCopy *copy, BlockNumber blkno)
{
	return murmurhash32(blkno) & (copy->nslots - 1);
}

/*
 * The image of block blkno in the copy, or NULL if it holds none (as for
 * InvalidBlockNumber, the start of a copy made below the top of a descent,
 * which marks empty slots).  Its keys were stored without the *prefixlen
 * bytes at *prefix (0: whole); *keys are its pivots' normalized keys, or
 * NULL if it has none.  The image counts as used by this lookup.
 */
Page
btl_upper_page(const BtlUpperCopy *copy, BlockNumber blkno,
			   const char **prefix, int *prefixlen, const BtlNkKeys **keys)
{
	for (uint32 s = slot_of(copy, blkno);; s = (s + 1) & (copy->nslots - 1))
	{
		if (copy->blknos[s] == InvalidBlockNumber)
			return NULL;
		if (copy->blknos[s] == blkno)
		{
			UpperImage *img = copy->images[s];

			img->lastuse = lookups;
			*prefix = (const char *) IMAGE_PAGE(img) + img->prefixoff;
			*prefixlen = img->prefixlen;
			*keys = img->keysoff == 0 ? NULL :
				(const BtlNkKeys *) ((const char *) img + img->keysoff);
			return IMAGE_PAGE(img);
		}
	}
}

/* Does the copy store keys without their page's prefix? */
bool
btl_upper_bytewise(const BtlUpperCopy *copy)
{
	return copy->bytewise;
}

/* How the keys of the copy's images are encoded (ncols 0: they have none) */
const BtlNkPlan *
btl_upper_plan(const BtlUpperCopy *copy)
{
	return &copy->plan;
}

/* The empty hash table of nslots slots of a copy */
static void
alloc_table(uint32 nslots, BlockNumber **blknos, UpperImage ***images)
{
	*blknos = upper_alloc(nslots * sizeof(BlockNumber));
	memset(*blknos, 0xFF, nslots * sizeof(BlockNumber));
	PG_TRY();
	{
		*images = upper_alloc(nslots * sizeof(UpperImage *));
	}
	PG_CATCH();
	{
		upper_free(*blknos);
		PG_RE_THROW();
	}
	PG_END_TRY();
	memset(*images, 0, nslots * sizeof(UpperImage *));
}

/*
 * Make the (empty) copy of the index whose entry is state, whose key
 * columns encode by plan (btl_upper_remember()).  An index of one
 * ascending column compared as bytes is bytewise: the images of its pages
 * whose keys share a long prefix are stored without it, the others have
 * normalized keys, as the images of every other index whose columns all
 * encode.  Everything is allocated before the copy is hung on the entry:
 * an allocation that fails leaves none.
 */
static BtlUpperCopy *
new_copy(BtlIndexState *state, const BtlNkPlan *plan)
{
	bool		bytewise = plan->ncols == 1 &&
		plan->col[0].kind == BTL_CMP_BYTES && !plan->col[0].desc;
	int			ncols = plan->ncols;
	BtlUpperCopy *copy = upper_alloc(offsetof(BtlUpperCopy, plan) +
									 BTL_NK_PLAN_SIZE(ncols));

	PG_TRY();
	{
		alloc_table(16, &copy->blknos, &copy->images);
	}
	PG_CATCH();
	{
		upper_free(copy);
		PG_RE_THROW();
	}
	PG_END_TRY();
	copy->nslots = 16;
	copy->npages = 0;
	copy->bytewise = bytewise;
	memcpy(&copy->plan, plan, BTL_NK_PLAN_SIZE(ncols));
	copy->plan.ncols = ncols;
	copy->start = InvalidBlockNumber;
	state->copy = copy;
	return copy;
}

/*
 * Double the slots of copy's hash table.  The new table is allocated and
 * filled before the copy takes it: an allocation that fails leaves the
 * copy as it was.
 */
static void
grow_copy(BtlUpperCopy *copy)
{
	uint32		nslots = copy->nslots * 2;
	BlockNumber *blknos;
	UpperImage **images;

	alloc_table(nslots, &blknos, &images);
	for (uint32 i = 0; i < copy->nslots; i++)
	{
		uint32		s;

		if (copy->blknos[i] == InvalidBlockNumber)
			continue;
		for (s = murmurhash32(copy->blknos[i]) & (nslots - 1);
			 blknos[s] != InvalidBlockNumber;
			 s = (s + 1) & (nslots - 1))
			;
		blknos[s] = copy->blknos[i];
		images[s] = copy->images[i];
	}
	upper_free(copy->blknos);
	upper_free(copy->images);
	copy->blknos = blknos;
	copy->images = images;
	copy->nslots = nslots;
}

/*
 * Remove the image in slot s, moving the entries after it that linear
 * probing placed past their home slot back, so that every entry stays
 * reachable from its home slot without crossing an empty one.
 */
static void
remove_image(BtlUpperCopy *copy, uint32 s)
{
	uint32		mask = copy->nslots - 1;
	uint32		hole = s;

	free_image(copy->images[s]);
	for (uint32 j = (s + 1) & mask; copy->blknos[j] != InvalidBlockNumber;
		 j = (j + 1) & mask)
	{
		uint32		home = slot_of(copy, copy->blknos[j]);

		/* Stays if its home is cyclically in (hole, j] */
		if (hole <= j ? (hole < home && home <= j) : (hole < home || home <= j))
			continue;
		copy->blknos[hole] = copy->blknos[j];
		copy->images[hole] = copy->images[j];
		hole = j;
	}
	copy->blknos[hole] = InvalidBlockNumber;
	copy->images[hole] = NULL;
}

/* The slot of block blkno in the copy (its image's, or the empty one) */
static inline uint32
find_slot(const BtlUpperCopy *copy, BlockNumber blkno)
{
	uint32		s;

	for (s = slot_of(copy, blkno);
		 copy->blknos[s] != InvalidBlockNumber && copy->blknos[s] != blkno;
		 s = (s + 1) & (copy->nslots - 1))
		;
	return s;
}

/*
 * Is there room for size more bytes, for copy: if not, evict cold images,
 * of any copy but this one's page being made, one at a time.
 *
 * Eviction is by page, with a clock: the hand goes round every image of
 * every copy, and takes one that no lookup has used in the last
 * horizon lookups, horizon being eight times the images held (at least
 * 64).  An image of an index the backend has stopped using goes within
 * a few rounds; an image of a page lookups keep passing stays: when the
 * pages the lookups pass are more than the cap holds, which ones are kept
 * matters less than not making images over and over (each miss then costs
 * a page in its buffer, search_copy()), and as long as they are fewer than
 * eight times what it holds they are all used within the horizon.  One
 * call looks at CLOCK_STEPS images at most; if it finds none to take, no
 * image is admitted during the next FULL_BACKOFF lookups, which search the
 * pages the copies lack in their buffers.  So a miss costs a bounded
 * amount of work, however many indexes and images there are.
 */
static bool
make_room(Size size)
{
	uint64		horizon = Max((uint64) nring * 8, 64);
	int			steps = 0;

	while (total_bytes + size > max_bytes())
	{
		UpperImage *img;
		BtlUpperCopy *owner;

		if (nring == 0 || steps++ >= CLOCK_STEPS)
		{
			full_until = lookups + FULL_BACKOFF;
			btl_state_counters.copies_full++;
			return false;
		}
		if (hand >= nring)
			hand = 0;
		img = ring[hand];
		if (img->lastuse + horizon > lookups)
		{
			hand++;
			continue;
		}
		owner = img->copy;
		remove_image(owner, find_slot(owner, img->blkno));
		btl_state_counters.images_evicted++;
	}
	return true;
}

/* An item of the page an image is made of */
typedef struct ImageItem
{
	OffsetNumber offnum;
	uint16		off;			/* of its tuple on the page */
	uint16		len;			/* ... and its length */
	uint16		dataoff;		/* stripped: where its key's bytes start */
	uint16		datalen;		/* ... and how many there are; 0: copied whole */
} ImageItem;

static int
item_off_cmp(const void *a, const void *b)
{
	return (int) ((const ImageItem *) a)->off - (int) ((const ImageItem *) b)->off;
}

/*
 * The bytes of the key of pivot itup (len bytes long): the offset of its
 * first byte from itup and how many, if its only key attribute is a plain
 * varlena; else false.
 */
static bool
pivot_key_bytes(IndexTuple itup, int len, uint16 *dataoff, uint16 *datalen)
{
	int			hdr = MAXALIGN(sizeof(IndexTupleData));
	int			room = len - hdr;
	const char *data;
	int			dlen;

	if (!BTreeTupleIsPivot(itup) || IndexTupleHasNulls(itup) ||
		(ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) & BT_OFFSET_MASK) != 1)
		return false;
	if (BTreeTupleGetHeapTID(itup) != NULL)
		room -= sizeof(ItemPointerData);
	if (room < 1 || !btl_varlena_fits((const char *) itup + hdr, room) ||
		!btl_varlena_plain((const char *) itup + hdr, &data, &dlen))
		return false;
	*dataoff = (uint16) (data - (const char *) itup);
	*datalen = (uint16) dlen;
	return true;
}

/* The length of a pivot holding the last n bytes of its key */
static inline int
stripped_len(const IndexTuple itup, int n)
{
	int			vhdr = n + VARHDRSZ_SHORT <= VARATT_SHORT_MAX ?
		VARHDRSZ_SHORT : VARHDRSZ;
	int			len = MAXALIGN(MAXALIGN(sizeof(IndexTupleData)) + vhdr + n);

	if (BTreeTupleGetHeapTID(itup) != NULL)
		len += MAXALIGN(sizeof(ItemPointerData));
	return len;
}

/*
 * Make the image of internal page src (read-locked by the caller); NULL if
 * the page's header or line pointers are not those of an index
 * page, which the descent's own checks will report.
 *
 * The image is the page without its free space: the header and line
 * pointers, then the tuples in the order they sit on the page, packed, at
 * the offsets their line pointers now give, then the special space, with
 * pd_upper and pd_special saying where those are.  Whatever reads a page
 * through its header, line pointers and special space reads the image
 * alike, the layout's walk included (its slots keep their order and their
 * place after the item before them).  With bytewise, and if every pivot
 * with a key holds it as a plain varlena, the bytes all those keys share
 * are stored once, after the special space, and each of those pivots
 * holds the rest of its key (with its heap TID, if it has one): for keys
 * compared as bytes, a key that starts with that prefix compares with the
 * rest of a pivot as it compares with the whole pivot, and a key that does
 * not is below or above every pivot of the page (search.c).  That is done
 * when the keys share at least STRIP_MIN bytes (URLs, paths), where it
 * saves memory; otherwise, and for every other index whose columns a plan
 * encodes, the pivots' normalized keys follow the whole page, if the page
 * has them (btl_nk_measure() in normkey.c).
 */
static UpperImage *
make_image(Relation rel, Page src, bool bytewise, const BtlNkPlan *plan)
{
	PageHeader	hdr = (PageHeader) src;
	ImageItem	items[MaxIndexTuplesPerPage];
	int			nitems = 0;
	OffsetNumber maxoff;
	const char *first = NULL;
	int			prefixlen = bytewise ? BLCKSZ : 0;
	int			start;
	int			pos;
	Size		size;
	Size		keysoff;
	BtlNkBuild	build;
	Size		keyssize = 0;
	UpperImage *img;
	Page		page;

	if (hdr->pd_lower < SizeOfPageHeaderData || hdr->pd_lower > hdr->pd_upper ||
		hdr->pd_upper > hdr->pd_special ||
		hdr->pd_special != BLCKSZ - MAXALIGN(sizeof(BTPageOpaqueData)))
		return NULL;
	maxoff = PageGetMaxOffsetNumber(src);
	if (maxoff > MaxIndexTuplesPerPage)
		return NULL;

	for (OffsetNumber i = FirstOffsetNumber; i <= maxoff; i++)
	{
		ItemId		iid = PageGetItemId(src, i);
		ImageItem  *item = &items[nitems];

		if (!ItemIdHasStorage(iid))
			continue;
		item->offnum = i;
		item->off = ItemIdGetOffset(iid);
		item->len = ItemIdGetLength(iid);
		item->datalen = 0;
		if (item->off < hdr->pd_upper || item->off != MAXALIGN(item->off) ||
			item->len < sizeof(IndexTupleData) ||
			item->off + item->len > hdr->pd_special)
			return NULL;
		nitems++;

		/* The minus-infinity item has no key, and is copied whole */
		if (prefixlen > 0 &&
			!(BTreeTupleIsPivot((IndexTuple) (src + item->off)) &&
			  (ItemPointerGetOffsetNumberNoCheck(&((IndexTuple) (src + item->off))->t_tid) &
			   BT_OFFSET_MASK) == 0))
		{
			const char *data;
			int			common = 0;

			if (!pivot_key_bytes((IndexTuple) (src + item->off), item->len,
								 &item->dataoff, &item->datalen))
			{
				prefixlen = 0;
				continue;
			}
			data = src + item->off + item->dataoff;
			if (first == NULL)
				first = data;
			while (common < prefixlen && common < item->datalen &&
				   data[common] == first[common])
				common++;
			prefixlen = common;
		}
	}
	if (first == NULL || prefixlen < STRIP_MIN)
		prefixlen = 0;

	/* The tuples in their order on the page, and the image's size */
	qsort(items, nitems, sizeof(ImageItem), item_off_cmp);
	start = MAXALIGN(hdr->pd_lower);
	pos = start;
	for (int k = 0; k < nitems; k++)
	{
		if (prefixlen > 0 && items[k].datalen > 0)
			pos += stripped_len((IndexTuple) (src + items[k].off),
								items[k].datalen - prefixlen);
		else
			pos += MAXALIGN(items[k].len);
	}
	size = MAXALIGN(sizeof(UpperImage)) + pos +
		MAXALIGN(sizeof(BTPageOpaqueData)) + prefixlen;
	keysoff = MAXALIGN(size);
	if (plan->ncols > 0 && prefixlen == 0)
		keyssize = btl_nk_measure(rel, plan, src, &build);
	if (keyssize > 0)
		size = keysoff + keyssize;

	img = upper_alloc(size);
	img->size = (uint32) size;
	img->prefixlen = (uint16) prefixlen;
	img->keysoff = 0;
	if (keyssize > 0)
	{
		img->keysoff = (uint32) keysoff;
		btl_nk_write(&build, src, (BtlNkKeys *) ((char *) img + keysoff));
	}
	page = IMAGE_PAGE(img);
	memcpy(page, src, hdr->pd_lower);
	memset(page + hdr->pd_lower, 0, start - hdr->pd_lower);
	pos = start;
	for (int k = 0; k < nitems; k++)
	{
		ItemId		iid = PageGetItemId(page, items[k].offnum);
		IndexTuple	from = (IndexTuple) (src + items[k].off);
		int			len;

		if (prefixlen > 0 && items[k].datalen > 0)
		{
			IndexTuple	to = (IndexTuple) (page + pos);
			int			n = items[k].datalen - prefixlen;
			char	   *v = (char *) to + MAXALIGN(sizeof(IndexTupleData));

			len = stripped_len(from, n);
			memset(to, 0, len);
			to->t_tid = from->t_tid;
			to->t_info = (from->t_info & ~INDEX_SIZE_MASK) | len;
			if (n + VARHDRSZ_SHORT <= VARATT_SHORT_MAX)
			{
				SET_VARSIZE_SHORT(v, n + VARHDRSZ_SHORT);
				memcpy(v + VARHDRSZ_SHORT,
					   (const char *) from + items[k].dataoff + prefixlen, n);
			}
			else
			{
				SET_VARSIZE(v, n + VARHDRSZ);
				memcpy(v + VARHDRSZ,
					   (const char *) from + items[k].dataoff + prefixlen, n);
			}
			if (BTreeTupleGetHeapTID(from) != NULL)
				memcpy((char *) to + len - sizeof(ItemPointerData),
					   BTreeTupleGetHeapTID(from), sizeof(ItemPointerData));
		}
		else
		{
			len = items[k].len;
			memcpy(page + pos, from, len);
		}
		iid->lp_off = pos;
		iid->lp_len = len;
		pos += MAXALIGN(len);
	}
	((PageHeader) page)->pd_upper = start;
	((PageHeader) page)->pd_special = pos;
	memcpy(page + pos, src + hdr->pd_special, sizeof(BTPageOpaqueData));
	img->prefixoff = (uint16) (pos + MAXALIGN(sizeof(BTPageOpaqueData)));
	if (prefixlen > 0)
		memcpy(page + img->prefixoff, first, prefixlen);
	return img;
}

/*
 * A digest of what a page holds: its line pointers, its tuples and its
 * special space, not its free space nor its header (whose LSN and prune
 * hint say nothing of the downlinks).  For pages that change without their
 * LSN changing (btl_upper_remember()); make_image() refuses the page whose
 * bounds are wrong, so that digest is never kept.
 */
static uint64
page_digest(Page page)
{
	PageHeader	hdr = (PageHeader) page;
	uint64		h;

	if (hdr->pd_lower < SizeOfPageHeaderData || hdr->pd_lower > hdr->pd_upper ||
		hdr->pd_upper > BLCKSZ)
		return 0;
	h = hash_bytes_extended((const unsigned char *) hdr->pd_linp,
							hdr->pd_lower - SizeOfPageHeaderData, 0);
	return hash_bytes_extended((const unsigned char *) page + hdr->pd_upper,
							   BLCKSZ - hdr->pd_upper, h);
}

/*
 * An ordinary descent read internal page blkno of rel (buf, read-locked by
 * the caller): keep its image.  top says it is the first page the descent
 * searched, where the copy's descents will start.  plan is how the
 * index's key columns encode, the shape of a new copy, the index's whatever
 * the descent's key (btl_nk_plan_of() in normkey.c).  The caller works it
 * out before it locks a page: the first time for an index, that may read
 * the catalogs (for the comparators' functions), which no one does while
 * holding a buffer's content lock.
 */
void
btl_upper_remember(Relation rel, Buffer buf, bool top, const BtlNkPlan *plan)
{
	BtlIndexState *state;
	BtlUpperCopy *copy;
	BlockNumber blkno = BufferGetBlockNumber(buf);
	bool		logged = RelationNeedsWAL(rel);
	uint64		version;
	UpperImage *img;
	uint32		s;

	/*
	 * Not in a nested lookup (a comparison function's query): the outer one
	 * may be searching an image this would replace or evict.
	 */
	if (btl_lookup_nested())
		return;
	state = btl_index_state(rel);
	if (state->stale || btl_first_lookup(state))
		return;
	copy = state->copy;
	if (copy == NULL)
	{
		/*
		 * No copy is begun while no image may be made: its header and slot
		 * table would count against the cap with nothing in them, one per
		 * index the backoff meets.
		 */
		if (!btl_upper_can_grow())
			return;
		copy = new_copy(state, plan);
	}
	if (top)
		copy->start = blkno;
	s = find_slot(copy, blkno);

	/*
	 * Is the page unchanged since its image was made?  Every change of a
	 * page of a WAL-logged index sets its LSN, so while the index is logged,
	 * a page still at the LSN of its image (0 too: built without WAL at
	 * wal_level minimal, and not changed since) holds what the image holds.
	 * The pages of an index that is not logged (unlogged, temporary, or with
	 * a relation file made in this transaction at wal_level minimal) change
	 * without their LSN changing, and are compared by their digest instead,
	 * so that a descent does not make again the image of every unchanged
	 * page it passes.  An image made one way is never kept by the other's
	 * test: one made before a relation file was first logged may be of a
	 * page changed since at the same LSN.  Either test only decides whether
	 * to make an image again; an image kept though stale (two digests
	 * alike) is what every use of an image allows for.
	 */
	version = logged ? BufferGetLSNAtomic(buf) :
		page_digest(BufferGetPage(buf));
	if (copy->blknos[s] == blkno)
	{
		UpperImage *old = copy->images[s];

		old->lastuse = lookups;
		if (old->logged == logged && old->version == version)
			return;
		remove_image(copy, s);
		btl_state_counters.images_replaced++;
	}
	if (!btl_upper_can_grow())
		return;

	img = make_image(rel, BufferGetPage(buf), copy->bytewise, &copy->plan);
	if (img == NULL)
		return;
	img->version = version;
	img->logged = logged;
	img->lastuse = lookups;
	img->copy = copy;
	img->blkno = blkno;

	/*
	 * Everything the image needs is allocated before it is published: an
	 * allocation that fails leaves the copy and the ring as they were.
	 */
	PG_TRY();
	{
		if (!make_room(0))
		{
			upper_free(img);
			img = NULL;
		}
		else
		{
			if ((copy->npages + 1) * 2 > copy->nslots)
				grow_copy(copy);
			if (nring == ring_size)
			{
				uint32		size = Max(ring_size * 2, 64);
				UpperImage **bigger;

				/* counted against the cap, as the images it holds */
				bigger = upper_alloc(size * sizeof(UpperImage *));
				if (nring > 0)
					memcpy(bigger, ring, nring * sizeof(UpperImage *));
				if (ring != NULL)
					upper_free(ring);
				ring = bigger;
				ring_size = size;
			}
		}
	}
	PG_CATCH();
	{
		upper_free(img);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (img == NULL)
		return;

	s = find_slot(copy, blkno);
	copy->images[s] = img;
	copy->blknos[s] = blkno;
	copy->npages++;
	img->ringpos = nring;
	ring[nring++] = img;
	btl_state_counters.images_made++;
}

/*
 * The bytes of the copies' memory held (as counted against the cap) and
 * the images in it, now; for btlayout_backend_state()
 */
void
btl_upper_held(int64 *bytes, int64 *images)
{
	*bytes = (int64) total_bytes;
	*images = (int64) nring;
}

/*
 * btlayout_upper_copy_pages(): how many page images this backend holds for
 * the index (0 if none); for tests.
 */
PG_FUNCTION_INFO_V1(btlayout_upper_copy_pages);

Datum
btlayout_upper_copy_pages(PG_FUNCTION_ARGS)
{
	BtlIndexState *state = btl_index_state_by_oid(PG_GETARG_OID(0));

	PG_RETURN_INT32(state && state->copy ? (int32) state->copy->npages : 0);
}
