/*-------------------------------------------------------------------------
 *
 * btlayout.h
 *	  Declarations shared by the btlayout access method's source files.
 *
 * A btlayout index is an nbtree index on disk: the same metapage, page
 * format, special space and WAL records.  The server's nbtree code does the
 * writes (insert, split, deduplication, VACUUM) and, for now, the reads.
 * What is ours: the handler and reloptions (handler.c), operator class
 * validation (validate.c), CREATE INDEX, whose sorted build in the server
 * refuses non-btree relations (build.c), the in-page layouts (layout.c:
 * search trees and permutations; page.c: placing a page's tuple bodies;
 * relayout.c: rewriting pages after VACUUM, after lookups and on demand;
 * wal.c: logging such rewrites), the reads'
 * positioning (scan.c: the first item of a scan; search.c: the descent and
 * the in-page search; compare.c: de-virtualised key comparison),
 * introspection (stats.c), and a clear error where the server refuses a
 * non-btree unique index during INSERT ... ON CONFLICT (conflict.c).
 *
 * src/btlayout.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_H
#define BTLAYOUT_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/nbtree.h"
#include "lib/ilist.h"
#include "nodes/execnodes.h"
#include "nodes/tidbitmap.h"
#include "utils/snapshot.h"
#include "storage/bufpage.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"

#include "compat.h"
#include "layout.h"

/*
 * Reloptions of a btlayout index.
 *
 * The server's nbtree code reads rd_options as BTOptions (fillfactor at page
 * splits, deduplicate_items at insertion), so BTOptions must come first and
 * be laid out exactly as nbtree.h declares it.  Options of our own follow it.
 */
typedef struct BtlOptions
{
	BTOptions	bt;				/* must be first: read by nbtree's code */
	int			layout;			/* a BtlLayout */
	bool		prefetch;		/* prefetch in the layout-directed search */
	bool		lookup_relayout;	/* lookups relayout stale pages they meet */
	bool		recent_buffers; /* descents pin pages where they were last */
	bool		upper_copy;		/* lookups start from a copy of the upper
								 * levels */
	bool		upper_copy_keys;	/* ... searched by its integer keys */
} BtlOptions;

#define BTL_DEFAULT_LAYOUT	BTL_LAYOUT_BLOCKED

/* Bytes per cache line, for the search's prefetches (search.c) */
#define BTL_CACHE_LINE	64

/* Free space CREATE INDEX leaves on leaf pages, from the fill factor */
#define BtlTargetPageFreeSpace(rel) \
	((rel)->rd_options ? \
	 BLCKSZ * (100 - ((BtlOptions *) (rel)->rd_options)->bt.fillfactor) / 100 : \
	 BLCKSZ * (100 - BTREE_DEFAULT_FILLFACTOR) / 100)
#define BtlDeduplicateItems(rel) \
	((rel)->rd_options ? \
	 ((BtlOptions *) (rel)->rd_options)->bt.deduplicate_items : true)
#define BtlGetLayout(rel) \
	((rel)->rd_options ? \
	 (BtlLayout) ((BtlOptions *) (rel)->rd_options)->layout : BTL_DEFAULT_LAYOUT)
#define BtlGetPrefetch(rel) \
	((rel)->rd_options ? ((BtlOptions *) (rel)->rd_options)->prefetch : true)
#define BtlGetLookupRelayout(rel) \
	((rel)->rd_options ? ((BtlOptions *) (rel)->rd_options)->lookup_relayout : true)
#define BtlGetRecentBuffers(rel) \
	((rel)->rd_options ? ((BtlOptions *) (rel)->rd_options)->recent_buffers : true)
#define BtlGetUpperCopy(rel) \
	((rel)->rd_options ? ((BtlOptions *) (rel)->rd_options)->upper_copy : true)
#define BtlGetUpperCopyKeys(rel) \
	((rel)->rd_options ? ((BtlOptions *) (rel)->rd_options)->upper_copy_keys : true)

/*
 * A page laid out with inserts since is served by the layout-directed
 * search, but less well as the items inserted since grow: once they are
 * more than 1/BTL_RELAYOUT_INSERTED_SHARE of its items, a relayout after
 * VACUUM or after a lookup rewrites it (relayout.c).
 */
#define BTL_RELAYOUT_INSERTED_SHARE	8
#define btl_too_many_inserted(inserted, nitems) \
	((inserted) * BTL_RELAYOUT_INSERTED_SHARE > (nitems))

/* GUC btlayout.prefetch (handler.c): off turns prefetching off everywhere */
extern bool btl_prefetch;

/*
 * GUC btlayout.lookup_relayout (handler.c): off keeps lookups from noting
 * pages for a relayout everywhere
 */
extern bool btl_lookup_relayout;

/*
 * Where the tuple bodies of one page go in a layout (page.c).  offset[] is
 * indexed by offset number.
 */
typedef struct BtlPagePlan
{
	OffsetNumber maxoff;		/* line pointers on the page */
	OffsetNumber firstsearch;	/* first item the binary search looks at */
	int			nsearch;		/* items it looks at: firstsearch..maxoff */
	int			width;			/* their common MAXALIGNed length, or 0 */
	int			node;			/* btorder node items for that width */
	LocationIndex upper;		/* pd_upper after the move */
	LocationIndex offset[MaxIndexTuplesPerPage + 1];
} BtlPagePlan;

/*
 * How a live page stands against a layout (page.c): in it; in it but for
 * items inserted since, which the layout-directed search serves too; out of
 * it; or not a page that can be laid out at all (not a live btree page, or
 * damaged).
 */
typedef enum BtlPageState
{
	BTL_PAGE_LAID_OUT,
	BTL_PAGE_INSERTED,
	BTL_PAGE_OUT_OF_LAYOUT,
	BTL_PAGE_UNPLANNABLE
} BtlPageState;

/* handler.c */
extern bytea *btlayout_options(Datum reloptions, bool validate);
extern Relation btl_open_index(Oid indexoid, LOCKMODE lockmode,
							   bool require_owner);

/* stats.c */
extern void btl_read_page_copy(Relation index, BlockNumber blkno,
							   BufferAccessStrategy strategy, Page page);

/* page.c */
extern bool btl_page_plan(Page page, BtlLayout layout, BtlPagePlan *plan);
extern bool btl_page_matches(Page page, const BtlPagePlan *plan);
extern bool btl_page_plan_valid(Page page, const BtlPagePlan *plan);
extern void btl_page_apply(Page page, const BtlPagePlan *plan);
extern bool btl_page_layout(Page page, BtlLayout layout);
extern BtlPageState btl_page_state(Page page, BtlLayout layout,
								   BtlPagePlan *plan, int *inserted);

/*
 * Where a laid-out page's slots start: right after the item before the
 * first searchable one (the high key, or the minus-infinity item of an
 * internal page), whose line pointer no insert moves, so that this holds
 * for a page with inserts since its layout too.  -1 on a page with no such
 * item (the rightmost leaf of its level), which does not say.  A byte
 * offset read from the page: its users check it against the tuple area.
 */
static inline int
btl_slots_start(Page page, OffsetNumber firstsearch)
{
	ItemId		prev;

	if (firstsearch <= FirstOffsetNumber)
		return -1;
	prev = PageGetItemId(page, firstsearch - 1);
	return ItemIdGetOffset(prev) + MAXALIGN(ItemIdGetLength(prev));
}

/*
 * Which way in-page searches of this backend went (search.c).  Plain
 * per-backend counters: the search path never writes shared memory.
 */
typedef struct BtlSearchCounters
{
	uint64		layout_searches;	/* pages searched by walking the layout */
	uint64		layout_confirmed;	/* ... whose answer the line pointers confirmed */
	uint64		layout_fallbacks;	/* ... searched again through line pointers */
	uint64		layout_with_inserts;	/* confirmed, on pages with inserts
										 * since their layout */
	uint64		lookup_relayouts;	/* pages rewritten after lookups met them */
	uint64		ordinary_searches;	/* searches through line pointers */
	uint64		recent_buffer_hits; /* descent steps that pinned a page in
									 * the buffer it was in last time */
	uint64		upper_copy_hits;	/* lookups that went from the copy of the
									 * upper levels to a leaf that proved to
									 * be theirs */
	uint64		upper_copy_misses;	/* ... whose leaf did not, or whose
									 * copy lacked a page on the way */
	uint64		upper_key_searches; /* images searched through their keys */
	uint64		hinted_searches;	/* searches through line pointers that
									 * followed a collation hint */
	uint64		hint_failures;	/* ... whose answer the collation refused */
} BtlSearchCounters;

extern BtlSearchCounters btl_search_counters;

/*
 * What became of this backend's per-backend state (indexstate.c, upper.c,
 * recent.c, relayout.c): events counted where they happen, for
 * btlayout_backend_state() (stats.c), which adds what is held now.  Plain
 * per-backend counters, none on a lookup's path through a page it has.
 */
typedef struct BtlStateCounters
{
	int64		entries_made;	/* index entries made */
	int64		entries_invalidated;	/* ... marked stale by a relcache
										 * invalidation */
	int64		entries_freed;	/* ... freed (their index gone or in
								 * another file, or trimmed) */
	int64		entries_trimmed;	/* ... freed as least recently used
									 * beyond the soft limit */
	int64		images_made;	/* page images of the copies made */
	int64		images_evicted; /* ... evicted at btlayout.upper_copy */
	int64		images_replaced;	/* ... freed for their page changed */
	int64		copies_dropped; /* copies freed whole, images and all */
	int64		copies_full;	/* times no image was cold at the cap */
	int64		chunks_made;	/* chunks of recent-buffer maps made */
	int64		chunks_given_up;	/* ... of cold maps, freed at the cap */
	int64		blocks_not_remembered;	/* blocks read without room to
										 * remember their buffer */
	int64		notes_forgotten;	/* lookup-relayout notes forgotten on a
									 * relcache invalidation */
} BtlStateCounters;

extern BtlStateCounters btl_state_counters;

/* search.c (the key is a BtlSearchKey, compare.h) */
struct BtlSearchKey;
extern Buffer btl_search(Relation rel, const struct BtlSearchKey *key,
						 Snapshot snapshot, OffsetNumber *offnum);

/*
 * What a backend keeps of one btlayout index it looks up (indexstate.c),
 * found by the index's identity: its OID, its relation file and, for a
 * temporary index, its backend.
 */
typedef struct BtlRelIdentity
{
	Oid			relid;
	int			backend;		/* rd_backend */
	BtlRelFileLocator locator;
} BtlRelIdentity;

/* The identity of rel, padding zeroed: it is hashed and compared whole */
static inline void
btl_rel_identity(Relation rel, BtlRelIdentity *id)
{
	memset(id, 0, sizeof(BtlRelIdentity));
	id->relid = RelationGetRelid(rel);
	id->backend = (int) rel->rd_backend;
	id->locator = *BtlRelationLocator(rel);
}

typedef struct BtlUpperCopy BtlUpperCopy;
typedef struct BtlRecentMap BtlRecentMap;

typedef struct BtlIndexState
{
	BtlRelIdentity id;			/* hash key: must be first */
	bool		stale;			/* invalidated, not checked since: its
								 * copy is not used (indexstate.c) */
	dlist_node	stale_node;		/* while stale: in a list of stale
								 * entries (indexstate.c) */
	BtlRecentMap *recent;		/* the buffers of its blocks, or NULL */
	BtlUpperCopy *copy;			/* its copy of the upper levels, or NULL */
	struct BtlIndexState *same_relid;	/* the next entry of this OID
										 * (indexstate.c), or NULL */
	uint64		lastuse;
	uint64		born;			/* the lookup that made it (btl_lookups) */
} BtlIndexState;

/* indexstate.c */
extern Relation btl_last_rel;
extern BtlIndexState *btl_last_state;
extern uint64 btl_lookups;

/*
 * Is the lookup under way the one that made the entry?  Its first lookup
 * makes an index neither a recent-buffer map nor images (indexstate.c).
 */
static inline bool
btl_first_lookup(const BtlIndexState *state)
{
	return state->born == btl_lookups;
}

extern void btl_index_state_init(void);
extern BtlIndexState *btl_index_state_lookup(Relation rel);

/*
 * The entry of index rel (indexstate.c): the one found last if rel is the
 * relcache entry it was found for (indexstate.c says why that is enough),
 * else found or made by the index's identity.
 */
static inline BtlIndexState *
btl_index_state(Relation rel)
{
	if (likely(rel == btl_last_rel && btl_last_state != NULL))
		return btl_last_state;
	return btl_index_state_lookup(rel);
}
extern BtlIndexState *btl_index_state_by_oid(Oid relid);
extern void btl_index_state_request_sweep(void);
extern void btl_index_state_drop_copies(void);
extern void btl_lookup_begin(void);
extern void btl_lookup_end(void);
extern bool btl_lookup_nested(void);
extern int64 btl_index_state_count(void);

/*
 * recent.c.  The most entries btlayout.recent_buffers allows: 8 bytes
 * each, 256 MB of them per backend.
 */
#define BTL_RECENT_BUFFERS_MAX	(1 << 25)
extern int	btl_recent_buffers;
extern bool btl_recent_local_buffers;
extern void btl_recent_buffers_assign(int newval, void *extra);
extern void btl_recent_free_map(BtlIndexState *state);
extern Buffer btl_read_recent(Relation rel, BlockNumber blkno);
extern void btl_recent_note_leaf(Relation rel, BlockNumber blkno, Page page);
extern bool btl_recent_hint(Relation rel, BlockNumber blkno,
							const char **page, uint16 *hikey, uint16 *first);
extern int64 btl_recent_chunks(void);

/* upper.c */
extern int	btl_upper_copy;
extern void btl_upper_copy_assign(int newval, void *extra);
extern void btl_upper_copy_sort_keys_assign(int newval, void *extra);
extern int	btl_debug_fail_upper_alloc;
extern void btl_debug_fail_upper_alloc_assign(int newval, void *extra);
extern void btl_upper_free_copy(BtlIndexState *state);
extern void btl_upper_sweep(void);
extern BtlUpperCopy *btl_upper_copy_of(Relation rel);
extern bool btl_upper_can_grow(void);
extern bool btl_upper_copy_empty(const BtlUpperCopy *copy);
extern BlockNumber btl_upper_start(const BtlUpperCopy *copy);
extern bool btl_upper_copy_keys;
extern void btl_upper_held(int64 *bytes, int64 *images);

struct BtlNkKeys;
struct BtlNkPlan;
extern Page btl_upper_page(const BtlUpperCopy *copy, BlockNumber blkno,
							const char **prefix, int *prefixlen,
							const struct BtlNkKeys **keys);
extern bool btl_upper_bytewise(const BtlUpperCopy *copy);
extern const struct BtlNkPlan *btl_upper_plan(const BtlUpperCopy *copy);
extern void btl_upper_remember(Relation rel, Buffer buf, bool top,
							   const struct BtlNkPlan *plan);

/* scan.c */
extern bool btlayout_gettuple(IndexScanDesc scan, ScanDirection dir);
extern void btlayout_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
							ScanKey orderbys, int norderbys);
extern void btlayout_endscan(IndexScanDesc scan);
extern int64 btlayout_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);

/* relayout.c */
extern int64 btl_relayout_index(Relation index, BufferAccessStrategy strategy,
								bool vacuum_delay, bool all);
extern IndexBulkDeleteResult *btlayout_vacuumcleanup(IndexVacuumInfo *info,
													 IndexBulkDeleteResult *stats);
extern void btl_note_stale_page(Relation index, Buffer buf);
extern void btl_relayout_noted(Relation index);
extern void btl_relayout_forget(Oid relid);
extern int64 btl_relayout_notes_held(void);

/* wal.c */
extern bool btl_wal_records;
extern void btl_wal_register(void);
extern bool btl_wal_uses_records(void);
extern void btl_wal_log_relayout(Buffer buf, const BtlPagePlan *plan);

/* conflict.c */
extern void btlayout_install_conflict_hook(void);

/* validate.c */
extern bool btlayout_validate(Oid opclassoid);

/* build.c */
extern IndexBuildResult *btlayout_build(Relation heap, Relation index,
										IndexInfo *indexInfo);

#endif							/* BTLAYOUT_H */
