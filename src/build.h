/*-------------------------------------------------------------------------
 *
 * build.h
 *	  The parts of CREATE INDEX: the spool that sorts the heap's index
 *	  tuples (spool.c), the parallel heap scan and sort (build_parallel.c),
 *	  and the loader that writes the sorted tuples into pages (build.c).
 *
 * A spool is one participant's sorts.  In a serial build the backend is
 * the only participant: it feeds the spool from its heap scan, sorts and
 * reads the tuples back in index order.  In a parallel build each worker,
 * and the leader as one of them, feeds a worker spool from its share of a
 * parallel heap scan and sorts its runs; the leader then opens a leader
 * spool over the same shared sort state, whose sort merges every
 * participant's runs, and reads the tuples back from it.  It gives the
 * loader index tuples, heap TID set, in index order (key
 * attributes, then heap TID: nbtree's order), live and dead ones alike,
 * with a unique index's duplicates among live tuples already refused.
 *
 * src/build.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_BUILD_H
#define BTLAYOUT_BUILD_H

#include "access/genam.h"
#include "nodes/execnodes.h"
#include "utils/tuplesort.h"

/* A spool uses at most this many sorts (a unique index's dead tuples) */
#define BTL_SPOOL_MAX_SORTS		2

typedef struct BtlSpool BtlSpool;

/* spool.c */
extern int	btl_spool_nsorts(bool isunique);
extern BtlSpool *btl_spool_begin(Relation heap, Relation index,
								 bool isunique, bool nulls_not_distinct,
								 int sortmem, SortCoordinate *coordinates);
extern void btl_spool_callback(Relation index, ItemPointer tid,
							   Datum *values, bool *isnull,
							   bool tupleIsAlive, void *state);
extern double btl_spool_ntuples(BtlSpool *spool);
extern void btl_spool_performsort(BtlSpool *spool, bool progress);
extern IndexTuple btl_spool_next(BtlSpool *spool);
extern void btl_spool_end(BtlSpool *spool);

/* build_parallel.c */
typedef struct BtlBuildLeader BtlBuildLeader;

extern BtlBuildLeader *btl_parallel_begin(Relation heap, Relation index,
										  IndexInfo *indexInfo, int request);
extern SortCoordinate btl_parallel_coordinate(BtlBuildLeader *leader,
											  int sortno);
extern double btl_parallel_heapscan(BtlBuildLeader *leader,
									double *indtuples, bool *brokenhotchain);
extern void btl_parallel_end(BtlBuildLeader *leader);
extern PGDLLEXPORT void btlayout_parallel_build_main(dsm_segment *seg,
													 shm_toc *toc);

#endif							/* BTLAYOUT_BUILD_H */
