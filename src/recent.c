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
 * Nothing is trusted.  An entry is used only if its buffer is of the kind
 * the relation's pages live in (a local buffer, negative, for a temporary
 * index, a shared one otherwise: ReadRecentBuffer() would look in either
 * by the sign alone), and ReadRecentBuffer() compares the buffer's tag
 * (relation file, fork, block) with the block asked for under the buffer
 * header's lock, and pins the buffer only if it holds that very block,
 * valid; if not, the block is read the ordinary way and its buffer
 * remembered instead.  A stale entry (the page evicted, the relation
 * truncated) costs that fallback, nothing else.  The page's contents are
 * then read under its content lock exactly as after ReadBuffer().
 *
 * Each index has a map of its own, hung on its entry (indexstate.c): the
 * entry is found by the index's identity (OID, relation file, backend), so
 * no two relations that exist at once share a map, and it is kept through
 * invalidations that leave the index in its file, since a map needs no
 * more than that to be right (indexstate.c says why).  Entries of 8 bytes
 * indexed by block number, in chunks of RECENT_CHUNK_ENTRIES made as
 * blocks in them are first read, found through a directory of chunks.
 * The entries of a hot index are thus packed eight to a cache line, in
 * the order of its blocks; an index probed a few times gets a chunk or
 * two, not a map as large as its file, and one probed once gets none (its
 * first lookup in the backend remembers nothing: map_of()).
 * btlayout.recent_buffers caps the entries of all maps of a backend
 * together, with no limit on how many indexes have maps.  At the cap, the
 * chunks of the map used least recently of those that have chunks go, if
 * no lookup has used it for a while (make_room()); if it is not that cold,
 * the block is read the ordinary way and not remembered, which costs what
 * core btree's descent costs.  The directory takes a pointer per chunk of
 * the index's blocks up to the highest one remembered; only a map with
 * chunks has one (it goes with them), and its pointers count against the
 * cap too, RECENT_CHUNK_ENTRIES of them as one chunk, so that maps of very
 * large indexes holding a chunk each cannot pass the cap by their
 * directories.  What is left of a map without chunks is its header, which
 * goes with its index entry.  Changing the setting drops every chunk.
 * 0 turns it off, and so does an index's recent_buffers option
 * (compare.c decides, per search key).  Statistics are counted as
 * ReadBuffer() counts them.
 *
 * Beside each buffer number, an entry keeps where the leaf's high key and
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

#include "lib/ilist.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

/* Entries per chunk of a map: 4 kB */
#define RECENT_CHUNK_BITS		9
#define RECENT_CHUNK_ENTRIES	(1 << RECENT_CHUNK_BITS)

/*
 * Lookups a map must go unused before make_room() takes its chunks, and
 * lookups without trying again after it found none so cold
 */
#define RECENT_COLD_LOOKUPS		4096
#define RECENT_FULL_BACKOFF		256

/*
 * What the backend knows of one block: its buffer, and where the leaf's
 * high key and first data item were when it last proved itself (offsets in
 * the page, 0 if none known).  Eight bytes, so that one cache line of the
 * map serves the prefetch and then the pin.
 */
typedef struct BtlRecentEntry
{
	Buffer		buffer;			/* InvalidBuffer: none known */
	uint16		hikey;			/* offset of the high key's tuple */
	uint16		first;			/* offset of the first data item's */
} BtlRecentEntry;

/* The map of one index */
struct BtlRecentMap
{
	dlist_node	node;			/* in maps while it has chunks */
	uint32		ndir;			/* slots of the directory */
	uint32		nchunks;		/* chunks made */
	BtlRecentEntry **dir;		/* chunk by block number >> RECENT_CHUNK_BITS */
	uint64		lastuse;		/* lookups when last used */
};

/* GUC btlayout.recent_buffers: entries per backend, 0 for none */
int			btl_recent_buffers = 262144;

/*
 * Whether temporary indexes (local buffers) get maps: not on the minor
 * releases whose ReadRecentBuffer() checks the wrong buffer of a local one
 * (compat.h); set when the library is loaded
 */
bool		btl_recent_local_buffers = true;

/*
 * The maps that have chunks, most recently used first.  A map without any
 * (its index's second lookup found no room, or its chunks were taken) is in
 * no list until a chunk is made for it, so that make_room() finds at the
 * tail a map with chunks to give up, whatever the number of maps held.
 */
static dlist_head maps = DLIST_STATIC_INIT(maps);
static uint64 total_chunks;
static uint64 total_dir_slots;	/* of the maps' directories, all together */
static uint64 lookups;
static uint64 full_until;

/* Chunks all maps may have, from btlayout.recent_buffers */
static inline uint64
chunks_allowed(void)
{
	return ((uint64) btl_recent_buffers + RECENT_CHUNK_ENTRIES - 1) >>
		RECENT_CHUNK_BITS;
}

/*
 * Would one more chunk, and a directory grown by more_slots, pass the cap?
 * Directory slots count as entries, a chunk's worth of them as one chunk.
 */
static inline bool
over_cap(uint32 more_slots)
{
	return total_chunks + 1 +
		((total_dir_slots + more_slots) >> RECENT_CHUNK_BITS) > chunks_allowed();
}

/*
 * Free map's chunks and directory, and take it out of maps (its header
 * stays)
 */
static void
free_chunks(BtlRecentMap *map)
{
	if (map->nchunks == 0)
		return;
	for (uint32 i = 0; i < map->ndir; i++)
		if (map->dir[i] != NULL)
			pfree(map->dir[i]);
	pfree(map->dir);
	map->dir = NULL;
	total_dir_slots -= map->ndir;
	map->ndir = 0;
	total_chunks -= map->nchunks;
	map->nchunks = 0;
	dlist_delete(&map->node);
}

/* Free the map of an index entry (indexstate.c) */
void
btl_recent_free_map(BtlIndexState *state)
{
	BtlRecentMap *map = state->recent;

	if (map == NULL)
		return;
	free_chunks(map);
	pfree(map);
	state->recent = NULL;
}

/*
 * Room for one more chunk and more_slots more directory slots: if at the
 * cap, the chunks of the least recently used map go, if no lookup has used
 * it in the last RECENT_COLD_LOOKUPS lookups, then those of the next, as
 * long as room is short.  maps holds only the maps that have chunks, in
 * the order of their last use: its tail is the coldest map with chunks to
 * give up, so one look decides whether any may go, whatever the number of
 * maps, and each map taken frees a chunk at least (a directory grown by
 * more slots than a chunk holds, for a block far into a large index, may
 * take more than one).  False if no map that cold is left: the caller
 * remembers nothing, and no chunk is made during the next
 * RECENT_FULL_BACKOFF lookups.  A map in use by lookups keeps its chunks:
 * which blocks of a working set larger than the cap are remembered matters
 * less than not dropping and making chunks at every lookup.
 */
static bool
make_room(BtlRecentMap *self, uint32 more_slots)
{
	while (over_cap(more_slots) && !dlist_is_empty(&maps))
	{
		BtlRecentMap *victim = dlist_tail_element(BtlRecentMap, node, &maps);

		if (victim == self ||
			victim->lastuse + RECENT_COLD_LOOKUPS > lookups)
			break;
		/* its chunks go; the map, empty, waits outside for its index */
		btl_state_counters.chunks_given_up += victim->nchunks;
		free_chunks(victim);
	}
	if (over_cap(more_slots))
	{
		full_until = lookups + RECENT_FULL_BACKOFF;
		return false;
	}
	return true;
}

/* GUC assign hook of btlayout.recent_buffers: a new cap starts from nothing */
void
btl_recent_buffers_assign(int newval, void *extra)
{
	dlist_mutable_iter iter;

	dlist_foreach_modify(iter, &maps)
		free_chunks(dlist_container(BtlRecentMap, node, iter.cur));
	full_until = 0;
}

/*
 * The entry of block blkno in map, made (its chunk, and the directory
 * grown) if there is room; NULL if not.  Allocations are made before
 * anything is published: one that fails leaves the map as it was.
 */
static BtlRecentEntry *
make_entry(BtlRecentMap *map, BlockNumber blkno)
{
	uint32		c = blkno >> RECENT_CHUNK_BITS;
	uint32		ndir = c < map->ndir ? map->ndir : Max(c + 1, map->ndir * 2);
	BtlRecentEntry *chunk;

	if (lookups < full_until || !make_room(map, ndir - map->ndir))
	{
		btl_state_counters.blocks_not_remembered++;
		return NULL;
	}
	chunk = MemoryContextAllocZero(TopMemoryContext,
								   RECENT_CHUNK_ENTRIES * sizeof(BtlRecentEntry));
	if (ndir != map->ndir)
	{
		BtlRecentEntry **dir;

		PG_TRY();
		{
			dir = MemoryContextAllocZero(TopMemoryContext,
										 ndir * sizeof(BtlRecentEntry *));
		}
		PG_CATCH();
		{
			pfree(chunk);
			PG_RE_THROW();
		}
		PG_END_TRY();
		if (map->dir != NULL)
		{
			memcpy(dir, map->dir, map->ndir * sizeof(BtlRecentEntry *));
			pfree(map->dir);
		}
		total_dir_slots += ndir - map->ndir;
		map->dir = dir;
		map->ndir = ndir;
	}
	map->dir[c] = chunk;
	/* its first chunk puts the map in maps, at the head: it is in use now */
	if (map->nchunks++ == 0)
		dlist_push_head(&maps, &map->node);
	total_chunks++;
	btl_state_counters.chunks_made++;
	return &chunk[blkno & (RECENT_CHUNK_ENTRIES - 1)];
}

/* The entry of block blkno in map, or NULL */
static inline BtlRecentEntry *
entry_of(const BtlRecentMap *map, BlockNumber blkno)
{
	uint32		c = blkno >> RECENT_CHUNK_BITS;

	if (map == NULL || c >= map->ndir || map->dir[c] == NULL)
		return NULL;
	return &map->dir[c][blkno & (RECENT_CHUNK_ENTRIES - 1)];
}

/*
 * The map of rel, made if it has none; NULL if it has none and the lookup
 * under way is its index's first in this backend, which remembers nothing
 * (a backend that looks an index up once makes it no map)
 */
static inline BtlRecentMap *
map_of(Relation rel)
{
	BtlIndexState *state = btl_index_state(rel);
	BtlRecentMap *map = state->recent;

	if (unlikely(map == NULL))
	{
		if (btl_first_lookup(state))
			return NULL;
		map = MemoryContextAllocZero(TopMemoryContext, sizeof(BtlRecentMap));
		state->recent = map;
	}
	return map;
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
	BtlRecentEntry *entry;
	Buffer		buf;

	if (unlikely(map == NULL))
		return ReadBuffer(rel, blkno);
	map->lastuse = ++lookups;
	/* a map without chunks is in no list: it has nothing to give up */
	if (map->nchunks != 0 && dlist_head_node(&maps) != &map->node)
		dlist_move_head(&maps, &map->node);
	entry = entry_of(map, blkno);
	if (entry != NULL && BufferIsValid(entry->buffer) &&
		(entry->buffer < 0) == RelationUsesLocalBuffers(rel) &&
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
	if (entry == NULL)
		entry = make_entry(map, blkno);
	if (entry != NULL)
	{
		entry->buffer = buf;
		entry->hikey = 0;
		entry->first = 0;
	}
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
	BtlRecentEntry *entry = entry_of(btl_index_state(rel)->recent, blkno);
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
	BtlRecentEntry *entry = entry_of(btl_index_state(rel)->recent, blkno);

	if (entry == NULL || entry->buffer <= 0 || entry->buffer > NBuffers)
		return false;
	*page = (const char *) BufferGetBlock(entry->buffer);
	*hikey = entry->hikey;
	*first = entry->first;
	return true;
}

/* The chunks all maps hold now; for btlayout_backend_state() */
int64
btl_recent_chunks(void)
{
	return (int64) total_chunks;
}
