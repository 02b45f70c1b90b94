/*-------------------------------------------------------------------------
 *
 * indexstate.c
 *	  What a backend keeps of each btlayout index it looks up: one entry
 *	  per index as this backend knows it, the anchor of its copy of the
 *	  upper levels (upper.c) and of its map of recent buffers (recent.c);
 *	  and when those entries die.
 *
 * Identity.  An entry is found by the index's identity: its OID, its
 * relation file locator and the backend that owns it if it is temporary
 * (rd_backend).  A file locator alone does not name a relation: a
 * temporary relation's file number is unique only among that backend's
 * files (t<backend>_<number>), so once the OID counter has wrapped a
 * temporary index can have the file number of a permanent one, and the
 * buffer tags of the two are then alike (local and shared buffers are
 * told apart by the sign of the buffer number, not by the tag).  A
 * temporary relation's OID, though, is unique in pg_class among all live
 * relations, and its backend is part of the identity too.
 *
 * Lifetime.  A relcache invalidation of the index (or of every relation)
 * makes its entries stale; this backend processes it before it can open
 * the index again (opening takes a lock, and taking a lock accepts
 * invalidation messages; its own changes are processed at the end of the
 * command).  Most invalidations leave the index what it was: VACUUM and
 * ANALYZE writing its statistics to pg_class, an update of its pg_index
 * row, a changed option.  Others give it a new relation file (REINDEX,
 * TRUNCATE, SET TABLESPACE) or drop it, after which its identity could in
 * time name another relation (an OID and a file number reused).
 *
 * What an entry holds fares differently.  Its copy of the upper levels
 * (upper.c) holds images searched with the index's comparison functions,
 * whose downlinks name blocks the index is assumed to have: it is not used
 * again after an invalidation, and it is freed.  Its map of recent buffers
 * (recent.c) needs nothing but the identity to be right: an entry of the
 * map is used only if the buffer's tag names that very block of that very
 * file, and no buffer holds a block of a file after the file is dropped;
 * so whatever relation has the identity now, the map names buffers of its
 * file or buffers that fail the test.  The entry then is kept if the
 * catalog shows the index still in the entry's file (sweep()), with
 * its map and without a copy, and freed if not, the index gone or in
 * another file.  Until then, lookups that find the entry use its map and
 * neither search nor extend its copy.
 *
 * Those checks read pg_class, so they are made only where a lookup begins
 * with none under way, a few at a time (not at the end of a transaction,
 * where the catalogs cannot be read: the copies of stale entries are freed
 * there, and the checks wait for the next lookup).  Memory is freed only
 * when no lookup is under way (a lookup can be interrupted by an
 * invalidation: a comparison function may take a lock, or run a query that
 * looks an index up).  None of this is trusted for a lookup's answer
 * anyway: what an entry holds is a hint that each use checks on the page,
 * under its lock (recent.c, search.c); the checks keep hints of one
 * relation from being taken for another's, and memory from being held for
 * indexes that are gone.
 *
 * Cost.  An entry takes about 200 bytes; a lookup finds the entry of the
 * index it used last by comparing identities, any other by one hash
 * probe.  An invalidation finds the entries of its relation by one probe
 * of a second table, keyed by OID, whose entry heads the chain of that
 * OID's entries (more than one only while an entry of an earlier file of
 * the index waits for its check): most invalidations a backend processes
 * are of relations that have no entry, and what they cost does not grow
 * with the entries held.  There is no limit on how many indexes have
 * entries: the memory of what hangs on them (images, recent buffers) has
 * caps of its own, and an entry with nothing hanging on it that no lookup
 * has used for a long while is dropped when entries outnumber
 * BTL_STATE_SOFT_LIMIT (its next lookup makes a new one; docs/design.md,
 * "Per-backend state").
 * The lookup that makes an entry makes nothing to hang on it: an index's
 * recent-buffer map and copy are begun by its second lookup, so that a
 * backend that looks an index up once (a connection per request, a
 * session passing over many partitions once) pays for neither a 4 kB
 * chunk nor an image it would never use again (btl_first_lookup()).
 *
 * Counters.  What became of the per-backend state (entries, images, chunks,
 * notes) is counted where each event happens, in btl_state_counters, which
 * this file owns, as plain backend-local int64s; btlayout_backend_state()
 * (stats.c) reports them with what is held now.
 *
 * src/indexstate.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

/*
 * Entries beyond which the least recently used ones without images are
 * dropped, a quarter at a time (about 200 kB of entries per 1,000)
 */
#define BTL_STATE_SOFT_LIMIT	4096

/* Stale entries checked against the catalog at most, where a lookup begins */
#define STALE_CHECKS	16

static HTAB *states;

/*
 * The entries of each OID, chained through same_relid, newest first; the
 * chain of an OID is in by_relid while it has an entry (and, after an out
 * of memory between the two insertions of btl_index_state_lookup(), empty
 * until the next invalidation of the OID removes it).  The OID only finds
 * entries: each keeps its whole identity.  Entries of two relations that
 * had one OID at different times (a dropped index whose entry waits for
 * its check, a later relation given its OID) share a chain, and an
 * invalidation of either makes both stale: at worst a check more, never
 * an entry missed.
 */
typedef struct RelidEntries
{
	Oid			relid;			/* hash key */
	BtlIndexState *first;
} RelidEntries;

static HTAB *by_relid;
static uint64 use_counter;
static uint64 invalidations;

/* What became of the per-backend state (btlayout.h, btlayout_backend_state()) */
BtlStateCounters btl_state_counters;

/*
 * The entry found last, and the relcache entry it was found for: the
 * fast path of btl_index_state() (btlayout.h).  A relcache entry keeps its
 * address when it is rebuilt, even with a new relation file, and a freed
 * one's address can be another relation's later; but each of those comes
 * with a relcache invalidation, processed by this backend before it uses
 * the relation, and every invalidation forgets both (invalidate()).
 */
Relation	btl_last_rel;
BtlIndexState *btl_last_state;

/* Lookups begun (btl_lookup_begin()), nested ones included */
uint64		btl_lookups;
static bool sweep_pending;
static int	lookup_depth;

/*
 * The stale entries, each in one list: those made stale since the last
 * sweep, whose copies the next sweep frees, and those whose copies are
 * freed, waiting for their check, oldest first.  A sweep so costs the
 * entries gone stale since the last one and the checks it makes, not a
 * pass over every entry: after an invalidation of every relation, the 250
 * sweeps that check 4,000 entries 16 at a time look at each once.
 */
static dlist_head stale_new = DLIST_STATIC_INIT(stale_new);
static dlist_head stale_unchecked = DLIST_STATIC_INIT(stale_unchecked);

static void
free_state(BtlIndexState *state)
{
	RelidEntries *chain = hash_search(by_relid, &state->id.relid,
									  HASH_FIND, NULL);

	btl_upper_free_copy(state);
	btl_recent_free_map(state);
	if (state->stale)
		dlist_delete(&state->stale_node);
	if (btl_last_state == state)
	{
		btl_last_state = NULL;
		btl_last_rel = NULL;
	}
	Assert(chain != NULL);
	if (chain != NULL)
	{
		for (BtlIndexState **link = &chain->first; *link != NULL;
			 link = &(*link)->same_relid)
			if (*link == state)
			{
				*link = state->same_relid;
				break;
			}
		if (chain->first == NULL)
			hash_search(by_relid, &state->id.relid, HASH_REMOVE, NULL);
	}
	hash_search(states, &state->id, HASH_REMOVE, NULL);
	btl_state_counters.entries_freed++;
}

/*
 * Is relation id->relid, as the catalog has it now, in the relation file of
 * identity id?  False if the relation is gone.
 */
static bool
in_its_file(const BtlRelIdentity *id)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(id->relid));
	Form_pg_class form;
	Oid			spc;
	bool		same;

	if (!HeapTupleIsValid(tuple))
		return false;
	form = (Form_pg_class) GETSTRUCT(tuple);
	spc = OidIsValid(form->reltablespace) ? form->reltablespace :
		MyDatabaseTableSpace;
	same = form->relfilenode == BtlLocatorNumber(&id->locator) &&
		spc == BtlLocatorSpc(&id->locator) &&
		(form->relpersistence == RELPERSISTENCE_TEMP) ==
		(id->backend != BTL_NO_BACKEND);
	ReleaseSysCache(tuple);
	return same;
}

/*
 * Check the stale entries of ids[0 .. n - 1] against the catalog (see the
 * top): keep those whose index is still in their file, free the others.  A
 * catalog read may process invalidations: an entry invalidated again
 * meanwhile stays stale, for a later check.
 */
static void
check_stale(const BtlRelIdentity *ids, int n)
{
	for (int i = 0; i < n; i++)
	{
		uint64		seen = invalidations;
		bool		keep = in_its_file(&ids[i]);
		BtlIndexState *state;

		state = hash_search(states, &ids[i], HASH_FIND, NULL);
		if (state == NULL || !state->stale)
			continue;
		if (invalidations != seen)
		{
			/* checked again by a later sweep, after the others */
			dlist_delete(&state->stale_node);
			dlist_push_tail(&stale_unchecked, &state->stale_node);
			sweep_pending = true;
		}
		else if (keep)
		{
			dlist_delete(&state->stale_node);
			state->stale = false;
		}
		else
			free_state(state);
	}
}

/*
 * When no lookup is under way: free the copies of stale entries; if the
 * catalogs can be read (catalog), check up to STALE_CHECKS of them against
 * it (check_stale()); and free what upper.c asked to free.
 *
 * sweep_pending is lowered first and raised again for what is left: the
 * entries beyond STALE_CHECKS, and those invalidated during a catalog
 * read.  A catalog read can also fail (a cancel, a lock timeout on
 * pg_class, out of memory): the flag is then raised again before the error
 * goes on, so that the entries not checked are checked where a later
 * lookup begins.  Nothing else would raise it for them: make_stale() raises
 * it only for an entry that was not stale, and an entry left stale with the
 * flag down would stay stale, its index given no copy of its upper levels,
 * until another invalidation of it.
 */
static void
sweep(bool catalog)
{
	BtlRelIdentity ids[STALE_CHECKS];
	int			n = 0;
	dlist_iter	iter;

	if (lookup_depth > 0 || states == NULL)
		return;
	sweep_pending = false;
	while (!dlist_is_empty(&stale_new))
	{
		BtlIndexState *state = dlist_head_element(BtlIndexState, stale_node,
												  &stale_new);

		btl_upper_free_copy(state);
		dlist_delete(&state->stale_node);
		dlist_push_tail(&stale_unchecked, &state->stale_node);
	}
	dlist_foreach(iter, &stale_unchecked)
	{
		if (!catalog || n == STALE_CHECKS)
		{
			sweep_pending = true;
			break;
		}
		ids[n++] = dlist_container(BtlIndexState, stale_node, iter.cur)->id;
	}
	if (n > 0)
	{
		PG_TRY();
		{
			check_stale(ids, n);
		}
		PG_CATCH();
		{
			sweep_pending = true;
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	btl_upper_sweep();
}

/* An entry goes stale (see the top) */
static void
make_stale(BtlIndexState *state)
{
	if (!state->stale)
	{
		btl_state_counters.entries_invalidated++;
		state->stale = true;
		dlist_push_tail(&stale_new, &state->stale_node);
		sweep_pending = true;
	}
}

/*
 * Relcache invalidation of relid, or of every relation (InvalidOid): its
 * entries go stale, and the lookup-relayout notes of it go.  An OID's
 * entries are found through by_relid, so an invalidation of one relation
 * costs a probe however many entries there are; only an invalidation of
 * every relation (a reset of the invalidation queue) looks at them all.
 */
static void
invalidate(Datum arg, Oid relid)
{
	btl_relayout_forget(relid);
	invalidations++;
	btl_last_state = NULL;
	btl_last_rel = NULL;
	if (states == NULL)
		return;
	if (relid == InvalidOid)
	{
		HASH_SEQ_STATUS seq;
		BtlIndexState *state;

		hash_seq_init(&seq, states);
		while ((state = hash_seq_search(&seq)) != NULL)
			make_stale(state);
	}
	else
	{
		RelidEntries *chain = hash_search(by_relid, &relid, HASH_FIND, NULL);

		if (chain == NULL)
			return;
		for (BtlIndexState *state = chain->first; state != NULL;
			 state = state->same_relid)
			make_stale(state);
		if (chain->first == NULL)
			hash_search(by_relid, &relid, HASH_REMOVE, NULL);
	}
}

/*
 * At the end of a transaction no lookup is under way, whatever errors cut
 * lookups short: free what invalidations and settings left to free.
 */
static void
at_xact_end(XactEvent event, void *arg)
{
	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT &&
		event != XACT_EVENT_PARALLEL_ABORT)
		return;
	lookup_depth = 0;
	if (sweep_pending)
		sweep(false);
}

/*
 * Lookups under way when each open subtransaction began, by nesting level:
 * an error caught by a subtransaction (a PL/pgSQL exception block, in a
 * comparison function or around a query) ends the lookups begun inside it,
 * and its abort brings the count back to what it was at its start.
 */
static int *depth_at_start;
static int	depth_levels;

static void
at_subxact_event(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();

	if (event == SUBXACT_EVENT_START_SUB)
	{
		if (level >= depth_levels)
		{
			int			n = Max(level + 1, 16);
			int		   *bigger = MemoryContextAllocZero(TopMemoryContext,
														n * sizeof(int));

			if (depth_at_start != NULL)
			{
				memcpy(bigger, depth_at_start, depth_levels * sizeof(int));
				pfree(depth_at_start);
			}
			depth_at_start = bigger;
			depth_levels = n;
		}
		depth_at_start[level] = lookup_depth;
	}
	else if (event == SUBXACT_EVENT_ABORT_SUB && level < depth_levels)
		lookup_depth = depth_at_start[level];
}

/* Registered by _PG_init() */
void
btl_index_state_init(void)
{
	CacheRegisterRelcacheCallback(invalidate, (Datum) 0);
	RegisterXactCallback(at_xact_end, NULL);
	RegisterSubXactCallback(at_subxact_event, NULL);
}

/*
 * Drop the entries not used for the last three quarters of the limit's
 * uses that hold no images: none was ever made, or the eviction hand of
 * upper.c took them all (their copies' images are the copies' to give up,
 * page by page, and an entry goes once they are gone).
 */
static void
trim_states(void)
{
	HASH_SEQ_STATUS seq;
	BtlIndexState *state;
	uint64		horizon = use_counter - (uint64) BTL_STATE_SOFT_LIMIT * 3 / 4;

	hash_seq_init(&seq, states);
	while ((state = hash_seq_search(&seq)) != NULL)
		if (state->lastuse < horizon &&
			(state->copy == NULL || btl_upper_copy_empty(state->copy)))
		{
			free_state(state);
			btl_state_counters.entries_trimmed++;
		}
}

/* A hash table of the backend's life, keyed by the first keysize bytes */
static HTAB *
new_table(const char *name, Size keysize, Size entrysize)
{
	HASHCTL		ctl;

	ctl.keysize = keysize;
	ctl.entrysize = entrysize;
	ctl.hcxt = TopMemoryContext;
	return hash_create(name, 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * The entry of index rel, made if there is none (stale if it was
 * invalidated and not checked since: see the top).  The slow path of
 * btl_index_state().
 */
BtlIndexState *
btl_index_state_lookup(Relation rel)
{
	BtlRelIdentity id;
	BtlIndexState *state;
	uint32		hashvalue;
	bool		found;

	btl_rel_identity(rel, &id);
	if (by_relid == NULL)
		by_relid = new_table("btlayout index states by OID", sizeof(Oid),
							 sizeof(RelidEntries));
	if (states == NULL)
		states = new_table("btlayout index states", sizeof(BtlRelIdentity),
						   sizeof(BtlIndexState));
	hashvalue = get_hash_value(states, &id);
	state = hash_search_with_hash_value(states, &id, hashvalue, HASH_FIND,
										NULL);
	found = state != NULL;
	if (!found)
	{
		/*
		 * The chain of the OID first: an out of memory in either insertion
		 * then leaves no entry that an invalidation of its OID would miss
		 * (at worst an empty chain), and nothing below can fail.
		 */
		bool		chained;
		RelidEntries *chain = hash_search(by_relid, &id.relid, HASH_ENTER,
										  &chained);

		if (!chained)
			chain->first = NULL;
		state = hash_search_with_hash_value(states, &id, hashvalue,
											HASH_ENTER, NULL);
		state->stale = false;
		state->recent = NULL;
		state->copy = NULL;
		state->born = btl_lookups;
		state->same_relid = chain->first;
		chain->first = state;
		btl_state_counters.entries_made++;
	}
	state->lastuse = ++use_counter;
	btl_last_state = state;
	btl_last_rel = rel;

	/* not in a nested lookup: an outer one may hold another entry */
	if (unlikely(!found && lookup_depth <= 1 &&
				 hash_get_num_entries(states) > BTL_STATE_SOFT_LIMIT))
		trim_states();
	return btl_last_state;
}

/*
 * The entry of the index with this OID, without making one; for the test
 * functions that report what a backend keeps of an index.
 */
BtlIndexState *
btl_index_state_by_oid(Oid relid)
{
	RelidEntries *chain;

	if (states == NULL)
		return NULL;
	if (sweep_pending)
		sweep(true);
	chain = hash_search(by_relid, &relid, HASH_FIND, NULL);
	for (BtlIndexState *state = chain ? chain->first : NULL; state != NULL;
		 state = state->same_relid)
		if (!state->stale)
			return state;
	return NULL;
}

/*
 * A lookup begins and ends (btl_search()): entries are not freed while one
 * is under way.  An error ends the lookups under way without their end: the
 * abort of the (sub)transaction that catches it sets the count back.
 */
void
btl_lookup_begin(void)
{
	if (lookup_depth == 0 && unlikely(sweep_pending))
		sweep(true);
	lookup_depth++;
	btl_lookups++;
}

void
btl_lookup_end(void)
{
	if (lookup_depth > 0)
		lookup_depth--;
}

/*
 * Is this lookup nested in another (a query a comparison function runs)?
 * upper.c then leaves images alone: the outer lookup may be reading one.
 */
bool
btl_lookup_nested(void)
{
	return lookup_depth > 1;
}

/* The entries held now, stale ones included */
int64
btl_index_state_count(void)
{
	return states ? (int64) hash_get_num_entries(states) : 0;
}

/* Free what upper.c asks to free, when no lookup is under way */
void
btl_index_state_request_sweep(void)
{
	sweep_pending = true;
}

/* Drop every entry's copy of the upper levels (upper.c, when swept) */
void
btl_index_state_drop_copies(void)
{
	HASH_SEQ_STATUS seq;
	BtlIndexState *state;

	if (states == NULL)
		return;
	hash_seq_init(&seq, states);
	while ((state = hash_seq_search(&seq)) != NULL)
		btl_upper_free_copy(state);
}
