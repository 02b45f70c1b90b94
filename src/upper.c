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
 * page its ordinary descents read, copied whole under the page's read
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
 * index send) drops its copy (at the next lookup: see
 * btl_upper_invalidate()).
 *
 * Memory: the pages are copied into a memory context per index under
 * TopMemoryContext, at most btlayout.upper_copy kilobytes in all copies of
 * a backend; past that a descent drops the least recently used other
 * index's copy, and if it is the only one, stops adding pages to it
 * (a walk that reaches a page it lacks then searches that page in its
 * buffer: search_copy() in search.c).  At most
 * BTL_UPPER_COPIES indexes have copies; the least recently used makes room.
 * Changing the setting drops every copy.  0 turns copies off, and so does
 * an index's upper_copy option (compare.c decides per search key).
 *
 * src/upper.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "common/hashfn.h"
#include "utils/memutils.h"

/* Indexes whose upper levels a backend copies */
#define BTL_UPPER_COPIES	8

/*
 * The copy of one index: page images by block number, in an open-addressing
 * hash table (linear probing) of nslots slots, a power of two at least
 * twice the pages held.
 */
struct BtlUpperCopy
{
	Oid			indexoid;
	BtlRelFileLocator locator;	/* the index's relation file */
	MemoryContext cxt;			/* holds everything below; NULL: slot free */
	BlockNumber start;			/* the top page descents searched last */
	uint32		nslots;
	uint32		npages;
	BlockNumber *blknos;		/* by slot; InvalidBlockNumber: empty */
	char	  **pages;			/* by slot */
	uint64		lastuse;
	bool		dropped;		/* invalidated; freed by the next lookup */
};

/* GUC btlayout.upper_copy: kilobytes of page images per backend, 0 for none */
int			btl_upper_copy = 4096;

static BtlUpperCopy copies[BTL_UPPER_COPIES];
static BtlUpperCopy *last_copy;
static uint32 total_pages;
static uint64 use_counter;
static bool drops_pending = false;

static void
drop_copy(BtlUpperCopy *copy)
{
	if (copy->cxt == NULL)
		return;
	total_pages -= copy->npages;
	MemoryContextDelete(copy->cxt);
	copy->cxt = NULL;
	copy->npages = 0;
	copy->dropped = false;
	if (last_copy == copy)
		last_copy = NULL;
}

/* Free the copies invalidation has dropped */
static void
sweep(void)
{
	for (int i = 0; i < BTL_UPPER_COPIES; i++)
		if (copies[i].dropped)
			drop_copy(&copies[i]);
	drops_pending = false;
}

/*
 * Relcache invalidation of relid, or of every relation (InvalidOid);
 * registered by _PG_init().  The copies are only marked: a lookup that is
 * searching one of them can get here (a comparison function's catalog
 * lookup takes a lock, which accepts invalidation messages), so the memory
 * stays until the next lookup begins, and the one under way finishes on
 * the images it has, whose answer its leaf still has to prove.
 */
void
btl_upper_invalidate(Datum arg, Oid relid)
{
	for (int i = 0; i < BTL_UPPER_COPIES; i++)
		if (copies[i].cxt != NULL &&
			(relid == InvalidOid || copies[i].indexoid == relid))
		{
			copies[i].dropped = true;
			drops_pending = true;
		}
}

/* GUC assign hook of btlayout.upper_copy: a new cap starts from nothing */
void
btl_upper_copy_assign(int newval, void *extra)
{
	btl_upper_invalidate((Datum) 0, InvalidOid);
}

/* The maximum number of page images, from btlayout.upper_copy */
static inline uint32
max_pages(void)
{
	return (uint32) ((int64) btl_upper_copy * 1024 / BLCKSZ);
}

/*
 * The copy of rel, or NULL if it has none.  The last one used is tried
 * first.
 */
BtlUpperCopy *
btl_upper_copy_of(Relation rel)
{
	BtlUpperCopy *copy;

	if (unlikely(drops_pending))
		sweep();
	copy = last_copy;
	if (copy == NULL || copy->indexoid != RelationGetRelid(rel) ||
		memcmp(&copy->locator, BtlRelationLocator(rel),
			   sizeof(BtlRelFileLocator)) != 0)
	{
		copy = NULL;
		for (int i = 0; i < BTL_UPPER_COPIES; i++)
		{
			if (copies[i].cxt != NULL &&
				copies[i].indexoid == RelationGetRelid(rel) &&
				memcmp(&copies[i].locator, BtlRelationLocator(rel),
					   sizeof(BtlRelFileLocator)) == 0)
			{
				copy = &copies[i];
				break;
			}
		}
		if (copy == NULL)
			return NULL;
		last_copy = copy;
	}
	copy->lastuse = ++use_counter;
	return copy;
}

/*
 * Can the copy take another page image: is it below the cap, or does some
 * other copy hold images that make_room() would drop for it?
 */
bool
btl_upper_can_grow(const BtlUpperCopy *copy)
{
	return total_pages < max_pages() || copy->npages < total_pages;
}

/* The block the descents of the copy start from */
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

/* The image of block blkno in the copy, or NULL if it holds none */
Page
btl_upper_page(const BtlUpperCopy *copy, BlockNumber blkno)
{
	for (uint32 s = slot_of(copy, blkno);; s = (s + 1) & (copy->nslots - 1))
	{
		if (copy->blknos[s] == blkno)
			return (Page) copy->pages[s];
		if (copy->blknos[s] == InvalidBlockNumber)
			return NULL;
	}
}

/* Make the (empty) copy of rel, in place of the least recently used one */
static BtlUpperCopy *
new_copy(Relation rel)
{
	BtlUpperCopy *copy = &copies[0];

	for (int i = 0; i < BTL_UPPER_COPIES; i++)
	{
		if (copies[i].cxt == NULL)
		{
			copy = &copies[i];
			break;
		}
		if (copies[i].lastuse < copy->lastuse)
			copy = &copies[i];
	}
	drop_copy(copy);

	copy->cxt = AllocSetContextCreate(TopMemoryContext,
									  "btlayout upper levels",
									  ALLOCSET_DEFAULT_SIZES);
	copy->indexoid = RelationGetRelid(rel);
	copy->locator = *BtlRelationLocator(rel);
	copy->start = InvalidBlockNumber;
	copy->nslots = 16;
	copy->npages = 0;
	copy->blknos = MemoryContextAlloc(copy->cxt,
									  copy->nslots * sizeof(BlockNumber));
	memset(copy->blknos, 0xFF, copy->nslots * sizeof(BlockNumber));
	copy->pages = MemoryContextAllocZero(copy->cxt,
										 copy->nslots * sizeof(char *));
	copy->lastuse = ++use_counter;
	last_copy = copy;
	return copy;
}

/* Double the slots of copy's hash table */
static void
grow_copy(BtlUpperCopy *copy)
{
	uint32		oldslots = copy->nslots;
	BlockNumber *oldblknos = copy->blknos;
	char	  **oldpages = copy->pages;

	copy->nslots = oldslots * 2;
	copy->blknos = MemoryContextAlloc(copy->cxt,
									  copy->nslots * sizeof(BlockNumber));
	memset(copy->blknos, 0xFF, copy->nslots * sizeof(BlockNumber));
	copy->pages = MemoryContextAllocZero(copy->cxt,
										 copy->nslots * sizeof(char *));
	for (uint32 i = 0; i < oldslots; i++)
	{
		uint32		s;

		if (oldblknos[i] == InvalidBlockNumber)
			continue;
		for (s = slot_of(copy, oldblknos[i]);
			 copy->blknos[s] != InvalidBlockNumber;
			 s = (s + 1) & (copy->nslots - 1))
			;
		copy->blknos[s] = oldblknos[i];
		copy->pages[s] = oldpages[i];
	}
	pfree(oldblknos);
	pfree(oldpages);
}

/*
 * Is there room for one more page image, for copy: if not, drop the least
 * recently used other copy that holds pages, as long as one does.
 */
static bool
make_room(BtlUpperCopy *copy)
{
	while (total_pages >= max_pages())
	{
		BtlUpperCopy *victim = NULL;

		for (int i = 0; i < BTL_UPPER_COPIES; i++)
			if (&copies[i] != copy && copies[i].cxt != NULL &&
				copies[i].npages > 0 &&
				(victim == NULL || copies[i].lastuse < victim->lastuse))
				victim = &copies[i];
		if (victim == NULL)
			return false;
		drop_copy(victim);
	}
	return true;
}

/*
 * An ordinary descent read internal page blkno of rel (buf, read-locked by
 * the caller): keep its image.  top says it is the first page the descent
 * searched, where the copy's descents will start.
 */
void
btl_upper_remember(Relation rel, Buffer buf, bool top)
{
	BtlUpperCopy *copy = btl_upper_copy_of(rel);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	uint32		s;

	if (copy == NULL)
		copy = new_copy(rel);
	if (top)
		copy->start = blkno;

	for (s = slot_of(copy, blkno);
		 copy->blknos[s] != InvalidBlockNumber && copy->blknos[s] != blkno;
		 s = (s + 1) & (copy->nslots - 1))
		;
	if (copy->blknos[s] == InvalidBlockNumber)
	{
		if (!make_room(copy))
			return;
		if ((copy->npages + 1) * 2 > copy->nslots)
		{
			grow_copy(copy);
			for (s = slot_of(copy, blkno);
				 copy->blknos[s] != InvalidBlockNumber;
				 s = (s + 1) & (copy->nslots - 1))
				;
		}
		copy->pages[s] = MemoryContextAlloc(copy->cxt, BLCKSZ);
		copy->blknos[s] = blkno;
		copy->npages++;
		total_pages++;
	}
	memcpy(copy->pages[s], BufferGetPage(buf), BLCKSZ);
}

/*
 * btlayout_upper_copy_pages(): how many page images this backend holds for
 * the index (0 if none); for tests.
 */
PG_FUNCTION_INFO_V1(btlayout_upper_copy_pages);

Datum
btlayout_upper_copy_pages(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);

	if (drops_pending)
		sweep();
	for (int i = 0; i < BTL_UPPER_COPIES; i++)
		if (copies[i].cxt != NULL && copies[i].indexoid == indexoid)
			PG_RETURN_INT32((int32) copies[i].npages);
	PG_RETURN_INT32(0);
}
