/*-------------------------------------------------------------------------
 *
 * conflict.c
 *	  A clear error for INSERT ... ON CONFLICT on a table with a btlayout
 *	  unique index.
 *
 * PostgreSQL 15 to 17 prepare speculative insertion (ON CONFLICT) for every
 * unique index of the target table, and BuildSpeculativeIndexInfo() refuses
 * any that is not btree with an internal error ("unexpected non-btree
 * speculative unique index"), whichever index the arbiter is.  We cannot
 * lift that restriction from an extension, but we can say what is going on
 * before the executor gets there: an ExecutorStart hook looks at the
 * statement's ModifyTable nodes and raises a feature-not-supported error
 * naming the index.  From 18 on the server serves ON CONFLICT through any
 * unique index whose access method translates compare types, as ours does
 * (nbtree's translation), and the hook is not installed.
 *
 * The hook exists once the library is loaded, which the planner does when it
 * infers the arbiter of ON CONFLICT (target) from the table's indexes.  An
 * ON CONFLICT without a target in a session that has not touched a btlayout
 * index yet reaches the server's message instead; preloading the library
 * (session_preload_libraries) makes the clear one certain.
 *
 * src/conflict.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/genam.h"
#include "access/table.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/rel.h"

static ExecutorStart_hook_type prev_ExecutorStart = NULL;

/*
 * Raise the error if relid has a unique index of access method amoid.
 */
static void
check_relation(Oid relid, Oid amoid)
{
	Relation	rel = table_open(relid, NoLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;

	foreach(lc, indexes)
	{
		/* the lock the executor takes on indexes of a result relation */
		Relation	index = index_open(lfirst_oid(lc), RowExclusiveLock);

		if (index->rd_index->indisunique && index->rd_rel->relam == amoid)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("INSERT ... ON CONFLICT is not supported on table \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail("Its unique index \"%s\" uses access method btlayout, and PostgreSQL checks ON CONFLICT only through btree unique indexes.",
							   RelationGetRelationName(index)),
					 errhint("Use a btree index for unique keys that INSERT ... ON CONFLICT relies on.")));
		index_close(index, NoLock);
	}

	list_free(indexes);
	table_close(rel, NoLock);
}

/*
 * Check the result relations of a plan, if it is an ON CONFLICT insert.
 * ModifyTable is always the top node of the plan or subplan it is in.
 */
static void
check_plan(PlannedStmt *stmt, Plan *plan, Oid amoid)
{
	ModifyTable *mt = (ModifyTable *) plan;
	ListCell   *lc;

	if (plan == NULL || !IsA(plan, ModifyTable) ||
		mt->onConflictAction == ONCONFLICT_NONE)
		return;

	foreach(lc, mt->resultRelations)
		check_relation(rt_fetch(lfirst_int(lc), stmt->rtable)->relid, amoid);
}

static void
btlayout_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	PlannedStmt *stmt = queryDesc->plannedstmt;

	if (stmt->commandType == CMD_INSERT || stmt->hasModifyingCTE)
	{
		Oid			amoid = get_index_am_oid("btlayout", true);
		ListCell   *lc;

		if (OidIsValid(amoid))
		{
			check_plan(stmt, stmt->planTree, amoid);
			foreach(lc, stmt->subplans)
				check_plan(stmt, (Plan *) lfirst(lc), amoid);
		}
	}

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

void
btlayout_install_conflict_hook(void)
{
	/* 18 checks ON CONFLICT through any index with compare-type translation */
	if (BTL_SERVER_TRANSLATES_CMPTYPE)
		return;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = btlayout_ExecutorStart;
}
