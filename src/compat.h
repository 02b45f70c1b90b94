/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  What differs between the PostgreSQL versions btlayout supports where
 *	  the logic is the same: renamed fields, changed signatures, functions
 *	  that moved.  Each difference is one name here, used by the rest of
 *	  the code instead of the server's.  Supported: 15, 16, 17, 18 and 19.
 *
 * Where the logic itself differs (nbtree's scan state: 17 rewrote array
 * keys, 18 added skip arrays and the pin-dropping rules, 19 exported its
 * page reader), the version has a file of its own: scan_pg15.c for 15 and
 * 16, scan_pg18.c for 17, 18 and 19, whose scans without arrays differ
 * only in the names below; see scan.h.
 *
 * src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_COMPAT_H
#define BTLAYOUT_COMPAT_H

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 200000
#error "btlayout builds against PostgreSQL 15, 16, 17, 18 and 19"
#endif

#include "access/nbtree.h"
#include "access/relscan.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "commands/vacuum.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* 16: the varlena macros moved to a header of their own */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* 16: RelFileNode became RelFileLocator; owner checks by class */
#if PG_VERSION_NUM >= 160000
#define BtlRelationLocator(rel)		(&(rel)->rd_locator)
#define btl_class_ownercheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define BtlRelationLocator(rel)		(&(rel)->rd_node)
#define btl_class_ownercheck(relid, roleid) pg_class_ownercheck((relid), (roleid))
#endif

/*
 * ... and the type of a relation's file locator (indexstate.c keys entries
 * by it), its tablespace and file number
 */
#if PG_VERSION_NUM >= 160000
typedef RelFileLocator BtlRelFileLocator;
#define BtlLocatorSpc(loc)		((loc)->spcOid)
#define BtlLocatorNumber(loc)	((loc)->relNumber)
#else
typedef RelFileNode BtlRelFileLocator;
#define BtlLocatorSpc(loc)		((loc)->spcNode)
#define BtlLocatorNumber(loc)	((loc)->relNode)
#endif

/* 17: backend ids became proc numbers: rd_backend of a relation not temporary */
#if PG_VERSION_NUM >= 170000
#define BTL_NO_BACKEND		INVALID_PROC_NUMBER
#else
#define BTL_NO_BACKEND		InvalidBackendId
#endif

/* 16: parsing a qualified name can report errors softly */
#if PG_VERSION_NUM >= 160000
#define btl_qualified_name_list(str)	stringToQualifiedNameList((str), NULL)
#else
#define btl_qualified_name_list(str)	stringToQualifiedNameList(str)
#endif

/* 16: nbtree's root lookup takes the heap relation (NULL when reading) */
#if PG_VERSION_NUM >= 160000
#define btl_getroot(rel, access)	_bt_getroot((rel), NULL, (access))
#else
#define btl_getroot(rel, access)	_bt_getroot((rel), (access))
#endif

/*
 * 17: old_snapshot_threshold is gone, and with it the "snapshot too old"
 * test of every page a scan reads; _bt_get_endpoint() lost its snapshot
 */
#if PG_VERSION_NUM >= 170000
#define btl_test_for_old_snapshot(snapshot, rel, page)	((void) 0)
#define btl_get_endpoint(rel, level, rightmost, snapshot) \
	_bt_get_endpoint((rel), (level), (rightmost))
#else
#define btl_test_for_old_snapshot(snapshot, rel, page) \
	TestForOldSnapshot((snapshot), (rel), (page))
#define btl_get_endpoint(rel, level, rightmost, snapshot) \
	_bt_get_endpoint((rel), (level), (rightmost), (snapshot))
#endif

/*
 * 15 and 16 with old_snapshot_threshold set: a scan whose snapshot is old
 * errors on any page whose LSN is newer than the snapshot, so a lookup
 * that rewrites a page (a lookup relayout, which sets its LSN) would make
 * read-only workloads fail with "snapshot too old" where nbtree's never
 * do.  Lookups leave pages as they are then; VACUUM still lays them out,
 * as VACUUM itself changes pages.
 */
#if PG_VERSION_NUM >= 170000
#define btl_lookups_may_write_pages()	true
#else
#define btl_lookups_may_write_pages()	(old_snapshot_threshold < 0)
#endif

/* 17: the backend's local transaction id moved into its vxid */
#if PG_VERSION_NUM >= 170000
#define BtlMyLocalTransactionId()	(MyProc->vxid.lxid)
#else
#define BtlMyLocalTransactionId()	(MyProc->lxid)
#endif

/*
 * 17: an insertion key that compares equal with a pivot equal on its
 * attributes but without a heap TID (15's pivotsearch, used by amcheck's
 * checks) is a backward one, and every backward scan's key is one: the
 * descent of a backward scan lands directly on the page it starts from.
 * In 15 and 16 a scan's key never is (the scan steps left instead).
 */
#if PG_VERSION_NUM >= 170000
#define btl_insertkey_set_pivotsearch(key)	((key)->backward = true)
#define btl_insertkey_set_scan_direction(key, is_backward) \
	((key)->backward = (is_backward))
#define btl_insertkey_truncated_equal(key)	((key)->backward)
#else
#define btl_insertkey_set_pivotsearch(key)	((key)->pivotsearch = true)
#define btl_insertkey_set_scan_direction(key, is_backward) \
	((key)->pivotsearch = false)
#define btl_insertkey_truncated_equal(key)	((key)->pivotsearch)
#endif

/*
 * The first leaf page of a primitive scan, read into nbtree's scan
 * state (scan_pg18.c).  19 exports the page reader itself,
 * _bt_readpage(), and keeps its per-page state and _bt_checkkeys()
 * private: BTL_SERVER_READS_FIRST_PAGE.  17 and 18 keep the reader static
 * and export _bt_checkkeys(), which takes a per-page state:
 *
 * - 17 reads the scan's direction from that state; 18 reads it from
 *   currPos.dir and wants the page marked as its primitive scan's first
 *   (no key is skipped, none is forced non-required);
 * - 18 remembers the page's left sibling in currPos.prevPage and steps left
 *   from there; 17 steps left from currPos.currPage;
 * - 18 decides in btrescan() whether the scan drops its leaf pins
 *   (so->dropPin); 17 decides it for each page by 15's rule: an MVCC
 *   snapshot, a WAL-logged index and no index-only scan.  Either way a pin
 *   dropped leaves currPos.lsn for _bt_killitems() to check the page by.
 */
#define BTL_SERVER_READS_FIRST_PAGE	(PG_VERSION_NUM >= 190000)

#if PG_VERSION_NUM >= 170000 && PG_VERSION_NUM < 190000
static inline void
btl_readpage_state_init(BTReadPageState *pstate, Page page, OffsetNumber minoff,
						OffsetNumber maxoff, ScanDirection dir)
{
	memset(pstate, 0, sizeof(BTReadPageState));
	pstate->minoff = minoff;
	pstate->maxoff = maxoff;
	pstate->finaltup = NULL;
	pstate->page = page;
	pstate->offnum = InvalidOffsetNumber;
	pstate->skip = InvalidOffsetNumber;
	pstate->continuescan = true;
#if PG_VERSION_NUM >= 180000
	pstate->firstpage = true;
	pstate->forcenonrequired = false;
	pstate->startikey = 0;
#else
	pstate->dir = dir;
	pstate->prechecked = false;
	pstate->firstmatch = false;
#endif
}
#endif

/*
 * Scans with array keys on 17-19 (scan_pg18.c): the drivers run nbtree's
 * loop of primitive scans, which asks _bt_start_prim_scan() whether
 * _bt_checkkeys() scheduled another.  17 and 18 export it.  19 makes it
 * static, and its btgettuple() has it inlined: in 19rc1's machine code, as
 * in 18's source, it clears scanBehind and oppositeDirCheck and answers
 * needPrimScan (and ends a parallel scan's shared state, which concerns
 * nbtree's parallel scans only).
 */
#if PG_VERSION_NUM >= 190000
static inline bool
btl_start_prim_scan(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	Assert(scan->parallel_scan == NULL);
	so->scanBehind = false;
	so->oppositeDirCheck = false;
	return so->needPrimScan;
}
#elif PG_VERSION_NUM >= 170000
#define btl_start_prim_scan(scan, dir)	_bt_start_prim_scan((scan), (dir))
#endif

/*
 * 18's page reader, for scans with arrays, keeps a flag of its own
 * (scanBehind): the arrays were advanced past a truncated attribute of the
 * previous page's final tuple, so this page may still lie before their
 * elements.  On a page's start it rechecks the page's final tuple
 * (_bt_scanbehind_checkkeys(), exported) and, if the page is still behind,
 * schedules a new primitive scan instead of reading it; a backward read
 * stops where _bt_checkkeys() sets the flag, and a forward one does not
 * check the high key then.  17's reader has none of this.
 */
#if PG_VERSION_NUM >= 180000 && PG_VERSION_NUM < 190000
static inline bool
btl_array_page_behind(IndexScanDesc scan, ScanDirection dir, IndexTuple finaltup)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (finaltup != NULL && so->scanBehind &&
		!_bt_scanbehind_checkkeys(scan, dir, finaltup))
		return true;
	so->scanBehind = false;
	so->oppositeDirCheck = false;
	return false;
}
#define btl_array_scan_behind(so)	((so)->scanBehind)
#elif PG_VERSION_NUM >= 170000
#define btl_array_page_behind(scan, dir, finaltup)	false
#define btl_array_scan_behind(so)	false
#endif

/*
 * 18's skip arrays, as start keys (scan.c): the = key of a skip array
 * whose current element is the lowest value (SK_BT_MINVAL; backward,
 * SK_BT_MAXVAL) stands for the array's low_compare (high_compare) bound,
 * if any, and for NOT NULL if the array has no NULL element; an element
 * marked SK_BT_NEXT (SK_BT_PRIOR) means "just after (before) the value",
 * the > (<) bound.  Below 18 no key has these marks.
 */
#if PG_VERSION_NUM >= 180000
#define BTL_SK_SKIP_END		(SK_BT_MINVAL | SK_BT_MAXVAL)
#define BTL_SK_SKIP_PAST	(SK_BT_NEXT | SK_BT_PRIOR)

static inline ScanKey
btl_skip_array_bound(BTScanOpaque so, ScanKey skey, ScanDirection dir,
					 bool *null_elem)
{
	int			ikey = skey - so->keyData;

	for (int i = 0; i < so->numArrayKeys; i++)
	{
		BTArrayKeyInfo *array = &so->arrayKeys[i];

		if (array->scan_key == ikey)
		{
			*null_elem = array->null_elem;
			return ScanDirectionIsForward(dir) ? array->low_compare :
				array->high_compare;
		}
	}
	elog(ERROR, "skip array of scan key %d not found", ikey);
	return NULL;				/* keep compiler quiet */
}
#else
#define BTL_SK_SKIP_END		0
#define BTL_SK_SKIP_PAST	0
#define btl_skip_array_bound(so, skey, dir, null_elem)	((ScanKey) NULL)
#endif

#if PG_VERSION_NUM >= 180000
#define btl_scan_pos_set_prev(so, opaque) \
	((so)->currPos.prevPage = (opaque)->btpo_prev)
#define btl_scan_drops_pin(scan, so)	((so)->dropPin)
#else
#define btl_scan_pos_set_prev(so, opaque)	((void) 0)
#define btl_scan_drops_pin(scan, so) \
	(IsMVCCSnapshot((scan)->xs_snapshot) && \
	 RelationNeedsWAL((scan)->indexRelation) && !(scan)->xs_want_itup)
#endif

/*
 * Counting index scans in the statistics: 15-17 count every start of a
 * scan, before its keys are preprocessed; 18 counts descents, once the
 * keys are known to match something, and EXPLAIN ANALYZE shows them
 * ("Index Searches").
 */
#if PG_VERSION_NUM >= 180000
#define btl_count_scan_start(scan)	((void) 0)
#define btl_count_descent(scan) \
	do { \
		pgstat_count_index_scan((scan)->indexRelation); \
		if ((scan)->instrument) \
			(scan)->instrument->nsearches++; \
	} while (0)
#else
#define btl_count_scan_start(scan) \
	pgstat_count_index_scan((scan)->indexRelation)
#define btl_count_descent(scan)		((void) 0)
#endif

/*
 * 18: a scan starts from the keys preprocessing marked required, and stops
 * adding start keys at the first that is not (15-17: at the first
 * attribute without a key)
 */
#define BTL_START_KEYS_REQUIRED_ONLY	(PG_VERSION_NUM >= 180000)

/* 18: the largest nbtree item is a constant, not a function of the page */
#if PG_VERSION_NUM >= 180000
#define BtlMaxItemSize(page)		BTMaxItemSize
#else
#define BtlMaxItemSize(page)		BTMaxItemSize(page)
#endif

/* 19: a page's checksum is set by PageSetChecksum() (was ...Inplace) */
#if PG_VERSION_NUM >= 190000
#define btl_page_set_checksum(page, blkno)	PageSetChecksum((page), (blkno))
#else
#define btl_page_set_checksum(page, blkno)	PageSetChecksumInplace((page), (blkno))
#endif

/* 19: a parallel table scan is begun with flags (none wanted here) */
#if PG_VERSION_NUM >= 190000
#define btl_table_beginscan_parallel(rel, pscan) \
	table_beginscan_parallel((rel), (pscan), SO_NONE)
#else
#define btl_table_beginscan_parallel(rel, pscan) \
	table_beginscan_parallel((rel), (pscan))
#endif

/*
 * 15.0 to 15.3: ReadRecentBuffer() of a local buffer checked the shared
 * buffer of the same number instead (the review of issue 48 dates the fix
 * to 15.4; 15.18's, read here, checks the local one), so it could pin a
 * temporary index's remembered buffer for a block that buffer no longer
 * holds, or read past the shared buffers.  The minor that runs
 * is known only at run time (a library built with 15.4's headers loads in
 * 15.2): server_version_num says.
 */
static inline bool
btl_server_reads_recent_local_buffers(void)
{
#if PG_VERSION_NUM < 160000
	const char *num = GetConfigOption("server_version_num", false, false);

	return num != NULL && atoi(num) >= 150004;
#else
	return true;
#endif
}

/* 18: vacuum_delay_point() says whether it is ANALYZE */
#if PG_VERSION_NUM >= 180000
#define btl_vacuum_delay_point()	vacuum_delay_point(false)
#else
#define btl_vacuum_delay_point()	vacuum_delay_point()
#endif

/*
 * 18: lc_collate_is_c() is gone; the collation's locale says.  An invalid
 * collation (a type that is not collatable) is not "C".
 */
static inline bool
btl_collation_is_c(Oid collation)
{
	if (!OidIsValid(collation))
		return false;
#if PG_VERSION_NUM >= 180000
	return pg_newlocale_from_collation(collation)->collate_is_c;
#else
	return lc_collate_is_c(collation);
#endif
}

/*
 * Does a collation's locale (found by pg_newlocale_from_collation()) break
 * ties of strings its collation calls equal by their bytes?  Below 18 the
 * locale of the database's default libc collation is 0, and deterministic.
 */
static inline bool
btl_locale_deterministic(pg_locale_t locale)
{
#if PG_VERSION_NUM >= 180000
	return locale->deterministic;
#else
	return !locale || locale->deterministic;
#endif
}

/*
 * How a collation's locale orders two strings of the given lengths, before
 * any tie-break: the call varstr_cmp() makes for a collation that does not
 * order bytes, its locale found once instead of per comparison.  16 and
 * later export it as pg_strncoll().  15 calls ICU (in a UTF-8 database
 * directly, else on the strings converted to UTF-16) or libc (on
 * NUL-terminated copies: strcoll_l() with the collation's locale_t, or
 * strcoll() in the process's LC_COLLATE for the default collation) as its
 * varstr_cmp() does.
 */
static inline int
btl_strncoll(const char *a, int alen, const char *b, int blen,
			 pg_locale_t locale)
{
#if PG_VERSION_NUM >= 160000
	return pg_strncoll(a, alen, b, blen, locale);
#else
	char		sbuf[1024];
	char	   *buf = sbuf;
	int			result;

#ifdef USE_ICU
	if (locale && locale->provider == COLLPROVIDER_ICU)
	{
		UErrorCode	status = U_ZERO_ERROR;

#ifdef HAVE_UCOL_STRCOLLUTF8
		if (GetDatabaseEncoding() == PG_UTF8)
			result = ucol_strcollUTF8(locale->info.icu.ucol, a, alen, b, blen,
									  &status);
		else
#endif
		{
			UChar	   *ua;
			UChar	   *ub;
			int32_t		ualen = icu_to_uchar(&ua, a, alen);
			int32_t		ublen = icu_to_uchar(&ub, b, blen);

			result = ucol_strcoll(locale->info.icu.ucol, ua, ualen, ub, ublen);
			pfree(ua);
			pfree(ub);
		}
		if (U_FAILURE(status))
			ereport(ERROR,
					(errmsg("collation failed: %s", u_errorName(status))));
		return result;
	}
#endif
	if (alen + blen + 2 > (int) sizeof(sbuf))
		buf = palloc(alen + blen + 2);
	memcpy(buf, a, alen);
	buf[alen] = '\0';
	memcpy(buf + alen + 1, b, blen);
	buf[alen + 1 + blen] = '\0';
	if (locale && locale->info.lt)
		result = strcoll_l(buf, buf + alen + 1, locale->info.lt);
	else
		result = strcoll(buf, buf + alen + 1);
	if (buf != sbuf)
		pfree(buf);
	return result;
#endif
}

/*
 * The sort key of the srclen bytes at src in a collation's locale, as
 * strcmp() orders sort keys as the collation orders strings: ICU's
 * ucol_getSortKey(), libc's strxfrm().  Written to dest, destsize bytes;
 * returns its length without the terminating NUL, the key being whole in
 * dest only if that is less than destsize; SIZE_MAX if ICU failed.
 *
 * 18's pg_strnxfrm() serves every provider.  16's and 17's serve ICU but
 * refuse libc unless the server was built with TRUST_STRXFRM (Debian's
 * are not): they raise an error for a collation of its own, and fail on
 * a null pointer for the database's default collation, whose pg_locale_t
 * is 0 there.  15 has no such function.  So below 18 this calls libc
 * itself, on a NUL-terminated copy: strxfrm_l() with the collation's
 * locale_t, or strxfrm() in the process's LC_COLLATE, which the backend
 * set to the database's, for the default collation (a pg_locale_t of 0,
 * or one without a locale_t).  An untrusted strxfrm() costs only speed
 * here (normkey.c: images whose pivots it misorders are refused, and a
 * wrong downlink is refused at the leaf).  15 makes ICU's key as 16's
 * pg_strnxfrm() does: on the string converted to UTF-16
 * (ucol_getSortKey() counts the NUL it writes).
 */
static inline size_t
btl_strnxfrm(char *dest, size_t destsize, const char *src, size_t srclen,
			 pg_locale_t locale)
{
#if PG_VERSION_NUM >= 180000
	return pg_strnxfrm(dest, destsize, src, srclen, locale);
#else
	char	   *copy;
	size_t		result;

#ifdef USE_ICU
	if (locale && locale->provider == COLLPROVIDER_ICU)
	{
#if PG_VERSION_NUM >= 160000
		return pg_strnxfrm(dest, destsize, src, srclen, locale);
#else
		UChar	   *uchar;
		int32_t		ulen = icu_to_uchar(&uchar, src, srclen);
		int32_t		n = ucol_getSortKey(locale->info.icu.ucol, uchar, ulen,
										(uint8_t *) dest,
										(int32_t) Min(destsize, PG_INT32_MAX));

		pfree(uchar);
		return n > 0 ? (size_t) n - 1 : SIZE_MAX;
#endif
	}
#endif
	copy = pnstrdup(src, srclen);
	if (locale && locale->info.lt)
		result = strxfrm_l(dest, copy, destsize, locale->info.lt);
	else
		result = strxfrm(dest, copy, destsize);
	pfree(copy);
	return result;
#endif
}

/*
 * Can btl_strnxfrm_prefix() make sort keys in this locale: ICU's, in a
 * UTF-8 database (16 and later say so for every provider; libc cannot)?
 */
static inline bool
btl_strxfrm_prefix_ok(pg_locale_t locale)
{
#if PG_VERSION_NUM >= 160000
	return locale != NULL && pg_strxfrm_prefix_enabled(locale);
#elif defined(USE_ICU)
	return locale != NULL && locale->provider == COLLPROVIDER_ICU &&
		GetDatabaseEncoding() == PG_UTF8;
#else
	return false;
#endif
}

/*
 * The first destsize bytes of the sort key of the srclen bytes at src,
 * by ICU's ucol_nextSortKeyPart() over the UTF-8 string (no conversion to
 * UTF-16, and no more of the key made than asked for): the number of bytes
 * written, less than destsize only if that is the whole key.  16 exports
 * pg_strnxfrm_prefix(); on 15 this calls what it would.
 */
static inline size_t
btl_strnxfrm_prefix(char *dest, size_t destsize, const char *src,
					size_t srclen, pg_locale_t locale)
{
#if PG_VERSION_NUM >= 160000
	return pg_strnxfrm_prefix(dest, destsize, src, srclen, locale);
#elif defined(USE_ICU)
	UCharIterator iter;
	uint32_t	state[2] = {0, 0};
	UErrorCode	status = U_ZERO_ERROR;
	int32_t		n;

	uiter_setUTF8(&iter, src, srclen);
	n = ucol_nextSortKeyPart(locale->info.icu.ucol, &iter, state,
							 (uint8_t *) dest,
							 (int32_t) Min(destsize, PG_INT32_MAX), &status);
	if (U_FAILURE(status))
		ereport(ERROR,
				(errmsg("sort key generation failed: %s", u_errorName(status))));
	return (size_t) n;
#else
	elog(ERROR, "no ICU");
	return 0;
#endif
}

/*
 * 18: get_ordering_op_properties() gives a CompareType, whose values are
 * btree's strategy numbers
 */
static inline bool
btl_ordering_op_properties(Oid opno, Oid *opfamily, Oid *opcintype,
						   int16 *strategy)
{
#if PG_VERSION_NUM >= 180000
	CompareType cmptype;

	if (!get_ordering_op_properties(opno, opfamily, opcintype, &cmptype))
		return false;
	*strategy = (int16) cmptype;
	return true;
#else
	return get_ordering_op_properties(opno, opfamily, opcintype, strategy);
#endif
}

/*
 * The access method's routine: nbtree's, changed by fill().  15-18 have a
 * handler return a palloc'd routine, which the relcache copies and frees:
 * nbtree's fresh one, changed, each call.  19 has it return a pointer to
 * a routine that lives as long as the process, which the relcache keeps
 * without copying: one, copied from nbtree's constant and changed on the
 * first call, the same pointer after that.  From 17 on nbtree's routine
 * claims amcanbuildparallel, which our build honours (build_parallel.c).
 */
static inline const IndexAmRoutine *
btl_am_routine(void (*fill) (IndexAmRoutine *routine))
{
#if PG_VERSION_NUM >= 190000
	static IndexAmRoutine routine;
	static bool filled = false;

	if (!filled)
	{
		memcpy(&routine, DatumGetPointer(DirectFunctionCall1(bthandler, (Datum) 0)),
			   sizeof(IndexAmRoutine));
		fill(&routine);
		filled = true;
	}
	return &routine;
#else
	IndexAmRoutine *routine =
		(IndexAmRoutine *) DatumGetPointer(DirectFunctionCall1(bthandler, (Datum) 0));

	fill(routine);
	return routine;
#endif
}

/*
 * The parallel workers a build may ask for, as many as core btree's would
 * get.  17: index_build() plans them for any access method that claims
 * amcanbuildparallel and hands them over in the IndexInfo.  15 and 16 plan
 * them for btree only, so we ask the planner as index_build() would (it is
 * never called for us in bootstrap mode, its only serial caller).
 */
#if PG_VERSION_NUM >= 170000
#define btl_build_workers(heap, index, indexInfo)	((indexInfo)->ii_ParallelWorkers)
#else
#define btl_build_workers(heap, index, indexInfo) \
	(IsNormalProcessingMode() ? \
	 plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index)) : 0)
#endif

/*
 * The index as the server's index tuplesort and PrepareSortSupportFromIndexRel()
 * must see it.  18 accepts any access method that orders its tuples and
 * takes the sort direction as a flag.  15-17 accept only a relation whose
 * pg_class row names btree, because the strategy numbers they look up
 * ("<" and ">") are btree's; btlayout's operator classes have those very
 * strategy numbers and support functions (validate.c refuses any other),
 * so those versions get a shallow copy of the relcache entry whose
 * pg_class row says btree.  Every other field points into the real entry,
 * which the build holds open and locked, and which relcache invalidation
 * never frees while it is open (an open index is reloaded in place); the
 * copy lives in the caller's memory context, as long as the sort.
 */
#if PG_VERSION_NUM >= 180000
#define btl_sort_index(index)		(index)
#define btl_prepare_index_sortsupport(index, desc, ssup) \
	PrepareSortSupportFromIndexRel((index), (desc), (ssup))
#else
static inline Relation
btl_sort_index(Relation index)
{
	Relation	copy = (Relation) palloc(sizeof(RelationData));
	Form_pg_class form = (Form_pg_class) palloc(CLASS_TUPLE_SIZE);

	memcpy(copy, index, sizeof(RelationData));
	memcpy(form, index->rd_rel, CLASS_TUPLE_SIZE);
	form->relam = BTREE_AM_OID;
	copy->rd_rel = form;
	return copy;
}
#define btl_prepare_index_sortsupport(index, desc, ssup) \
	PrepareSortSupportFromIndexRel((index), \
								   (desc) ? BTGreaterStrategyNumber : BTLessStrategyNumber, \
								   (ssup))
#endif

/*
 * 18: the server finds an index's equality and ordering operators through
 * its access method's compare-type translation (amtranslatecmptype, which
 * nbtree's routine gives us) instead of insisting on btree: ON CONFLICT,
 * foreign keys, partitioned unique indexes, REFRESH MATERIALIZED VIEW
 * CONCURRENTLY and the planner's ordering helpers accept btlayout indexes.
 */
#define BTL_SERVER_TRANSLATES_CMPTYPE	(PG_VERSION_NUM >= 180000)

#endif							/* BTLAYOUT_COMPAT_H */
