/*-------------------------------------------------------------------------
 *
 * compare.h
 *	  Comparing a search key with index tuples, without a function-manager
 *	  call per comparison for the common types.
 *
 * A BtlSearchKey is prepared once per scan start from the insertion scan
 * key nbtree's rules give (see scan.c).  For each key attribute it records
 * how the comparison function of the scan key compares: when that function
 * is one of the server's comparators for integers, floats, oids, bools,
 * "char", dates, timestamps or uuids, the comparison is done inline with the
 * same semantics (including the NaN rules of the float comparators); for
 * anything else it calls the function.  It also records where each
 * attribute lies in a tuple without NULLs, when every key attribute up to
 * it has a fixed width, so that the attribute can be read at a fixed offset
 * without deforming the tuple.
 *
 * btl_compare() has the semantics of nbtree's _bt_compare() for scans (no
 * scantid): the result is the scan key compared with the tuple, NULLs
 * ordered as the column says, truncated attributes of pivot tuples treated
 * as minus infinity, and a pivot without a heap TID whose untruncated
 * attributes all equal the key treated as less than the key.
 *
 * src/compare.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_COMPARE_H
#define BTLAYOUT_COMPARE_H

#include <math.h>

#include "access/itup.h"
#include "access/nbtree.h"
#include "access/skey.h"
#include "utils/rel.h"

typedef enum BtlCmpKind
{
	BTL_CMP_GENERIC,			/* call the comparison function */
	BTL_CMP_INT16,				/* signed integers, by tuple attribute width */
	BTL_CMP_INT32,
	BTL_CMP_INT64,
	BTL_CMP_UINT32,				/* oid */
	BTL_CMP_UINT8,				/* bool, "char" */
	BTL_CMP_FLOAT4,
	BTL_CMP_FLOAT8,
	BTL_CMP_UUID
} BtlCmpKind;

typedef struct BtlKeyAtt
{
	BtlCmpKind	kind;
	bool		desc;			/* DESC column: do not invert the result */
	bool		argnull;		/* the scan key is NULL (IS NULL search) */
	bool		nulls_first;
	int16		attoff;			/* offset in a tuple without NULLs, or -1 */
	int64		iarg;			/* the argument, for the integer kinds */
	double		farg;			/* the argument, for the float kinds */
	ScanKey		sk;				/* the scan key: argument, function, collation */
} BtlKeyAtt;

typedef struct BtlSearchKey
{
	int			layout;			/* the index's layout (a BtlLayout) */
	bool		prefetch;		/* prefetch what the layout walk needs next */
	int			keysz;			/* attributes in the key */
	bool		nextkey;		/* search for the first item > key, not >= */
	bool		fixed;			/* every attribute at a fixed offset */
	int			minwidth;		/* bytes a tuple needs to hold them all */
	TupleDesc	tupdesc;
	BtlKeyAtt	att[INDEX_MAX_KEYS];
} BtlSearchKey;

extern void btl_prepare_search_key(Relation rel, BTScanInsert inskey,
								   BtlSearchKey *key);

static pg_attribute_always_inline int32
btl_cmp_int(int64 v, int64 arg)
{
	return (v > arg) - (v < arg);
}

/* float4/float8 comparators' rules: NaN equals NaN and sorts above all */
static pg_attribute_always_inline int32
btl_cmp_float(double v, double arg)
{
	if (isnan(v))
		return isnan(arg) ? 0 : 1;
	if (isnan(arg))
		return -1;
	return (v > arg) - (v < arg);
}

static inline int32
btl_cmp_generic(const BtlKeyAtt *att, Datum datum)
{
	return DatumGetInt32(FunctionCall2Coll(&att->sk->sk_func,
										   att->sk->sk_collation,
										   datum, att->sk->sk_argument));
}

/*
 * Three-way comparison of a tuple's attribute, stored at attptr, with the
 * argument; attr describes the attribute (for the generic kind).
 */
static pg_attribute_always_inline int32
btl_cmp_attr(const BtlKeyAtt *att, const char *attptr, Form_pg_attribute attr)
{
	switch (att->kind)
	{
		case BTL_CMP_INT16:
			return btl_cmp_int(*(const int16 *) attptr, att->iarg);
		case BTL_CMP_INT32:
			return btl_cmp_int(*(const int32 *) attptr, att->iarg);
		case BTL_CMP_INT64:
			return btl_cmp_int(*(const int64 *) attptr, att->iarg);
		case BTL_CMP_UINT32:
			return btl_cmp_int(*(const uint32 *) attptr, att->iarg);
		case BTL_CMP_UINT8:
			return btl_cmp_int(*(const uint8 *) attptr, att->iarg);
		case BTL_CMP_FLOAT4:
			return btl_cmp_float(*(const float4 *) attptr, att->farg);
		case BTL_CMP_FLOAT8:
			return btl_cmp_float(*(const float8 *) attptr, att->farg);
		case BTL_CMP_UUID:
			return memcmp(attptr, DatumGetPointer(att->sk->sk_argument), 16);
		case BTL_CMP_GENERIC:
			break;
	}
	return btl_cmp_generic(att, fetch_att(attptr, attr->attbyval, attr->attlen));
}

/* The same, for an attribute already deformed into a Datum */
static inline int32
btl_cmp_value(const BtlKeyAtt *att, Datum datum)
{
	switch (att->kind)
	{
		case BTL_CMP_INT16:
			return btl_cmp_int(DatumGetInt16(datum), att->iarg);
		case BTL_CMP_INT32:
			return btl_cmp_int(DatumGetInt32(datum), att->iarg);
		case BTL_CMP_INT64:
			return btl_cmp_int(DatumGetInt64(datum), att->iarg);
		case BTL_CMP_UINT32:
			return btl_cmp_int(DatumGetObjectId(datum), att->iarg);
		case BTL_CMP_UINT8:
			return btl_cmp_int((uint8) DatumGetChar(datum), att->iarg);
		case BTL_CMP_FLOAT4:
			return btl_cmp_float(DatumGetFloat4(datum), att->farg);
		case BTL_CMP_FLOAT8:
			return btl_cmp_float(DatumGetFloat8(datum), att->farg);
		case BTL_CMP_UUID:
			return memcmp(DatumGetPointer(datum),
						  DatumGetPointer(att->sk->sk_argument), 16);
		case BTL_CMP_GENERIC:
			break;
	}
	return btl_cmp_generic(att, datum);
}

/*
 * The tail of _bt_compare()'s rules, once the first ncmp attributes
 * compared equal: truncated attributes are minus infinity, and a pivot
 * without a heap TID equal on every key attribute is below the key.
 */
static pg_attribute_always_inline int32
btl_compare_tail(const BtlSearchKey *key, IndexTuple itup, int ntupatts)
{
	if (key->keysz > ntupatts)
		return 1;
	if (key->keysz == ntupatts && BTreeTupleIsPivot(itup) &&
		!(ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) & BT_PIVOT_HEAP_TID_ATTR))
		return 1;
	return 0;
}

/*
 * Compare the key with a tuple that has no NULLs, reading each attribute at
 * its fixed offset: key->fixed must be true, and the tuple must span at
 * least key->minwidth bytes (the layout-directed search guarantees both
 * without trusting the tuple).
 */
static pg_attribute_always_inline int32
btl_compare_fixed(const BtlSearchKey *key, IndexTuple itup, int ntupatts)
{
	int			ncmp = Min(ntupatts, key->keysz);
	int			i;

	for (i = 0; i < ncmp; i++)
	{
		const BtlKeyAtt *att = &key->att[i];
		const char *attptr = (const char *) itup + att->attoff;
		int32		result;

		if (att->argnull)
			result = att->nulls_first ? -1 : 1;
		else
		{
			result = btl_cmp_attr(att, attptr, TupleDescAttr(key->tupdesc, i));
			if (!att->desc)
				INVERT_COMPARE_RESULT(result);
		}
		if (result != 0)
			return result;
	}
	return btl_compare_tail(key, itup, ntupatts);
}

extern int32 btl_compare(const BtlSearchKey *key, Relation rel, IndexTuple itup);

#endif							/* BTLAYOUT_COMPARE_H */
