/*-------------------------------------------------------------------------
 *
 * handler.c
 *	  The btlayout access method handler and its reloptions.
 *
 * The handler starts from the server's own btree routine (bthandler), so
 * every capability and every callback we do not replace is exactly btree's:
 * insertion, page splits, deduplication, bulk delete, page deletion, scans,
 * parallel scans, mark/restore, cost estimation.  We replace the build
 * (the server's sorted build refuses non-btree relations, see build.c), the
 * VACUUM cleanup (nbtree's, then a relayout pass, see relayout.c), the
 * positioning of scans on their first item (scan.c, search.c), the
 * reloptions parser (our options extend BTOptions, see btlayout.h) and the
 * operator class validator (validate.c).
 *
 * src/handler.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/relation.h"
#include "bincmp.h"
#include "access/reloptions.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "collhint.h"
#include "normkey.h"
#include "utils/acl.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/syscache.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/* glibc's record of the CPU's features (compare_isa_default()) */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define BTL_GLIBC_CPU_FEATURES 1
#endif
#endif

PG_MODULE_MAGIC;

/* Kind of our reloptions, registered once per backend at load */
static relopt_kind btl_relopt_kind;

/* Where each option lands in BtlOptions */
static const relopt_parse_elt btl_relopt_tab[] = {
	{"fillfactor", RELOPT_TYPE_INT, offsetof(BtlOptions, bt.fillfactor)},
	{"vacuum_cleanup_index_scale_factor", RELOPT_TYPE_REAL,
	offsetof(BtlOptions, bt.vacuum_cleanup_index_scale_factor)},
	{"deduplicate_items", RELOPT_TYPE_BOOL,
	offsetof(BtlOptions, bt.deduplicate_items)},
	{"layout", RELOPT_TYPE_ENUM, offsetof(BtlOptions, layout)},
	{"prefetch", RELOPT_TYPE_BOOL, offsetof(BtlOptions, prefetch)},
	{"lookup_relayout", RELOPT_TYPE_BOOL, offsetof(BtlOptions, lookup_relayout)},
	{"recent_buffers", RELOPT_TYPE_BOOL, offsetof(BtlOptions, recent_buffers)},
	{"upper_copy", RELOPT_TYPE_BOOL, offsetof(BtlOptions, upper_copy)},
	{"upper_copy_keys", RELOPT_TYPE_BOOL, offsetof(BtlOptions, upper_copy_keys)},
};

bool		btl_prefetch = true;
bool		btl_lookup_relayout = true;

/* GUC btlayout.compare_isa: the instruction set the compare core uses */
static int	btl_compare_isa = BTL_ISA_PORTABLE;

static const struct config_enum_entry compare_isa_values[] = {
	{"portable", BTL_ISA_PORTABLE, false},
	{"sse4.2", BTL_ISA_SSE42, false},
	{"avx2", BTL_ISA_AVX2, false},
	{NULL, 0, false}
};

/* Values of the layout option */
static relopt_enum_elt_def layout_values[] = {
	{"none", BTL_LAYOUT_NONE},
	{"eytzinger", BTL_LAYOUT_EYTZINGER},
	{"veb", BTL_LAYOUT_VEB},
	{"btorder", BTL_LAYOUT_BTORDER},
	{"blocked", BTL_LAYOUT_BLOCKED},
	{(const char *) NULL}
};

void		_PG_init(void);

/*
 * The default of btlayout.compare_isa without the cpuid instruction, which
 * traps to the hypervisor in a virtual machine (4 us each here, and
 * btl_isa_best() runs four) and was the second cost of _PG_init() in a new
 * backend (bench/README.md, "What a new backend pays"): glibc's record of
 * the CPU's usable features, made once at the postmaster's start and
 * inherited by every backend.  AVX2 "active" is what btl_isa_best() checks
 * too (the CPU has it and the OS saves its state); a glibc tunable that
 * hides a feature can only give a lower default.  Elsewhere,
 * btl_isa_best().
 */
static int
compare_isa_default(void)
{
#ifdef BTL_GLIBC_CPU_FEATURES
	if (CPU_FEATURE_ACTIVE(AVX2) && CPU_FEATURE_ACTIVE(SSE4_2))
		return BTL_ISA_AVX2;
	if (CPU_FEATURE_ACTIVE(SSE4_2))
		return BTL_ISA_SSE42;
	return BTL_ISA_PORTABLE;
#else
	return (int) btl_isa_best();
#endif
}

/*
 * The compare core cannot use what the CPU or the OS does not support.
 * The boot value (compare_isa_default()) is not checked again: that would
 * run cpuid in every backend that loads the library.
 */
static bool
check_compare_isa(int *newval, void **extra, GucSource source)
{
	if (source == PGC_S_DEFAULT)
		return true;
	if (*newval > (int) btl_isa_best())
	{
		GUC_check_errdetail("This machine supports at most \"%s\".",
							btl_isa_name(btl_isa_best()));
		return false;
	}
	return true;
}

static void
assign_compare_isa(int newval, void *extra)
{
	btl_isa_set((BtlIsa) newval);
}

/*
 * Register the reloptions, the GUCs, the WAL resource manager when the
 * library is preloaded (wal.c) and the ON CONFLICT check (conflict.c).
 * The reloptions btree has are btree's own, with btree's defaults, ranges
 * and lock levels, so that an index moved between btree and btlayout keeps
 * the meaning of its options.
 */
void
_PG_init(void)
{
	btl_recent_local_buffers = btl_server_reads_recent_local_buffers();
	btl_relopt_kind = add_reloption_kind();

	add_int_reloption(btl_relopt_kind, "fillfactor",
					  "Packs btlayout index pages only to this percentage",
					  BTREE_DEFAULT_FILLFACTOR, BTREE_MIN_FILLFACTOR, 100,
					  ShareUpdateExclusiveLock);

	add_real_reloption(btl_relopt_kind, "vacuum_cleanup_index_scale_factor",
					   "Deprecated B-Tree parameter.",
					   -1, 0.0, 1e10,
					   ShareUpdateExclusiveLock);

	add_bool_reloption(btl_relopt_kind, "deduplicate_items",
					   "Enables \"deduplicate items\" feature for this btlayout index",
					   true,
					   ShareUpdateExclusiveLock);

	add_enum_reloption(btl_relopt_kind, "layout",
					   "Order of tuple bodies inside the pages of this btlayout index",
					   layout_values, BTL_DEFAULT_LAYOUT,
					   "Valid values are \"none\", \"eytzinger\", \"veb\", \"btorder\" and \"blocked\".",
					   ShareUpdateExclusiveLock);

	add_bool_reloption(btl_relopt_kind, "prefetch",
					   "Prefetch what the in-page search of this btlayout index needs next",
					   true,
					   ShareUpdateExclusiveLock);

	add_bool_reloption(btl_relopt_kind, "lookup_relayout",
					   "Lets lookups rewrite the out-of-layout pages of this btlayout index they meet",
					   true,
					   ShareUpdateExclusiveLock);

	add_bool_reloption(btl_relopt_kind, "recent_buffers",
					   "Lets descents pin the pages of this btlayout index in the buffers they were in last time",
					   true,
					   ShareUpdateExclusiveLock);

	add_bool_reloption(btl_relopt_kind, "upper_copy",
					   "Lets lookups in this btlayout index start from this backend's copy of its upper levels",
					   true,
					   ShareUpdateExclusiveLock);

	add_bool_reloption(btl_relopt_kind, "upper_copy_keys",
					   "Lets lookups search the copy of this btlayout index's upper levels by its pivots' integer keys",
					   true,
					   ShareUpdateExclusiveLock);

	DefineCustomBoolVariable("btlayout.prefetch",
							 "Prefetch what the in-page search needs next.",
							 "Off turns prefetching off for every btlayout index; "
							 "on leaves it to each index's prefetch option.",
							 &btl_prefetch,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("btlayout.lookup_relayout",
							 "Let lookups note pages for a relayout.",
							 "Off turns lookup relayouts off for every btlayout index; "
							 "on leaves them to each index's lookup_relayout option.",
							 &btl_lookup_relayout,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("btlayout.recent_buffers",
							"Index blocks whose buffer a backend remembers for the descents of btlayout indexes.",
							"A descent pins a page in the buffer it was in last time "
							"when that buffer still holds it, instead of looking the "
							"page up in the shared buffer mapping table; 8 bytes a "
							"block, for all the indexes of a backend together.  0 "
							"turns this off for every index, other values leave it "
							"to each index's recent_buffers option.",
							&btl_recent_buffers,
							262144,
							0, BTL_RECENT_BUFFERS_MAX,
							PGC_USERSET,
							0,
							NULL, btl_recent_buffers_assign, NULL);
	DefineCustomIntVariable("btlayout.upper_copy",
							"Memory per backend for copies of the upper levels of btlayout indexes.",
							"A lookup searches this backend's copy of the index's "
							"internal pages down to a leaf, which must prove under "
							"its lock that it holds the key's position, instead of "
							"locking every level; 0 turns this off for every index, "
							"other values leave it to each index's upper_copy option.",
							&btl_upper_copy,
							4096,
							0, MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, btl_upper_copy_assign, NULL);
	DefineCustomIntVariable("btlayout.debug_fail_upper_alloc",
							"For tests: the n-th allocation of the copies of upper levels from now on fails.",
							"It fails as if out of memory; 0 makes none fail.",
							&btl_debug_fail_upper_alloc,
							0,
							0, INT_MAX,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, btl_debug_fail_upper_alloc_assign, NULL);
	DefineCustomBoolVariable("btlayout.upper_copy_keys",
							 "Search the copies of upper levels by their pivots' normalized keys.",
							 "For an index whose key columns all have a normalized "
							 "encoding, each internal page's copy keeps its pivots' keys "
							 "as byte strings and downlinks in arrays, searched instead "
							 "of the page's items; off searches the copy's pages as "
							 "pages for every index, on leaves it to each index's "
							 "upper_copy_keys option.",
							 &btl_upper_copy_keys,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("btlayout.upper_copy_sort_keys",
							 "Providers whose collations' strings get normalized keys in the copies of upper levels.",
							 "none, libc (strxfrm(), which the server does not trust "
							 "for sorting: here a transform that disagrees with "
							 "strcoll() costs lookups a descent of their own, never "
							 "an answer), icu (sort keys) or all; the copies of other "
							 "collations' indexes are searched as pages.  A collation "
							 "with a hint (btlayout.collation_hints) gets the hint's "
							 "ranks instead, whatever this says.  Changing it drops "
							 "the copies.",
							 &btl_upper_copy_sort_keys,
							 BTL_NK_SORT_KEYS_LIBC,
							 btl_nk_sort_keys_values,
							 PGC_USERSET,
							 0,
							 NULL, btl_upper_copy_sort_keys_assign, NULL);
	DefineCustomEnumVariable("btlayout.debug_normkey_scramble",
							 "For tests: makes the normalized keys of the copies of upper levels wrong.",
							 "keys changes every other search key's string, pivots "
							 "puts the keys of each image made from now on out of "
							 "order; answers must stay right, the leaves proving "
							 "every path.",
							 &btl_debug_normkey_scramble,
							 BTL_NK_SCRAMBLE_OFF,
							 btl_nk_scramble_values,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("btlayout.collation_hints",
							 "Lets in-page searches of strings in a collation that does not order bytes follow a hint of its order.",
							 "The hint, worked out from the collation once per backend, "
							 "ranks ASCII characters by the collation's first level; the "
							 "collation proves each hinted search's answer.",
							 &btl_collation_hints,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("btlayout.debug_collation_hint_scramble",
							 "For tests: makes the collation hints of search keys prepared from now on wrong.",
							 "Answers must stay right: the collation proves every "
							 "hinted search, and the hint is given up once too many "
							 "proofs fail.",
							 &btl_debug_collation_hint_scramble,
							 false,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("btlayout.compare_isa",
							 "Instruction set of the string compare core of the BIN operator classes.",
							 "Defaults to the best this machine supports; "
							 "a lower one can be chosen, for testing.",
							 &btl_compare_isa,
							 compare_isa_default(),
							 compare_isa_values,
							 PGC_USERSET,
							 0,
							 check_compare_isa, assign_compare_isa, NULL);
	DefineCustomBoolVariable("btlayout.wal_records",
							 "Logs relayouts as btlayout's own WAL records when the library is preloaded.",
							 "Off logs full-page images, which servers that do not "
							 "preload btlayout can replay too.  Without "
							 "shared_preload_libraries = 'btlayout', full-page "
							 "images are logged whatever this says.",
							 &btl_wal_records,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	MarkGUCPrefixReserved("btlayout");

	/* What a backend keeps of an index goes with its relcache entry */
	btl_index_state_init();

	btl_wal_register();
	btlayout_install_conflict_hook();
}

/*
 * amoptions: parse reloptions into a BtlOptions, whose first member is the
 * BTOptions the server's nbtree code expects in rd_options.
 */
bytea *
btlayout_options(Datum reloptions, bool validate)
{
	return (bytea *) build_reloptions(reloptions, validate,
									  btl_relopt_kind,
									  sizeof(BtlOptions),
									  btl_relopt_tab,
									  lengthof(btl_relopt_tab));
}

PG_FUNCTION_INFO_V1(btlayout_handler);

/*
 * btree's routine made ours: our build, scans, options and validator
 */
static void
fill_routine(IndexAmRoutine *amroutine)
{
	/*
	 * btree's name_ops stores cstring, not name (less space); a mirror of it
	 * must be allowed to say so.
	 */
	amroutine->amstorage = true;
	amroutine->ambuild = btlayout_build;
	amroutine->amvacuumcleanup = btlayout_vacuumcleanup;
	amroutine->amgettuple = btlayout_gettuple;
	amroutine->amrescan = btlayout_rescan;
	amroutine->amendscan = btlayout_endscan;
	amroutine->amgetbitmap = btlayout_getbitmap;
	amroutine->amoptions = btlayout_options;
	amroutine->amvalidate = btlayout_validate;
}

/*
 * The access method handler
 */
Datum
btlayout_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(btl_am_routine(fill_routine));
}

/*
 * Open an index for one of our SQL functions, making sure it is a btlayout
 * index the caller may use.  require_owner asks for the privilege REINDEX
 * asks for: ownership of the index.
 */
Relation
btl_open_index(Oid indexoid, LOCKMODE lockmode, bool require_owner)
{
	Relation	index;

	/*
	 * Check the privilege before taking a lock a stranger could abuse (of a
	 * relation that exists: from 16 on the owner check of one that does not
	 * is an internal error)
	 */
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(indexoid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (require_owner && !btl_class_ownercheck(indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, get_rel_name(indexoid));

	index = try_relation_open(indexoid, lockmode);
	if (index == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", indexoid)));
	if (index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_rel->relam != get_index_am_oid("btlayout", false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a btlayout index",
						RelationGetRelationName(index))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));

	/*
	 * An index that is not ready for inserts is still being built by CREATE
	 * INDEX CONCURRENTLY or REINDEX CONCURRENTLY (whose builder holds only a
	 * lock ours do not conflict with), or is what a failed one left.  The
	 * loader writes its pages around shared buffers: reading them now could
	 * leave stale copies of pages it has not written yet in shared buffers,
	 * for later inserts and VACUUM to trust.
	 */
	if (!index->rd_index->indisready)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is not ready",
						RelationGetRelationName(index)),
				 errdetail("It is being built concurrently, or a concurrent build of it failed.")));

	return index;
}
