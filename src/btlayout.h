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
 * refuses non-btree relations (build.c), and a clear error where the server
 * refuses a non-btree unique index during INSERT ... ON CONFLICT
 * (conflict.c).
 *
 * src/btlayout.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_H
#define BTLAYOUT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 160000
#error "btlayout supports PostgreSQL 15 only"
#endif

#include "access/amapi.h"
#include "access/nbtree.h"
#include "nodes/execnodes.h"
#include "utils/relcache.h"

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
} BtlOptions;

/* Fill factor of leaf pages, as an fraction of free space to leave. */
#define BtlTargetPageFreeSpace(rel) \
	((rel)->rd_options ? \
	 BLCKSZ * (100 - ((BtlOptions *) (rel)->rd_options)->bt.fillfactor) / 100 : \
	 BLCKSZ * (100 - BTREE_DEFAULT_FILLFACTOR) / 100)
#define BtlDeduplicateItems(rel) \
	((rel)->rd_options ? \
	 ((BtlOptions *) (rel)->rd_options)->bt.deduplicate_items : true)

/* handler.c */
extern bytea *btlayout_options(Datum reloptions, bool validate);

/* conflict.c */
extern void btlayout_install_conflict_hook(void);

/* validate.c */
extern bool btlayout_validate(Oid opclassoid);

/* build.c */
extern IndexBuildResult *btlayout_build(Relation heap, Relation index,
										IndexInfo *indexInfo);

#endif							/* BTLAYOUT_H */
