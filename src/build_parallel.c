/*-------------------------------------------------------------------------
 *
 * build_parallel.c
 *	  Parallel CREATE INDEX for btlayout: a parallel heap scan whose
 *	  participants each sort their share, merged by the leader.
 *
 * This is the scheme of nbtree's parallel build, run from our library:
 * the leader creates a parallel context whose workers enter at
 * btlayout_parallel_build_main(), found in the very library file the
 * leader's access method handler was loaded from.  Shared memory holds one
 * BtlBuildShared (the relations, what kind of build, and the counters the
 * participants report), the parallel heap scan's state after it, and one
 * tuplesort coordination area per sort of a spool (build.h).  Every
 * participant -- each worker, and the leader as one of them -- joins the
 * parallel heap scan, feeds its own spool and sorts it into runs on the
 * shared file set; the leader then opens the leader side of the same
 * sorts, whose merge reads every participant's runs, and loads the index
 * from it (build.c), alone.  maintenance_work_mem is shared out among the
 * participants; the leader's merge gets all of it once they are done.
 *
 * The heap scan sees what a serial build's sees: every tuple, with
 * SnapshotAny (the build checks visibility itself), or, for a concurrent
 * build, those visible to one MVCC snapshot registered by the leader and
 * handed to the workers with the scan.  The tuples are merged into one
 * total order (key attributes, then heap TID), so a parallel build writes
 * the same index, byte for byte, as a serial one.
 *
 * Workers take the locks the leader's command holds (the leader's lock
 * group makes them compatible): ShareLock on the heap and
 * AccessExclusiveLock on the index, or for a concurrent build
 * ShareUpdateExclusiveLock and RowExclusiveLock.  An error in a worker (a
 * unique violation found by its sort, a cancel) reaches the leader through
 * the parallel context and is raised there; the leader's transaction then
 * aborts and the index's new relation file goes with it.
 *
 * src/build_parallel.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "build.h"
#include "catalog/index.h"
#include "catalog/pg_proc.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

/* Keys of the parallel context's table of contents */
#define BTL_KEY_SHARED			UINT64CONST(0xB71A000000000001)
#define BTL_KEY_QUERY_TEXT		UINT64CONST(0xB71A000000000002)
#define BTL_KEY_WAL_USAGE		UINT64CONST(0xB71A000000000003)
#define BTL_KEY_BUFFER_USAGE	UINT64CONST(0xB71A000000000004)
#define BTL_KEY_SORT(sortno)	(UINT64CONST(0xB71A000000000010) + (sortno))

/*
 * The build's state in shared memory.  The leader sets the first part
 * before launching the workers; the counters below are the participants'
 * reports, under the spinlock.
 */
typedef struct BtlBuildShared
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isunique;
	bool		nulls_not_distinct;
	bool		isconcurrent;
	int			nsorts;			/* sorts of each participant's spool */
	int			nparticipants;	/* participants planned for: sizes each
								 * one's share of maintenance_work_mem */
	uint64		queryid;

	ConditionVariable workersdonecv;	/* signalled by each participant
										 * done */
	slock_t		mutex;
	int			nparticipantsdone;
	double		reltuples;		/* heap tuples scanned */
	double		indtuples;		/* tuples spooled */
	bool		brokenhotchain;

	/* The parallel heap scan's state follows, at a BUFFERALIGN'd offset */
} BtlBuildShared;

#define BtlSharedScan(shared) \
	((ParallelTableScanDesc) ((char *) (shared) + BUFFERALIGN(sizeof(BtlBuildShared))))

/*
 * The leader's handle on a parallel build.
 */
struct BtlBuildLeader
{
	ParallelContext *pcxt;
	int			nparticipants;	/* launched workers, and the leader */
	BtlBuildShared *shared;
	Sharedsort *sharedsorts[BTL_SPOOL_MAX_SORTS];
	Snapshot	snapshot;
	WalUsage   *walusage;		/* one per worker */
	BufferUsage *bufferusage;
};

/*
 * The library the index's access method handler comes from: the workers
 * look their entry point up there, so that they run the code the leader
 * runs even where that file is not $libdir/btlayout.
 */
static char *
handler_library(Relation index)
{
	HeapTuple	tup;
	Datum		probin;
	bool		isnull;
	char	   *library;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(index->rd_amhandler));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", index->rd_amhandler);
	probin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);
	if (isnull)
		elog(ERROR, "function %u has no library", index->rd_amhandler);
	library = TextDatumGetCString(probin);
	ReleaseSysCache(tup);

	return library;
}

/*
 * One participant's part: join the parallel heap scan, spool what it
 * hands over, sort it into runs for the leader, and report.
 */
static void
participate(Relation heap, Relation index, BtlBuildShared *shared,
			Sharedsort **sharedsorts, bool progress)
{
	SortCoordinate coordinates[BTL_SPOOL_MAX_SORTS];
	BtlSpool   *spool;
	IndexInfo  *indexInfo;
	TableScanDesc scan;
	double		reltuples;
	int			i;

	for (i = 0; i < shared->nsorts; i++)
	{
		coordinates[i] = (SortCoordinate) palloc0(sizeof(SortCoordinateData));
		coordinates[i]->isWorker = true;
		coordinates[i]->nParticipants = -1;
		coordinates[i]->sharedsort = sharedsorts[i];
	}
	spool = btl_spool_begin(heap, index, shared->isunique,
							shared->nulls_not_distinct,
							maintenance_work_mem / shared->nparticipants,
							coordinates);

	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = shared->isconcurrent;
	scan = btl_table_beginscan_parallel(heap, BtlSharedScan(shared));
	reltuples = table_index_build_scan(heap, index, indexInfo, true, progress,
									   btl_spool_callback, spool, scan);
	btl_spool_performsort(spool, progress);

	SpinLockAcquire(&shared->mutex);
	shared->nparticipantsdone++;
	shared->reltuples += reltuples;
	shared->indtuples += btl_spool_ntuples(spool);
	if (indexInfo->ii_BrokenHotChain)
		shared->brokenhotchain = true;
	SpinLockRelease(&shared->mutex);
	ConditionVariableSignal(&shared->workersdonecv);

	btl_spool_end(spool);
}

/*
 * Start a parallel build with up to request workers, the leader taking its
 * share of the heap scan before it returns.  NULL if no worker could be
 * had (no dynamic shared memory, no free worker): the caller builds
 * serially.
 */
BtlBuildLeader *
btl_parallel_begin(Relation heap, Relation index, IndexInfo *indexInfo,
				   int request)
{
	BtlBuildLeader *leader;
	ParallelContext *pcxt;
	BtlBuildShared *shared;
	Snapshot	snapshot;
	Size		estshared;
	Size		estsort;
	int			nsorts = btl_spool_nsorts(indexInfo->ii_Unique);
	int			querylen = 0;
	int			i;

	Assert(request > 0);
	EnterParallelMode();
	pcxt = CreateParallelContext(handler_library(index),
								 "btlayout_parallel_build_main", request);

	/*
	 * A build indexes every tuple and checks visibility itself; a
	 * concurrent one indexes what one MVCC snapshot sees.
	 */
	snapshot = indexInfo->ii_Concurrent ?
		RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;

	/* Room for the shared state, the sorts, the query text and usage */
	estshared = add_size(BUFFERALIGN(sizeof(BtlBuildShared)),
						 table_parallelscan_estimate(heap, snapshot));
	shm_toc_estimate_chunk(&pcxt->estimator, estshared);
	estsort = tuplesort_estimate_shared(request + 1);
	for (i = 0; i < nsorts; i++)
		shm_toc_estimate_chunk(&pcxt->estimator, estsort);
	shm_toc_estimate_chunk(&pcxt->estimator,
						   mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator,
						   mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 3 + nsorts);
	if (debug_query_string)
	{
		querylen = strlen(debug_query_string);
		shm_toc_estimate_chunk(&pcxt->estimator, querylen + 1);
		shm_toc_estimate_keys(&pcxt->estimator, 1);
	}

	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		if (IsMVCCSnapshot(snapshot))
			UnregisterSnapshot(snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return NULL;
	}

	shared = (BtlBuildShared *) shm_toc_allocate(pcxt->toc, estshared);
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isunique = indexInfo->ii_Unique;
	shared->nulls_not_distinct = indexInfo->ii_NullsNotDistinct;
	shared->isconcurrent = indexInfo->ii_Concurrent;
	shared->nsorts = nsorts;
	shared->nparticipants = request + 1;
	shared->queryid = pgstat_get_my_query_id();
	ConditionVariableInit(&shared->workersdonecv);
	SpinLockInit(&shared->mutex);
	shared->nparticipantsdone = 0;
	shared->reltuples = 0;
	shared->indtuples = 0;
	shared->brokenhotchain = false;
	table_parallelscan_initialize(heap, BtlSharedScan(shared), snapshot);
	shm_toc_insert(pcxt->toc, BTL_KEY_SHARED, shared);

	leader = (BtlBuildLeader *) palloc0(sizeof(BtlBuildLeader));
	for (i = 0; i < nsorts; i++)
	{
		leader->sharedsorts[i] = (Sharedsort *) shm_toc_allocate(pcxt->toc, estsort);
		tuplesort_initialize_shared(leader->sharedsorts[i], request + 1,
									pcxt->seg);
		shm_toc_insert(pcxt->toc, BTL_KEY_SORT(i), leader->sharedsorts[i]);
	}
	if (debug_query_string)
	{
		char	   *query = shm_toc_allocate(pcxt->toc, querylen + 1);

		memcpy(query, debug_query_string, querylen + 1);
		shm_toc_insert(pcxt->toc, BTL_KEY_QUERY_TEXT, query);
	}
	leader->walusage = shm_toc_allocate(pcxt->toc,
										mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, BTL_KEY_WAL_USAGE, leader->walusage);
	leader->bufferusage = shm_toc_allocate(pcxt->toc,
										   mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, BTL_KEY_BUFFER_USAGE, leader->bufferusage);

	LaunchParallelWorkers(pcxt);
	leader->pcxt = pcxt;
	leader->nparticipants = pcxt->nworkers_launched + 1;
	leader->shared = shared;
	leader->snapshot = snapshot;

	ereport(DEBUG1,
			(errmsg_internal("btlayout: building index \"%s\" with %d of %d parallel workers requested",
							 RelationGetRelationName(index),
							 pcxt->nworkers_launched, request)));

	if (pcxt->nworkers_launched == 0)
	{
		btl_parallel_end(leader);
		return NULL;
	}

	/*
	 * The leader takes its share of the scan.  Each participant's share of
	 * maintenance_work_mem is the planned one, also when fewer workers
	 * came: the leader's merge later counts only those that did.
	 */
	participate(heap, index, shared, leader->sharedsorts, true);

	/* A worker that failed to start must not leave the leader waiting */
	WaitForParallelWorkersToAttach(pcxt);

	return leader;
}

/*
 * The leader's side of sort sortno of the spool: it merges every
 * participant's runs.
 */
SortCoordinate
btl_parallel_coordinate(BtlBuildLeader *leader, int sortno)
{
	SortCoordinate coordinate = (SortCoordinate) palloc0(sizeof(SortCoordinateData));

	coordinate->isWorker = false;
	coordinate->nParticipants = leader->nparticipants;
	coordinate->sharedsort = leader->sharedsorts[sortno];
	return coordinate;
}

/*
 * Wait until every participant has scanned and sorted its share; the heap
 * tuples scanned, the tuples spooled and whether a broken HOT chain was
 * seen, over all of them.
 */
double
btl_parallel_heapscan(BtlBuildLeader *leader, double *indtuples,
					  bool *brokenhotchain)
{
	BtlBuildShared *shared = leader->shared;
	double		reltuples;

	for (;;)
	{
		SpinLockAcquire(&shared->mutex);
		if (shared->nparticipantsdone == leader->nparticipants)
		{
			reltuples = shared->reltuples;
			*indtuples = shared->indtuples;
			*brokenhotchain = shared->brokenhotchain;
			SpinLockRelease(&shared->mutex);
			break;
		}
		SpinLockRelease(&shared->mutex);

		ConditionVariableSleep(&shared->workersdonecv,
							   WAIT_EVENT_PARALLEL_CREATE_INDEX_SCAN);
	}
	ConditionVariableCancelSleep();

	return reltuples;
}

/*
 * Wait for the workers to exit, count their WAL and buffer usage, and end
 * parallel mode.  The shared sorts go with the context: the leader's merge
 * must be read to its end before.
 */
void
btl_parallel_end(BtlBuildLeader *leader)
{
	int			i;

	WaitForParallelWorkersToFinish(leader->pcxt);
	for (i = 0; i < leader->pcxt->nworkers_launched; i++)
		InstrAccumParallelQuery(&leader->bufferusage[i], &leader->walusage[i]);
	if (IsMVCCSnapshot(leader->snapshot))
		UnregisterSnapshot(leader->snapshot);
	DestroyParallelContext(leader->pcxt);
	ExitParallelMode();
}

/*
 * A parallel worker's entry point.
 */
void
btlayout_parallel_build_main(dsm_segment *seg, shm_toc *toc)
{
	BtlBuildShared *shared;
	Sharedsort *sharedsorts[BTL_SPOOL_MAX_SORTS];
	Relation	heap;
	Relation	index;
	LOCKMODE	heaplock;
	LOCKMODE	indexlock;
	WalUsage   *walusage;
	BufferUsage *bufferusage;
	int			i;

	debug_query_string = shm_toc_lookup(toc, BTL_KEY_QUERY_TEXT, true);
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	shared = shm_toc_lookup(toc, BTL_KEY_SHARED, false);
	pgstat_report_query_id(shared->queryid, false);

	/* The locks the leader's command holds */
	heaplock = shared->isconcurrent ? ShareUpdateExclusiveLock : ShareLock;
	indexlock = shared->isconcurrent ? RowExclusiveLock : AccessExclusiveLock;
	heap = table_open(shared->heaprelid, heaplock);
	index = index_open(shared->indexrelid, indexlock);

	for (i = 0; i < shared->nsorts; i++)
	{
		sharedsorts[i] = shm_toc_lookup(toc, BTL_KEY_SORT(i), false);
		tuplesort_attach_shared(sharedsorts[i], seg);
	}

	InstrStartParallelQuery();
	participate(heap, index, shared, sharedsorts, false);
	bufferusage = shm_toc_lookup(toc, BTL_KEY_BUFFER_USAGE, false);
	walusage = shm_toc_lookup(toc, BTL_KEY_WAL_USAGE, false);
	InstrEndParallelQuery(&bufferusage[ParallelWorkerNumber],
						  &walusage[ParallelWorkerNumber]);

	index_close(index, indexlock);
	table_close(heap, heaplock);
}
