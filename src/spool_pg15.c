/*-------------------------------------------------------------------------
 *
 * spool_pg15.c
 *	  PostgreSQL 15 to 17: the build's spool sorts heap-shaped tuples of
 *	  the index's columns and forms index tuples as they are read back.
 *
 * The server's index tuplesort of these versions (tuplesort_begin_index_
 * btree, through PrepareSortSupportFromIndexRel) insists that the index's
 * access method is btree.  So the spool sorts minimal tuples through the
 * heap tuplesort instead: the index's attributes, then the heap TID (as an
 * int8 of block and offset, which orders like the TID and compares inline
 * through int8's sort support, where tid's comparison is a function call
 * for every tie), and for a unique index whether the tuple is alive;
 * ordered by the index's
 * ordering operators ("<", or ">" for DESC columns, with the column's
 * NULLS FIRST/LAST and collation), then by heap TID.  validate.c
 * guarantees those operators are btree ordering operators, so the sort
 * compares with the very comparator (and sort support) btree would use.
 * Nothing else goes into the sort: a non-unique index's tuples carry no
 * liveness, since dead tuples simply take their place in the same order.
 *
 * A unique index is checked as the tuples come back: each live tuple
 * against the previous live one, through the index's comparison
 * functions.  Equal keys without NULLs (or with, under NULLS NOT DISTINCT)
 * raise the error the server's build raises.
 *
 * src/spool_pg15.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#if PG_VERSION_NUM < 180000

#include "build.h"
#include "catalog/index.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "commands/progress.h"
#include "executor/tuptable.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

struct BtlSpool
{
	Relation	heap;
	Relation	index;
	bool		isunique;
	bool		nulls_not_distinct;
	int			natts;			/* index attributes; TID (and liveness)
								 * follow */
	TupleDesc	sortdesc;
	Tuplesortstate *sort;
	TupleTableSlot *inslot;		/* virtual: what the heap scan spools */
	TupleTableSlot *outslot;	/* minimal: what the sort gives back */
	double		ntuples;		/* tuples spooled here */
	MemoryContext tuplecxt;		/* the tuple handed out last */
	IndexTuple	prevlive;		/* unique: the last live tuple read back */
};

/* Columns of the sort tuple after the index's own attributes */
#define SORT_TID_COL(natts)		((natts) + 1)
#define SORT_ALIVE_COL(natts)	((natts) + 2)

/* A heap TID as a non-negative int8 that sorts as the TID does */
static inline int64
tid_to_int8(ItemPointer tid)
{
	return ((int64) ItemPointerGetBlockNumber(tid) << 16) |
		ItemPointerGetOffsetNumber(tid);
}

int
btl_spool_nsorts(bool isunique)
{
	return 1;
}

/*
 * Tuple descriptor of the sort: a copy of the index's, then TID and, for a
 * unique index, liveness.
 */
static TupleDesc
sort_tupdesc(Relation index, bool isunique)
{
	TupleDesc	indexdesc = RelationGetDescr(index);
	int			natts = indexdesc->natts;
	TupleDesc	desc = CreateTemplateTupleDesc(natts + (isunique ? 2 : 1));
	int			i;

	for (i = 1; i <= natts; i++)
		TupleDescCopyEntry(desc, i, indexdesc, i);
	TupleDescInitEntry(desc, SORT_TID_COL(natts), "heap_tid", INT8OID, -1, 0);
	if (isunique)
		TupleDescInitEntry(desc, SORT_ALIVE_COL(natts), "alive", BOOLOID, -1, 0);

	return desc;
}

/*
 * Start the sort, ordered by the key attributes as the index orders them,
 * then heap TID.
 */
static Tuplesortstate *
sort_begin(Relation index, TupleDesc sortdesc, int sortmem,
		   SortCoordinate coordinate)
{
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	int			natts = IndexRelationGetNumberOfAttributes(index);
	AttrNumber *attnums = palloc((nkeyatts + 1) * sizeof(AttrNumber));
	Oid		   *sortops = palloc((nkeyatts + 1) * sizeof(Oid));
	Oid		   *collations = palloc((nkeyatts + 1) * sizeof(Oid));
	bool	   *nullsfirst = palloc((nkeyatts + 1) * sizeof(bool));
	int			i;

	for (i = 0; i < nkeyatts; i++)
	{
		int16		option = index->rd_indoption[i];

		attnums[i] = i + 1;
		sortops[i] = btl_sort_operator(index, i);
		collations[i] = index->rd_indcollation[i];
		nullsfirst[i] = (option & INDOPTION_NULLS_FIRST) != 0;
	}

	/* heap TID breaks ties: it is nbtree's last key attribute */
	attnums[nkeyatts] = SORT_TID_COL(natts);
	sortops[nkeyatts] = Int8LessOperator;
	collations[nkeyatts] = InvalidOid;
	nullsfirst[nkeyatts] = false;

	return tuplesort_begin_heap(sortdesc, nkeyatts + 1, attnums, sortops,
								collations, nullsfirst, sortmem,
								coordinate, TUPLESORT_NONE);
}

/*
 * Start one participant's sort (coordinates: NULL for a serial build, else
 * the one coordinate of the sort).
 */
BtlSpool *
btl_spool_begin(Relation heap, Relation index, bool isunique,
				bool nulls_not_distinct, int sortmem,
				SortCoordinate *coordinates)
{
	BtlSpool   *spool = (BtlSpool *) palloc0(sizeof(BtlSpool));

	spool->heap = heap;
	spool->index = index;
	spool->isunique = isunique;
	spool->nulls_not_distinct = nulls_not_distinct;
	spool->natts = IndexRelationGetNumberOfAttributes(index);
	spool->sortdesc = sort_tupdesc(index, isunique);
	spool->sort = sort_begin(index, spool->sortdesc, sortmem,
							 coordinates ? coordinates[0] : NULL);
	spool->inslot = MakeSingleTupleTableSlot(spool->sortdesc, &TTSOpsVirtual);
	spool->outslot = MakeSingleTupleTableSlot(spool->sortdesc,
											  &TTSOpsMinimalTuple);
	spool->tuplecxt = AllocSetContextCreate(CurrentMemoryContext,
											"btlayout build tuple",
											ALLOCSET_DEFAULT_SIZES);
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
	TupleTableSlot *slot = spool->inslot;
	int			natts = spool->natts;

	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, natts * sizeof(Datum));
	memcpy(slot->tts_isnull, isnull, natts * sizeof(bool));
	slot->tts_values[SORT_TID_COL(natts) - 1] = Int64GetDatum(tid_to_int8(tid));
	slot->tts_isnull[SORT_TID_COL(natts) - 1] = false;
	if (spool->isunique)
	{
		slot->tts_values[SORT_ALIVE_COL(natts) - 1] = BoolGetDatum(tupleIsAlive);
		slot->tts_isnull[SORT_ALIVE_COL(natts) - 1] = false;
	}
	ExecStoreVirtualTuple(slot);

	tuplesort_puttupleslot(spool->sort, slot);
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
	tuplesort_performsort(spool->sort);
}

/*
 * Does itup have the same key as prev, in the sense of a unique index?
 * Compared with the index's own comparison functions; a NULL is equal only
 * to a NULL, and only under NULLS NOT DISTINCT does that make a duplicate.
 */
static bool
unique_keys_collide(BtlSpool *spool, IndexTuple prev, IndexTuple itup)
{
	Relation	index = spool->index;
	TupleDesc	desc = RelationGetDescr(index);
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	int			attno;

	for (attno = 1; attno <= nkeyatts; attno++)
	{
		bool		null1;
		bool		null2;
		Datum		d1 = index_getattr(prev, attno, desc, &null1);
		Datum		d2 = index_getattr(itup, attno, desc, &null2);

		if (null1 || null2)
		{
			if (!(null1 && null2 && spool->nulls_not_distinct))
				return false;
		}
		else if (DatumGetInt32(FunctionCall2Coll(index_getprocinfo(index, attno, BTORDER_PROC),
												 index->rd_indcollation[attno - 1],
												 d1, d2)) != 0)
			return false;
	}
	return true;
}

static void
report_unique_violation(BtlSpool *spool, IndexTuple itup)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	char	   *key_desc;

	index_deform_tuple(itup, RelationGetDescr(spool->index), values, isnull);
	key_desc = BuildIndexValueDescription(spool->index, values, isnull);

	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("could not create unique index \"%s\"",
					RelationGetRelationName(spool->index)),
			 key_desc ? errdetail("Key %s is duplicated.", key_desc) :
			 errdetail("Duplicate keys exist."),
			 errtableconstraint(spool->heap,
								RelationGetRelationName(spool->index))));
}

/*
 * The next tuple in index order, or NULL at the end.  It stays valid until
 * the next call.
 */
IndexTuple
btl_spool_next(BtlSpool *spool)
{
	TupleTableSlot *slot = spool->outslot;
	int			natts = spool->natts;
	IndexTuple	itup;
	int64		tid;
	MemoryContext oldcxt;

	if (!tuplesort_gettupleslot(spool->sort, true, false, slot, NULL))
		return NULL;

	MemoryContextReset(spool->tuplecxt);
	oldcxt = MemoryContextSwitchTo(spool->tuplecxt);
	slot_getallattrs(slot);
	itup = index_form_tuple(RelationGetDescr(spool->index), slot->tts_values,
							slot->tts_isnull);
	tid = DatumGetInt64(slot->tts_values[SORT_TID_COL(natts) - 1]);
	ItemPointerSet(&itup->t_tid, (BlockNumber) (tid >> 16),
				   (OffsetNumber) (tid & 0xFFFF));
	MemoryContextSwitchTo(oldcxt);

	if (spool->isunique &&
		DatumGetBool(slot->tts_values[SORT_ALIVE_COL(natts) - 1]))
	{
		if (spool->prevlive != NULL)
		{
			if (unique_keys_collide(spool, spool->prevlive, itup))
				report_unique_violation(spool, itup);
			pfree(spool->prevlive);
		}
		spool->prevlive = CopyIndexTuple(itup);
	}

	return itup;
}

void
btl_spool_end(BtlSpool *spool)
{
	tuplesort_end(spool->sort);
	ExecDropSingleTupleTableSlot(spool->inslot);
	ExecDropSingleTupleTableSlot(spool->outslot);
	MemoryContextDelete(spool->tuplecxt);
}

#endif							/* PG_VERSION_NUM < 180000 */
