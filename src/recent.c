/*-------------------------------------------------------------------------
 *
 * recent.c
 *	  The buffer each index page was in the last time this backend read it,
 *	  so that a descent can pin the page there again without the shared
 *	  buffer mapping table.
 *
 * Each step of a descent names the next page by block number.  Finding its
 * buffer through the buffer mapping table costs a hash computation, a
 * partition lock taken and released, and the cache misses of a table as
 * large as shared_buffers; at every level of every lookup.  The pages of a
 * hot index stay in their buffers for a long time, so the backend
 * remembers, per block, the buffer it found the page in, and asks
 * ReadRecentBuffer() to pin that buffer again.
 *
 * Nothing is trusted.  ReadRecentBuffer() compares the buffer's tag
 * (relation file, fork, block) with the block asked for under the buffer
 * header's lock, and pins the buffer only if it holds that very block,
 * valid; if not, the block is read the ordinary way and its buffer
 * remembered instead.  A stale entry (the page evicted, the relation
 * truncated or given a new relation file by REINDEX or TRUNCATE, dropped)
 * costs that fallback, nothing else.  The page's contents are then read
 * under its content lock exactly as after ReadBuffer().
 *
 * The maps are backend-local (TopMemoryContext), one per relation file:
 * an array of buffer numbers indexed by block number, grown as blocks are
 * seen, up to btlayout.recent_buffers blocks (blocks past that are read
 * the ordinary way); the last map used is tried first.  btlayout.
 * recent_buffers = 0 or an index's recent_buffers option off leaves the
 * descent to ReadBuffer() (compare.c decides, per search key).  A new relation
 * file of an index gets a new map, and the oldest of BTL_RECENT_MAPS maps
 * makes room.  Statistics are counted as ReadBuffer() counts them.
 *
 * Beside each buffer number, the map keeps where the leaf's high key and
 * first data item were the last time the leaf proved itself to a lookup
 * from the copy of the upper levels, so that the next such lookup can
 * prefetch them before the pin (btl_recent_hint()).  Those offsets are
 * prefetch addresses and nothing else: nothing is ever read through them.
 *
 * src/recent.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

/* Relation files whose buffers a backend remembers */
#define BTL_RECENT_MAPS		8

/*
 * What the backend knows of one block: its buffer, and where the leaf's
 * high key and first data item were when it last proved itself (offsets in
 * the page, 0 if none known).  The offsets are prefetch addresses for the
 * next visit, nothing more (prefetch_named_leaf() in search.c).  Eight
 * bytes, so that one cache line of the map serves the prefetch and then
 * the pin.
 */
typedef struct BtlRecentEntry
{
	Buffer		buffer;			/* InvalidBuffer: none known */
	uint16		hikey;			/* offset of the high key's tuple */
	uint16		first;			/* offset of the first data item's */
} BtlRecentEntry;

typedef struct BtlRecentMap
{
	BtlRelFileLocator locator;	/* the relation file */
	BlockNumber nblocks;		/* entries */
	BtlRecentEntry *entries;	/* by block */
	uint64		lastuse;		/* for replacing the oldest map */
} BtlRecentMap;

/* GUC btlayout.recent_buffers: blocks remembered per map, 0 for none */
int			btl_recent_buffers = 262144;

static BtlRecentMap maps[BTL_RECENT_MAPS];
static BtlRecentMap *last_map;
static uint64 use_counter;

/*
 * The map of rel's relation file, made (in place of the oldest) if there is
 * none.
 */
static BtlRecentMap *
recent_map(Relation rel)
{
	const BtlRelFileLocator *locator = BtlRelationLocator(rel);
	BtlRecentMap *oldest = &maps[0];
	int			i;

	for (i = 0; i < BTL_RECENT_MAPS; i++)
	{
		if (maps[i].entries != NULL &&
			memcmp(&maps[i].locator, locator, sizeof(BtlRelFileLocator)) == 0)
			return &maps[i];
		if (maps[i].lastuse < oldest->lastuse)
			oldest = &maps[i];
	}

	if (oldest->entries != NULL)
		pfree(oldest->entries);
	oldest->locator = *locator;
	oldest->nblocks = 0;
	oldest->entries = MemoryContextAllocZero(TopMemoryContext,
											 sizeof(BtlRecentEntry));
	return oldest;
}

/*
 * Remember that block blkno of map's relation file is in buffer buf,
 * growing the map if the block is within btlayout.recent_buffers.
 */
static void
recent_remember(BtlRecentMap *map, BlockNumber blkno, Buffer buf)
{
	if (blkno >= map->nblocks)
	{
		BlockNumber nblocks;

		if (blkno >= (BlockNumber) btl_recent_buffers)
			return;
		nblocks = Min(Max(blkno + 1, map->nblocks * 2),
					  (BlockNumber) btl_recent_buffers);
		map->entries = repalloc(map->entries,
								nblocks * sizeof(BtlRecentEntry));
		memset(map->entries + map->nblocks, 0,
			   (nblocks - map->nblocks) * sizeof(BtlRecentEntry));
		map->nblocks = nblocks;
	}
	map->entries[blkno].buffer = buf;
	map->entries[blkno].hikey = 0;
	map->entries[blkno].first = 0;
}

/* The map of rel's relation file: the last one used, else recent_map() */
static inline BtlRecentMap *
map_of(Relation rel)
{
	BtlRecentMap *map = last_map;

	if (map == NULL || map->entries == NULL ||
		memcmp(&map->locator, BtlRelationLocator(rel),
			   sizeof(BtlRelFileLocator)) != 0)
		last_map = map = recent_map(rel);
	return map;
}

/* The entry of block blkno, if the map covers it */
static inline BtlRecentEntry *
entry_of(BtlRecentMap *map, BlockNumber blkno)
{
	if (blkno < map->nblocks && blkno < (BlockNumber) btl_recent_buffers)
		return &map->entries[blkno];
	return NULL;
}

/*
 * Pin block blkno of index rel: in the buffer it was in last time if it is
 * still there, else through ReadBuffer().  Returns the buffer, pinned and
 * not locked.
 */
Buffer
btl_read_recent(Relation rel, BlockNumber blkno)
{
	BtlRecentMap *map = map_of(rel);
	BtlRecentEntry *entry = entry_of(map, blkno);
	Buffer		buf;

	map->lastuse = ++use_counter;
	if (entry != NULL && BufferIsValid(entry->buffer) &&
		ReadRecentBuffer(*BtlRelationLocator(rel), MAIN_FORKNUM, blkno,
						 entry->buffer))
	{
		/* counted as ReadBuffer() counts a hit */
		pgstat_count_buffer_read(rel);
		pgstat_count_buffer_hit(rel);
		btl_search_counters.recent_buffer_hits++;
		return entry->buffer;
	}

	buf = ReadBuffer(rel, blkno);
	recent_remember(map, blkno, buf);
	return buf;
}

/*
 * A leaf of rel, block blkno, has just proved itself, read-locked in the
 * buffer it is in: note where its high key and first data item are, for
 * prefetch_named_leaf() on the next visit.  Written only when they moved,
 * so that a lookup of an unchanged page only reads the map.
 */
void
btl_recent_note_leaf(Relation rel, BlockNumber blkno, Page page)
{
	BtlRecentEntry *entry = entry_of(map_of(rel), blkno);
	uint16		hikey = ItemIdGetOffset(PageGetItemId(page, P_HIKEY));
	uint16		first = ItemIdGetOffset(PageGetItemId(page,
													  P_FIRSTDATAKEY(BTPageGetOpaque(page))));

	if (entry != NULL && (entry->hikey != hikey || entry->first != first))
	{
		entry->hikey = hikey;
		entry->first = first;
	}
}

/*
 * Where block blkno of rel was the last time: the page of the shared buffer
 * it was in, and the offsets of its high key and first data item then (0
 * if not known).  False if no shared buffer is known (none, or a local
 * buffer of a temporary index).  For prefetching only (see
 * prefetch_named_leaf() in search.c): the buffer may hold another page by
 * now, or the page may have changed.
 */
bool
btl_recent_hint(Relation rel, BlockNumber blkno, const char **page,
				uint16 *hikey, uint16 *first)
{
	BtlRecentEntry *entry = entry_of(map_of(rel), blkno);

	if (entry == NULL || entry->buffer <= 0)
		return false;
	*page = (const char *) BufferGetBlock(entry->buffer);
	*hikey = entry->hikey;
	*first = entry->first;
	return true;
}
