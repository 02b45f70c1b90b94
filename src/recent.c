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

typedef struct BtlRecentMap
{
	BtlRelFileLocator locator;	/* the relation file */
	BlockNumber nblocks;		/* entries of buffers */
	Buffer	   *buffers;		/* by block; InvalidBuffer: none known */
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
		if (maps[i].buffers != NULL &&
			memcmp(&maps[i].locator, locator, sizeof(BtlRelFileLocator)) == 0)
			return &maps[i];
		if (maps[i].lastuse < oldest->lastuse)
			oldest = &maps[i];
	}

	if (oldest->buffers != NULL)
		pfree(oldest->buffers);
	oldest->locator = *locator;
	oldest->nblocks = 0;
	oldest->buffers = MemoryContextAllocZero(TopMemoryContext, sizeof(Buffer));
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
		map->buffers = repalloc(map->buffers, nblocks * sizeof(Buffer));
		memset(map->buffers + map->nblocks, 0,
			   (nblocks - map->nblocks) * sizeof(Buffer));
		map->nblocks = nblocks;
	}
	map->buffers[blkno] = buf;
}

/*
 * Pin block blkno of index rel: in the buffer it was in last time if it is
 * still there, else through ReadBuffer().  Returns the buffer, pinned and
 * not locked.
 */
Buffer
btl_read_recent(Relation rel, BlockNumber blkno)
{
	BtlRecentMap *map = last_map;
	Buffer		buf;

	if (map == NULL || map->buffers == NULL ||
		memcmp(&map->locator, BtlRelationLocator(rel),
			   sizeof(BtlRelFileLocator)) != 0)
		last_map = map = recent_map(rel);
	map->lastuse = ++use_counter;

	if (blkno < map->nblocks && blkno < (BlockNumber) btl_recent_buffers &&
		BufferIsValid(map->buffers[blkno]) &&
		ReadRecentBuffer(*BtlRelationLocator(rel), MAIN_FORKNUM, blkno,
						 map->buffers[blkno]))
	{
		/* counted as ReadBuffer() counts a hit */
		pgstat_count_buffer_read(rel);
		pgstat_count_buffer_hit(rel);
		btl_search_counters.recent_buffer_hits++;
		return map->buffers[blkno];
	}

	buf = ReadBuffer(rel, blkno);
	recent_remember(map, blkno, buf);
	return buf;
}
