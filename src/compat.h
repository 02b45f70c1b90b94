/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  What differs between the PostgreSQL versions btlayout supports
 *	  (15 to 19) where the logic is the same: renamed fields, changed
 *	  signatures, functions that moved.  Each difference is one name here,
 *	  used by the rest of the code instead of the server's.
 *
 * Where the logic itself differs (nbtree's scan state: 17 rewrote array
 * keys, 18 added skip arrays and the pin-dropping rules), the version has
 * a file of its own (scan_pg15.c, scan_pg17.c); see scan.h.
 *
 * src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_COMPAT_H
#define BTLAYOUT_COMPAT_H

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 200000
#error "btlayout supports PostgreSQL 15 to 19"
#endif

#include "access/nbtree.h"
#include "catalog/pg_class.h"
#include "commands/vacuum.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* 16: RelFileNode became RelFileLocator; owner checks by class */
#if PG_VERSION_NUM >= 160000
#define BtlRelationLocator(rel)		(&(rel)->rd_locator)
#define btl_class_ownercheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define BtlRelationLocator(rel)		(&(rel)->rd_node)
#define btl_class_ownercheck(relid, roleid) pg_class_ownercheck((relid), (roleid))
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

/* 17: the backend's local transaction id moved into its vxid */
#if PG_VERSION_NUM >= 170000
#define BtlMyLocalTransactionId()	(MyProc->vxid.lxid)
#else
#define BtlMyLocalTransactionId()	(MyProc->lxid)
#endif

/*
 * 17: an insertion key for a pivot search (one that treats the pivot's
 * truncated attributes as minus infinity, as amcheck's does) says so as a
 * backward search
 */
#if PG_VERSION_NUM >= 170000
#define btl_insertkey_set_pivotsearch(key)	((key)->backward = true)
#else
#define btl_insertkey_set_pivotsearch(key)	((key)->pivotsearch = true)
#endif

/* 18: the largest nbtree item is a constant, not a function of the page */
#if PG_VERSION_NUM >= 180000
#define BtlMaxItemSize(page)		BTMaxItemSize
#else
#define BtlMaxItemSize(page)		BTMaxItemSize(page)
#endif

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

#endif							/* BTLAYOUT_COMPAT_H */
