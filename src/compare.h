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
 * same semantics (including the NaN rules of the float comparators); so are
 * byte-order string comparisons: text and varchar (bttextcmp) and bpchar
 * (bpcharcmp) under the "C" collation, bytea, and the BIN classes
 * (binops.c), through the compare core (bincmp.h), with the key's length
 * and first eight bytes prepared once.  The same comparators in any other
 * collation call its locale's comparison (compat.h's btl_strncoll()) with
 * the locale found once per scan, where bttextcmp() and bpcharcmp() would
 * find it twice a comparison.  For anything else it calls the function.
 * It also records where each attribute lies in a tuple without
 * NULLs, when every key attribute before it has a fixed width, so that the
 * attribute can be read at a fixed offset without deforming the tuple; the
 * last key attribute may be a varlena there, whose length the tuple says.
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
#include "bincmp.h"
#include "access/nbtree.h"
#include "access/skey.h"
#include "port/pg_bswap.h"
#include "utils/builtins.h"
#include "utils/pg_locale.h"
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
	BTL_CMP_UUID,
	BTL_CMP_BYTES,				/* bytes, then length: text under "C", bytea */
	BTL_CMP_BPCHAR,				/* the same, without trailing spaces */
	BTL_CMP_COLLATED,			/* text in a collation that does not order
								 * bytes: its locale's comparison */
	BTL_CMP_COLLATED_BPCHAR		/* the same, without trailing spaces */
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
	const char *sarg;			/* the argument's bytes, for the string kinds */
	int32		slen;			/* ... how many (bpchar: no trailing spaces) */
	uint64		sprefix;		/* ... the first 8, big-endian, if slen >= 8;
								 * a uuid's first 8, big-endian */
	uint64		ssuffix;		/* a uuid's last 8, big-endian */
	pg_locale_t locale;			/* the collation's, for the collated kinds */
	bool		deterministic;	/* ... which breaks ties by bytes */
	struct BtlCollHint *hint;	/* ... its hint (collhint.h), or NULL */
	ScanKey		sk;				/* the scan key: argument, function, collation */
} BtlKeyAtt;

typedef struct BtlSearchKey
{
	int			layout;			/* the index's layout (a BtlLayout) */
	bool		prefetch;		/* prefetch what the in-page search needs next */
	bool		recent_buffers; /* pin pages where they were last (recent.c) */
	bool		upper_copy;		/* start from the copy of the upper levels
								 * (upper.c) */
	bool		upper_keys;		/* ... searching its images' normalized
								 * keys (normkey.c) */
	bool		note_stale;		/* note stale pages for a lookup relayout */
	int			keysz;			/* attributes in the key */
	bool		nextkey;		/* search for the first item > key, not >= */
	bool		truncated_equal;	/* a pivot equal on every key attribute
									 * but without a heap TID is equal, not
									 * below (backward scans from 17) */
	bool		fixed;			/* every attribute at a fixed offset */
	bool		walkable;		/* fixed, and every comparison inline and
								 * defined on any bytes (not collated) */
	BtlCmpKind	walk_kind;		/* walkable with one attribute of a kind
								 * the walk has its own code for (search.c),
								 * or two integer attributes: the first's
								 * kind; else BTL_CMP_GENERIC */
	BtlCmpKind	walk_kind2;		/* ... the second's, or BTL_CMP_GENERIC */
	int			varatt;			/* the last one, a varlena; or -1 */
	struct BtlCollHint *hint;	/* the first collated attribute's hint, if
								 * any has one: the in-page search follows
								 * the hints, then proves its answer */
	int			minwidth;		/* bytes a tuple needs to hold them all */
	TupleDesc	tupdesc;
	BtlKeyAtt	att[INDEX_MAX_KEYS];
} BtlSearchKey;

extern void btl_prepare_search_key(Relation rel, BTScanInsert inskey,
								   BtlSearchKey *key);
extern BtlCmpKind btl_column_kind(Relation rel, int i);

/*
 * Does the key compare its one attribute as bytes, ascending, so that it
 * can search pages whose keys are stored without the prefix they share
 * (upper.c)?  A key with more attributes, a descending one, or one of
 * another kind cannot.
 */
static inline bool
btl_key_bytewise(const BtlSearchKey *key)
{
	return key->keysz == 1 && key->att[0].kind == BTL_CMP_BYTES &&
		!key->att[0].desc;
}

/*
 * The key for the rest of keys that start with the first n bytes of key's
 * (bytewise) argument: key with those bytes skipped.  Only the first
 * attribute is copied, the only one such a key has.
 */
static inline void
btl_key_skip_prefix(const BtlSearchKey *key, int n, BtlSearchKey *rest)
{
	BtlKeyAtt  *att = &rest->att[0];

	memcpy(rest, key, offsetof(BtlSearchKey, att) + sizeof(BtlKeyAtt));
	att->sarg += n;
	att->slen -= n;
	att->sprefix = 0;
	if (att->slen >= 8)
	{
		memcpy(&att->sprefix, att->sarg, sizeof(att->sprefix));
		att->sprefix = pg_ntoh64(att->sprefix);
	}
}

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

/*
 * The bytes of a varlena stored plainly (not compressed): an index tuple's
 * string attribute nearly always is.
 */
static pg_attribute_always_inline bool
btl_varlena_plain(const char *p, const char **data, int *len)
{
	if (VARATT_IS_1B(p))
	{
		if (VARATT_IS_1B_E(p))
			return false;
		*data = p + VARHDRSZ_SHORT;
		*len = VARSIZE_1B(p) - VARHDRSZ_SHORT;
		return true;
	}
	if (!VARATT_IS_4B_U(p))
		return false;
	*data = p + VARHDRSZ;
	*len = VARSIZE_4B(p) - VARHDRSZ;
	return true;
}

/*
 * Is the varlena at p stored plainly, in no more than room bytes?  Reads
 * nothing past p + room.
 */
static pg_attribute_always_inline bool
btl_varlena_fits(const char *p, int room)
{
	if (VARATT_IS_1B(p))
		return !VARATT_IS_1B_E(p) && (int) VARSIZE_1B(p) <= room;
	return room >= VARHDRSZ && VARATT_IS_4B_U(p) &&
		VARSIZE_4B(p) >= VARHDRSZ && VARSIZE_4B(p) <= (uint32) room;
}

/* Byte-order comparison of a string with the argument */
static pg_attribute_always_inline int32
btl_cmp_string(const BtlKeyAtt *att, const char *data, int len)
{
	if (att->kind == BTL_CMP_BPCHAR)
		len = bpchartruelen((char *) data, len);
	if (len >= 8 && att->slen >= 8)
	{
		uint64		prefix;

		memcpy(&prefix, data, sizeof(prefix));
		prefix = pg_ntoh64(prefix);
		if (prefix != att->sprefix)
			return prefix < att->sprefix ? -1 : 1;
		return btl_str_cmp(data + 8, len - 8, att->sarg + 8, att->slen - 8);
	}
	return btl_str_cmp(data, len, att->sarg, att->slen);
}

/*
 * uuid_cmp() orders uuids as memcmp() orders their 16 bytes: as two
 * big-endian unsigned integers, which compare inline.
 */
static pg_attribute_always_inline int32
btl_cmp_uuid(const BtlKeyAtt *att, const char *data)
{
	uint64		word;

	memcpy(&word, data, sizeof(word));
	word = pg_ntoh64(word);
	if (word != att->sprefix)
		return word < att->sprefix ? -1 : 1;
	memcpy(&word, data + 8, sizeof(word));
	word = pg_ntoh64(word);
	return (word > att->ssuffix) - (word < att->ssuffix);
}

extern int32 btl_cmp_collated(const BtlKeyAtt *att, const char *data, int len);

static inline int32
btl_cmp_generic(const BtlKeyAtt *att, Datum datum)
{
	return DatumGetInt32(FunctionCall2Coll(&att->sk->sk_func,
										   att->sk->sk_collation,
										   datum, att->sk->sk_argument));
}

/*
 * Three-way comparison of a tuple's attribute, stored at attptr, with the
 * argument, compared as kind (att->kind, or the same kind known at compile
 * time); attr describes the attribute (for the generic kind).
 */
static pg_attribute_always_inline int32
btl_cmp_attr_as(BtlCmpKind kind, const BtlKeyAtt *att, const char *attptr,
				Form_pg_attribute attr)
{
	switch (kind)
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
			return btl_cmp_uuid(att, attptr);
		case BTL_CMP_BYTES:
		case BTL_CMP_BPCHAR:
		case BTL_CMP_COLLATED:
		case BTL_CMP_COLLATED_BPCHAR:
			{
				const char *data;
				int			len;

				if (btl_varlena_plain(attptr, &data, &len))
					return kind == BTL_CMP_BYTES || kind == BTL_CMP_BPCHAR ?
						btl_cmp_string(att, data, len) :
						btl_cmp_collated(att, data, len);
			}
			break;
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
			return btl_cmp_uuid(att, DatumGetPointer(datum));
		case BTL_CMP_BYTES:
		case BTL_CMP_BPCHAR:
		case BTL_CMP_COLLATED:
		case BTL_CMP_COLLATED_BPCHAR:
			{
				const char *data;
				int			len;

				if (btl_varlena_plain(DatumGetPointer(datum), &data, &len))
					return att->kind == BTL_CMP_BYTES || att->kind == BTL_CMP_BPCHAR ?
						btl_cmp_string(att, data, len) :
						btl_cmp_collated(att, data, len);
			}
			break;
		case BTL_CMP_GENERIC:
			break;
	}
	return btl_cmp_generic(att, datum);
}

/*
 * The tail of _bt_compare()'s rules, once the first ncmp attributes
 * compared equal: truncated attributes are minus infinity, and a pivot
 * without a heap TID equal on every key attribute is below the key (but
 * for keys that say otherwise: backward scans of 17 and later).
 */
static pg_attribute_always_inline int32
btl_compare_tail(const BtlSearchKey *key, IndexTuple itup, int ntupatts)
{
	if (key->keysz > ntupatts)
		return 1;
	if (key->keysz == ntupatts && !key->truncated_equal && BTreeTupleIsPivot(itup) &&
		!(ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) & BT_PIVOT_HEAP_TID_ATTR))
		return 1;
	return 0;
}

/*
 * Compare the key with a tuple that has no NULLs, reading each attribute at
 * its fixed offset: key->fixed must be true, and the tuple must span at
 * least key->minwidth bytes, and hold all of a varlena last attribute (the
 * layout-directed search guarantees all three without trusting the tuple).
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
			result = btl_cmp_attr_as(att->kind, att, attptr,
									 TupleDescAttr(key->tupdesc, i));
			if (!att->desc)
				INVERT_COMPARE_RESULT(result);
		}
		if (result != 0)
			return result;
	}
	return btl_compare_tail(key, itup, ntupatts);
}

/*
 * btl_compare_fixed() for a key whose walk_kind is kind, given as a
 * constant: one attribute, never a NULL argument (those are generic), so
 * the loop, the NULL test and the switch on the kind fold away.  A pivot
 * with the attribute truncated is minus infinity: below the key.  The same
 * conditions on the tuple as btl_compare_fixed().
 */
static pg_attribute_always_inline int32
btl_compare_fixed_one(const BtlSearchKey *key, IndexTuple itup, int ntupatts,
					  BtlCmpKind kind)
{
	const BtlKeyAtt *att = &key->att[0];
	int32		result;

	if (ntupatts == 0)
		return 1;
	result = btl_cmp_attr_as(kind, att, (const char *) itup + att->attoff,
							 TupleDescAttr(key->tupdesc, 0));
	if (!att->desc)
		INVERT_COMPARE_RESULT(result);
	if (result != 0)
		return result;
	return btl_compare_tail(key, itup, ntupatts);
}

/*
 * The same for a key of two attributes whose walk kinds are k0 and k1,
 * given as constants: two integer columns (the composite keys of tenants
 * and ids, customers and dates), never a NULL argument.  A pivot with the
 * second attribute truncated, equal on the first, is below the key.
 */
static pg_attribute_always_inline int32
btl_compare_fixed_two(const BtlSearchKey *key, IndexTuple itup, int ntupatts,
					  BtlCmpKind k0, BtlCmpKind k1)
{
	const BtlKeyAtt *att = &key->att[0];
	int32		result;

	if (ntupatts == 0)
		return 1;
	result = btl_cmp_attr_as(k0, att, (const char *) itup + att->attoff,
							 TupleDescAttr(key->tupdesc, 0));
	if (!att->desc)
		INVERT_COMPARE_RESULT(result);
	if (result != 0 || ntupatts == 1)
		return result != 0 ? result : 1;
	att = &key->att[1];
	result = btl_cmp_attr_as(k1, att, (const char *) itup + att->attoff,
							 TupleDescAttr(key->tupdesc, 1));
	if (!att->desc)
		INVERT_COMPARE_RESULT(result);
	if (result != 0)
		return result;
	return btl_compare_tail(key, itup, ntupatts);
}

extern int32 btl_compare(const BtlSearchKey *key, Relation rel, IndexTuple itup);
extern int32 btl_compare_hinted(const BtlSearchKey *key, Relation rel,
								IndexTuple itup, bool *hinted);

#endif							/* BTLAYOUT_COMPARE_H */
