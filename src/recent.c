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
 * truncated or given a new relation file by REINDEX or TRUNCATE, dropped)
 * costs that fallback, nothing else.  The page's contents are then read
 * under its content lock exactly as after ReadBuffer().
 *
 * One table serves every index of the backend: entries of 16 bytes, each
 * an index's tag (indexstate.c: a number given to the index as this
 * backend knows it, never given to another while the backend lives), a
 * block number, the buffer, and two prefetch offsets (below).  It is a
 * set-associative cache, two entries a set, the set chosen by a hash of
 * tag and block: finding an entry is one cache line read, remembering one
 * replaces the older of its set, and an index the backend no longer uses,
 * or that was dropped or rebuilt (a new tag), just stops being asked for:
 * its entries are replaced as others need their sets.  There is no limit
 * on the indexes it serves; the table starts at 16 kB and doubles as it
 * fills, up to btlayout.recent_buffers entries (16 bytes each).  0 turns
 * it off, and so does an index's recent_buffers option (compare.c
 * decides, per search key).  Statistics are counted as ReadBuffer()
 * counts them.
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

#include "common/hashfn.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

/* Entries a new table has, and entries a set holds */
#define RECENT_INITIAL_ENTRIES	1024
#define RECENT_WAYS				2

/*
 * What the backend knows of one block of one index: its buffer, and where
 * the leaf's high key and first data item were when it last proved itself
 * (offsets in the page, 0 if none known).  tag 0: empty.
 */
typedef struct BtlRecentEntry
{
	uint32		tag;			/* the index's (indexstate.c) */
	BlockNumber blkno;
	Buffer		buffer;
	uint16		hikey;			/* offset of the high key's tuple */
	uint16		first;			/* offset of the first data item's */
} BtlRecentEntry;

StaticAssertDecl(sizeof(BtlRecentEntry) == 16,
				 "a recent-buffer entry is 16 bytes, as the settings say");

/* GUC btlayout.recent_buffers: entries per backend, 0 for none */
int			btl_recent_buffers = 262144;

static BtlRecentEntry *table;
static uint32 nentries;			/* a power of two */
static uint32 ninserted;		/* entries remembered since the last growth */

/* The largest table at most btlayout.recent_buffers entries */
static inline uint32
entries_allowed(void)
{
	uint32		cap = (uint32) Max(btl_recent_buffers, RECENT_WAYS);

	return (uint32) 1 << pg_leftmost_one_pos32(cap);
}

static inline BtlRecentEntry *
set_of(uint32 tag, BlockNumber blkno)
{
	uint32		h = murmurhash32(blkno ^ (tag * 0x9E3779B9u));

	return &table[h & (nentries - RECENT_WAYS)];
}

/*
 * A table of n entries (a power of two), keeping what the old one knew
 * that fits.  The new one is allocated before the old one is let go: an
 * allocation that fails leaves the old table as it was.
 */
static void
resize_table(uint32 n)
{
	BtlRecentEntry *old = table;
	uint32		oldn = nentries;

	table = MemoryContextAllocExtended(TopMemoryContext,
									   (Size) n * sizeof(BtlRecentEntry),
									   MCXT_ALLOC_ZERO);
	nentries = n;
	ninserted = 0;
	for (uint32 i = 0; old != NULL && i < oldn; i++)
	{
		BtlRecentEntry *set;

		if (old[i].tag == 0)
			continue;
		set = set_of(old[i].tag, old[i].blkno);
		for (int w = 0; w < RECENT_WAYS; w++)
			if (set[w].tag == 0)
			{
				set[w] = old[i];
				break;
			}
	}
	if (old != NULL)
		pfree(old);
}

/* The entry of block blkno of the index tagged tag, or NULL */
static inline BtlRecentEntry *
lookup(uint32 tag, BlockNumber blkno)
{
	BtlRecentEntry *set;

	if (table == NULL)
		return NULL;
	set = set_of(tag, blkno);
	for (int w = 0; w < RECENT_WAYS; w++)
		if (set[w].tag == tag && set[w].blkno == blkno)
			return &set[w];
	return NULL;
}

/*
 * Remember that block blkno of the index tagged tag is in buffer buf, in
 * place of the older entry of its set.  The table doubles, while it may,
 * once it has taken in three quarters of its size in new entries since it
 * last grew: a table that keeps taking entries is one whose blocks do not
 * fit, or that replaces entries in its fuller sets.
 */
static void
remember(uint32 tag, BlockNumber blkno, Buffer buf)
{
	BtlRecentEntry *set;

	uint32		initial = Min(RECENT_INITIAL_ENTRIES, entries_allowed());

	/* a new table, or the setting changed below or past the table */
	if (table == NULL || nentries > entries_allowed() || nentries < initial)
		resize_table(initial);
	else if (ninserted >= nentries / 4 * 3 && nentries < entries_allowed())
		resize_table(nentries * 2);
	ninserted++;
	set = set_of(tag, blkno);
	set[1] = set[0];
	set[0].tag = tag;
	set[0].blkno = blkno;
	set[0].buffer = buf;
	set[0].hikey = 0;
	set[0].first = 0;
}

/*
 * Pin block blkno of index rel: in the buffer it was in last time if it is
 * still there, else through ReadBuffer().  Returns the buffer, pinned and
 * not locked.
 */
Buffer
btl_read_recent(Relation rel, BlockNumber blkno)
{
	BtlIndexState *state = btl_index_state(rel);
	BtlRecentEntry *entry;
	Buffer		buf;

	if (unlikely(state == NULL))
		return ReadBuffer(rel, blkno);
	entry = lookup(state->tag, blkno);
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
	if (entry != NULL)
	{
		entry->buffer = buf;
		entry->hikey = 0;
		entry->first = 0;
	}
	else
		remember(state->tag, blkno, buf);
	return buf;
}

/*
 * A leaf of rel, block blkno, has just proved itself, read-locked in the
 * buffer it is in: note where its high key and first data item are, for
 * prefetch_named_leaf() on the next visit.  Written only when they moved,
 * so that a lookup of an unchanged page only reads the table.
 */
void
btl_recent_note_leaf(Relation rel, BlockNumber blkno, Page page)
{
	BtlIndexState *state = btl_index_state(rel);
	BtlRecentEntry *entry = state ? lookup(state->tag, blkno) : NULL;
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
	BtlIndexState *state = btl_index_state(rel);
	BtlRecentEntry *entry = state ? lookup(state->tag, blkno) : NULL;

	if (entry == NULL || entry->buffer <= 0 || entry->buffer > NBuffers)
		return false;
	*page = (const char *) BufferGetBlock(entry->buffer);
	*hikey = entry->hikey;
	*first = entry->first;
	return true;
}

/* Forget every entry (indexstate.c, before it gives tags anew) */
void
btl_recent_forget_all(void)
{
	if (table != NULL)
		memset(table, 0, (Size) nentries * sizeof(BtlRecentEntry));
}
