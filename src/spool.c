/*-------------------------------------------------------------------------
 *
 * spool.c
 *	  The build's spool: index tuples sorted by the server's index
 *	  tuplesort, as nbtree's own build sorts them.
 *
 * Each heap tuple's index tuple is formed once, as it is spooled, and
 * sorted by the operator classes' sort support (abbreviated keys
 * included), then by heap TID.  18's tuplesort accepts any access method
 * that orders its tuples; 15-17's accept only btree, and get the index
 * through btl_sort_index() (compat.h says why that is sound).  The
 * tuplesort itself refuses the duplicates of a unique index when two live
 * tuples compare equal, with the error core's build raises; dead tuples
 * (RECENTLY_DEAD ones a build must index but must not check) go into a
 * second sort and are merged into the first as they are read back.
 *
 * src/spool.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "build.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/sortsupport.h"

struct BtlSpool
{
	Relation	index;
	Relation	sortindex;		/* the index as the sorts see it (compat.h) */
	Tuplesortstate *live;		/* every tuple, or a unique index's live ones */
	Tuplesortstate *dead;		/* a unique index's dead tuples, else NULL */
	double		ntuples;		/* tuples spooled here */

	/* Reading back a unique index's two sorts, merged */
	bool		merging;		/* first tuple of each read? */
	IndexTuple	nextlive;		/* the next tuple of each sort, or NULL */
	IndexTuple	nextdead;
	bool		lastwasdead;	/* which sort the last tuple came from */
	SortSupport sortkeys;		/* one per key attribute */
};

int
btl_spool_nsorts(bool isunique)
{
	return isunique ? 2 : 1;
}

/*
 * Start one participant's sorts.  coordinates is NULL for a serial build,
 * else one coordinate per sort (btl_spool_nsorts).  A unique index's dead
 * tuples are expected to be few: their sort gets work_mem at most, as in
 * nbtree.
 */
BtlSpool *
btl_spool_begin(Relation heap, Relation index, bool isunique,
				bool nulls_not_distinct, int sortmem,
				SortCoordinate *coordinates)
{
	BtlSpool   *spool = (BtlSpool *) palloc0(sizeof(BtlSpool));

	spool->index = index;
	spool->sortindex = btl_sort_index(index);
	spool->live = tuplesort_begin_index_btree(heap, spool->sortindex, isunique,
											  nulls_not_distinct, sortmem,
											  coordinates ? coordinates[0] : NULL,
											  TUPLESORT_NONE);
	if (isunique)
		spool->dead = tuplesort_begin_index_btree(heap, spool->sortindex,
												  false, false,
												  Min(sortmem, work_mem),
												  coordinates ? coordinates[1] : NULL,
												  TUPLESORT_NONE);
	return spool;
}

/*
 * table_index_build_scan callback: spool one tuple.
 */
void
btl_spool_callback(Relation index, ItemPointer tid, Datum *values,
				   bool *isnull, bool tupleIsAlive, void *state)
{
	BtlSpool   *spool = (BtlSpool *) state;

	tuplesort_putindextuplevalues((tupleIsAlive || spool->dead == NULL) ?
								  spool->live : spool->dead,
								  index, tid, values, isnull);
	spool->ntuples += 1;
}

double
btl_spool_ntuples(BtlSpool *spool)
{
	return spool->ntuples;
}

void
btl_spool_performsort(BtlSpool *spool, bool progress)
{
	if (progress)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
									 PROGRESS_BTREE_PHASE_PERFORMSORT_1);
	tuplesort_performsort(spool->live);
	if (spool->dead)
	{
		if (progress)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE,
										 PROGRESS_BTREE_PHASE_PERFORMSORT_2);
		tuplesort_performsort(spool->dead);
	}
}

/*
 * Does a come before b in the index (key attributes, then heap TID)?  The
 * key attributes compare through the same sort support the sorts use.
 */
static bool
merge_precedes(BtlSpool *spool, IndexTuple a, IndexTuple b)
{
	TupleDesc	desc = RelationGetDescr(spool->index);
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(spool->index);
	int			i;

	for (i = 0; i < nkeyatts; i++)
	{
		bool		null1;
		bool		null2;
		Datum		d1 = index_getattr(a, i + 1, desc, &null1);
		Datum		d2 = index_getattr(b, i + 1, desc, &null2);
		int			cmp = ApplySortComparator(d1, null1, d2, null2,
											  &spool->sortkeys[i]);

		if (cmp != 0)
			return cmp < 0;
	}
	return ItemPointerCompare(&a->t_tid, &b->t_tid) < 0;
}

static void
merge_start(BtlSpool *spool)
{
	Relation	index = spool->index;
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	int			i;

	spool->sortkeys = (SortSupport) palloc0(nkeyatts * sizeof(SortSupportData));
	for (i = 0; i < nkeyatts; i++)
	{
		SortSupport ssup = &spool->sortkeys[i];
		int16		option = index->rd_indoption[i];

		ssup->ssup_cxt = CurrentMemoryContext;
		ssup->ssup_collation = index->rd_indcollation[i];
		ssup->ssup_nulls_first = (option & INDOPTION_NULLS_FIRST) != 0;
		ssup->ssup_attno = i + 1;
		ssup->abbreviate = false;
		btl_prepare_index_sortsupport(spool->sortindex,
									  (option & INDOPTION_DESC) != 0, ssup);
	}
	spool->nextlive = tuplesort_getindextuple(spool->live, true);
	spool->nextdead = tuplesort_getindextuple(spool->dead, true);
	spool->merging = true;
}

/*
 * The next tuple in index order, or NULL at the end.  It stays valid until
 * the next call.
 */
IndexTuple
btl_spool_next(BtlSpool *spool)
{
	if (spool->dead == NULL)
		return tuplesort_getindextuple(spool->live, true);

	/* Refill from the sort the last tuple came from */
	if (!spool->merging)
		merge_start(spool);
	else if (spool->lastwasdead)
		spool->nextdead = tuplesort_getindextuple(spool->dead, true);
	else
		spool->nextlive = tuplesort_getindextuple(spool->live, true);

	spool->lastwasdead = spool->nextdead != NULL &&
		(spool->nextlive == NULL ||
		 merge_precedes(spool, spool->nextdead, spool->nextlive));
	return spool->lastwasdead ? spool->nextdead : spool->nextlive;
}

void
btl_spool_end(BtlSpool *spool)
{
	tuplesort_end(spool->live);
	if (spool->dead)
		tuplesort_end(spool->dead);
}
