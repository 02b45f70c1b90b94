/*-------------------------------------------------------------------------
 *
 * compare.c
 *	  Preparing a search key for de-virtualised comparison, and comparing
 *	  it with tuples of any shape (compare.h has the fast inline cases).
 *
 * The comparison functions recognised are the server's own, identified by
 * their OIDs, so that the inline comparison has exactly their semantics;
 * a function of the same name elsewhere, or any other comparator, goes
 * through the function manager.  Only same-width and widening cross-type
 * integer and float comparators are recognised: their results are the
 * comparison of the two values as int64 or double, which is what the
 * server's functions compute.  String comparators are recognised where they
 * order bytes: the server's for text and bpchar under a "C" collation and
 * for bytea, and ours (binops.c), known by their address; and the server's
 * for text and bpchar in any other collation, which order by its locale
 * (btl_cmp_collated()).
 *
 * src/compare.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/xlog.h"
#include "binops.h"
#include "collhint.h"
#include "compare.h"
#include "utils/fmgroids.h"
#include "utils/pg_locale.h"

/*
 * How a comparison function compares: the kind by the width of the
 * tuple's attribute (its left argument), and how to read the scan key's
 * argument (its right argument).
 */
typedef enum BtlArgKind
{
	BTL_ARG_NONE,
	BTL_ARG_UUID,
	BTL_ARG_INT16,
	BTL_ARG_INT32,
	BTL_ARG_INT64,
	BTL_ARG_UINT32,
	BTL_ARG_BOOL,
	BTL_ARG_CHAR,
	BTL_ARG_FLOAT4,
	BTL_ARG_FLOAT8,
	BTL_ARG_STRING
} BtlArgKind;

/*
 * Which byte-order string comparison, if any, a comparison function makes:
 * one of ours (by address), or the server's for text, bpchar and bytea.
 */
static BtlBinKind
string_kind(const FmgrInfo *proc)
{
	BtlBinKind	kind = btl_bin_kind(proc->fn_addr);

	if (kind != BTL_BIN_NONE)
		return kind;
	switch (proc->fn_oid)
	{
		case F_BTTEXTCMP:
			return BTL_BIN_TEXT;
		case F_BPCHARCMP:
			return BTL_BIN_BPCHAR;
		case F_BYTEACMP:
			return BTL_BIN_BYTEA;
		default:
			return BTL_BIN_NONE;
	}
}

/*
 * How comparison function proc compares under collation: the kind by the
 * width of the tuple's attribute, not yet checked against the attribute
 * (classify() does), and how to read its right argument.  Inlined: called
 * at every scan's start, where the argument's kind is read right after.
 */
static pg_attribute_always_inline BtlCmpKind
classify_proc(const FmgrInfo *proc, Oid collation, BtlArgKind *arg)
{
	/*
	 * Strings: text and bpchar order bytes only under a "C" collation; the
	 * server's comparators order them by the locale of any other (a BIN
	 * class refuses other collations).  Without a collation they raise the
	 * server's error.
	 */
	switch (string_kind(proc))
	{
		case BTL_BIN_TEXT:
			*arg = BTL_ARG_STRING;
			if (btl_collation_is_c(collation))
				return BTL_CMP_BYTES;
			return OidIsValid(collation) && proc->fn_oid == F_BTTEXTCMP ?
				BTL_CMP_COLLATED : BTL_CMP_GENERIC;
		case BTL_BIN_BPCHAR:
			*arg = BTL_ARG_STRING;
			if (btl_collation_is_c(collation))
				return BTL_CMP_BPCHAR;
			return OidIsValid(collation) && proc->fn_oid == F_BPCHARCMP ?
				BTL_CMP_COLLATED_BPCHAR : BTL_CMP_GENERIC;
		case BTL_BIN_BYTEA:
			*arg = BTL_ARG_STRING;
			return BTL_CMP_BYTES;
		case BTL_BIN_NONE:
			break;
	}

	*arg = BTL_ARG_NONE;
	switch (proc->fn_oid)
	{
		case F_BTINT2CMP:
			*arg = BTL_ARG_INT16;
			return BTL_CMP_INT16;
		case F_BTINT24CMP:
			*arg = BTL_ARG_INT32;
			return BTL_CMP_INT16;
		case F_BTINT28CMP:
			*arg = BTL_ARG_INT64;
			return BTL_CMP_INT16;
		case F_BTINT4CMP:
		case F_DATE_CMP:
			*arg = BTL_ARG_INT32;
			return BTL_CMP_INT32;
		case F_BTINT42CMP:
			*arg = BTL_ARG_INT16;
			return BTL_CMP_INT32;
		case F_BTINT48CMP:
			*arg = BTL_ARG_INT64;
			return BTL_CMP_INT32;
		case F_BTINT8CMP:
		case F_TIMESTAMP_CMP:
		case F_TIMESTAMPTZ_CMP:
		case F_TIME_CMP:
		case F_CASH_CMP:
			*arg = BTL_ARG_INT64;
			return BTL_CMP_INT64;
		case F_BTINT82CMP:
			*arg = BTL_ARG_INT16;
			return BTL_CMP_INT64;
		case F_BTINT84CMP:
			*arg = BTL_ARG_INT32;
			return BTL_CMP_INT64;
		case F_BTOIDCMP:
			*arg = BTL_ARG_UINT32;
			return BTL_CMP_UINT32;
		case F_BTBOOLCMP:
			*arg = BTL_ARG_BOOL;
			return BTL_CMP_UINT8;
		case F_BTCHARCMP:
			*arg = BTL_ARG_CHAR;
			return BTL_CMP_UINT8;
		case F_BTFLOAT4CMP:
			*arg = BTL_ARG_FLOAT4;
			return BTL_CMP_FLOAT4;
		case F_BTFLOAT48CMP:
			*arg = BTL_ARG_FLOAT8;
			return BTL_CMP_FLOAT4;
		case F_BTFLOAT8CMP:
			*arg = BTL_ARG_FLOAT8;
			return BTL_CMP_FLOAT8;
		case F_BTFLOAT84CMP:
			*arg = BTL_ARG_FLOAT4;
			return BTL_CMP_FLOAT8;
		case F_UUID_CMP:
			*arg = BTL_ARG_UUID;
			return BTL_CMP_UUID;
		default:
			return BTL_CMP_GENERIC;
	}
}

/*
 * The kind by which proc compares an attribute attr with its argument
 * under collation.  The inline kinds read the attribute by its width: an
 * attribute of another width is compared through the function.
 */
static pg_attribute_always_inline BtlCmpKind
classify(const FmgrInfo *proc, Oid collation, Form_pg_attribute attr,
		 BtlArgKind *arg)
{
	static const int16 widths[] = {
		[BTL_CMP_INT16] = 2, [BTL_CMP_INT32] = 4, [BTL_CMP_INT64] = 8,
		[BTL_CMP_UINT32] = 4, [BTL_CMP_UINT8] = 1,
		[BTL_CMP_FLOAT4] = 4, [BTL_CMP_FLOAT8] = 8, [BTL_CMP_UUID] = 16,
		[BTL_CMP_BYTES] = -1, [BTL_CMP_BPCHAR] = -1,
		[BTL_CMP_COLLATED] = -1, [BTL_CMP_COLLATED_BPCHAR] = -1
	};
	BtlCmpKind	kind = classify_proc(proc, collation, arg);

	if (kind != BTL_CMP_GENERIC && attr->attlen != widths[kind])
		kind = BTL_CMP_GENERIC;
	return kind;
}

/*
 * The kind by which key column i (from 0) of an index compares with
 * itself: its operator class's comparator, as a search key of the
 * column's own type compares.  normkey.c encodes the column by it, so that
 * the copy of the index's upper levels has the same shape whichever search
 * made it.  The first call for an index may look the comparator's function
 * up in the catalogs: not for a caller holding a buffer's content lock.
 */
BtlCmpKind
btl_column_kind(Relation rel, int i)
{
	BtlArgKind	arg;

	return classify(index_getprocinfo(rel, i + 1, BTORDER_PROC),
					rel->rd_indcollation[i],
					TupleDescAttr(RelationGetDescr(rel), i), &arg);
}

/*
 * Prepare key from the insertion scan key nbtree's rules built.
 */
void
btl_prepare_search_key(Relation rel, BTScanInsert inskey, BtlSearchKey *key)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	int			off = MAXALIGN(sizeof(IndexTupleData));
	int			i;

	key->layout = BtlGetLayout(rel);
	key->prefetch = btl_prefetch && BtlGetPrefetch(rel);
	key->recent_buffers = btl_recent_buffers > 0 && BtlGetRecentBuffers(rel) &&
		(btl_recent_local_buffers || !RelationUsesLocalBuffers(rel));
	key->upper_copy = btl_upper_copy > 0 && BtlGetUpperCopy(rel) &&
		inskey->heapkeyspace;
	key->note_stale = btl_lookup_relayout && BtlGetLookupRelayout(rel) &&
		btl_lookups_may_write_pages() && !RecoveryInProgress();
	key->keysz = inskey->keysz;
	key->nextkey = inskey->nextkey;
	key->truncated_equal = btl_insertkey_truncated_equal(inskey);
	key->tupdesc = tupdesc;
	key->fixed = true;
	key->walkable = true;
	key->varatt = -1;
	key->hint = NULL;

	for (i = 0; i < inskey->keysz; i++)
	{
		ScanKey		sk = &inskey->scankeys[i];
		BtlKeyAtt  *att = &key->att[i];
		Form_pg_attribute attr = TupleDescAttr(tupdesc, i);
		BtlArgKind	arg;

		att->sk = sk;
		att->desc = (sk->sk_flags & SK_BT_DESC) != 0;
		att->nulls_first = (sk->sk_flags & SK_BT_NULLS_FIRST) != 0;
		att->argnull = (sk->sk_flags & SK_ISNULL) != 0;
		att->kind = classify(&sk->sk_func, sk->sk_collation, attr, &arg);
		att->iarg = 0;
		att->farg = 0.0;
		att->sarg = NULL;
		att->slen = 0;
		att->sprefix = 0;
		att->ssuffix = 0;
		att->locale = NULL;
		att->deterministic = true;
		att->hint = NULL;

		switch (arg)
		{
			case BTL_ARG_INT16:
				att->iarg = DatumGetInt16(sk->sk_argument);
				break;
			case BTL_ARG_INT32:
				att->iarg = DatumGetInt32(sk->sk_argument);
				break;
			case BTL_ARG_INT64:
				att->iarg = DatumGetInt64(sk->sk_argument);
				break;
			case BTL_ARG_UINT32:
				att->iarg = DatumGetObjectId(sk->sk_argument);
				break;
			case BTL_ARG_BOOL:
				att->iarg = DatumGetBool(sk->sk_argument) ? 1 : 0;
				break;
			case BTL_ARG_CHAR:
				att->iarg = (uint8) DatumGetChar(sk->sk_argument);
				break;
			case BTL_ARG_FLOAT4:
				att->farg = DatumGetFloat4(sk->sk_argument);
				break;
			case BTL_ARG_FLOAT8:
				att->farg = DatumGetFloat8(sk->sk_argument);
				break;
			case BTL_ARG_STRING:
				if (att->kind != BTL_CMP_GENERIC && !att->argnull)
				{
					struct varlena *v = PG_DETOAST_DATUM_PACKED(sk->sk_argument);

					att->sarg = VARDATA_ANY(v);
					att->slen = VARSIZE_ANY_EXHDR(v);
					if (att->kind == BTL_CMP_BPCHAR ||
						att->kind == BTL_CMP_COLLATED_BPCHAR)
						att->slen = bpchartruelen((char *) att->sarg, att->slen);
					if (att->kind == BTL_CMP_COLLATED ||
						att->kind == BTL_CMP_COLLATED_BPCHAR)
					{
						att->locale = pg_newlocale_from_collation(sk->sk_collation);
						att->deterministic = btl_locale_deterministic(att->locale);
						att->hint = btl_collhint_of(sk->sk_collation, att->locale);
						if (key->hint == NULL)
							key->hint = att->hint;
					}
					if (att->slen >= 8)
					{
						memcpy(&att->sprefix, att->sarg, sizeof(att->sprefix));
						att->sprefix = pg_ntoh64(att->sprefix);
					}
				}
				break;
			case BTL_ARG_UUID:
				if (!att->argnull)
				{
					const char *u = DatumGetPointer(sk->sk_argument);

					memcpy(&att->sprefix, u, sizeof(att->sprefix));
					att->sprefix = pg_ntoh64(att->sprefix);
					memcpy(&att->ssuffix, u + 8, sizeof(att->ssuffix));
					att->ssuffix = pg_ntoh64(att->ssuffix);
				}
				break;
			case BTL_ARG_NONE:
				break;
		}
		/*
		 * The layout walk may compare bytes that are not a tuple (a page not
		 * in its layout; see walk.h): only comparisons defined on any bytes
		 * may run there.  A locale's may raise an error (a string not in the
		 * database's encoding, converted for ICU), like any function's.
		 */
		if (att->argnull)
			att->kind = BTL_CMP_GENERIC;	/* never compared by value */
		else if (att->kind == BTL_CMP_GENERIC ||
				 att->kind == BTL_CMP_COLLATED ||
				 att->kind == BTL_CMP_COLLATED_BPCHAR)
			key->walkable = false;

		/*
		 * Fixed offset while every attribute so far has a fixed width.  The
		 * last key attribute may be a varlena if its offset needs no
		 * alignment, which a 4-byte header would need but a 1-byte one
		 * does not: then it starts there with either header.
		 */
		if (key->fixed && attr->attlen > 0)
		{
			off = att_align_nominal(off, attr->attalign);
			att->attoff = off;
			off += attr->attlen;
		}
		else if (key->fixed && attr->attlen == -1 && i == inskey->keysz - 1 &&
				 off == att_align_nominal(off, attr->attalign))
		{
			att->attoff = off;
			key->varatt = i;
			off += VARHDRSZ_SHORT;
		}
		else
		{
			key->fixed = false;
			att->attoff = -1;
		}
	}
	key->minwidth = off;
	key->walkable &= key->fixed;

	/*
	 * The copy's images searched by their normalized keys (normkey.c), if
	 * the key has a string for them: search.c makes it when an image has
	 * keys
	 */
	key->upper_keys = key->upper_copy && btl_upper_copy_keys &&
		BtlGetUpperCopyKeys(rel);

	/* The kinds the layout walk has its own code for (search.c) */
	key->walk_kind = BTL_CMP_GENERIC;
	key->walk_kind2 = BTL_CMP_GENERIC;
	if (key->walkable && key->keysz == 1 &&
		(key->att[0].kind == BTL_CMP_INT32 ||
		 key->att[0].kind == BTL_CMP_INT64 ||
		 key->att[0].kind == BTL_CMP_UUID ||
		 key->att[0].kind == BTL_CMP_BYTES))
		key->walk_kind = key->att[0].kind;
	if (key->walkable && key->keysz == 2 &&
		(key->att[0].kind == BTL_CMP_INT32 ||
		 key->att[0].kind == BTL_CMP_INT64) &&
		(key->att[1].kind == BTL_CMP_INT32 ||
		 key->att[1].kind == BTL_CMP_INT64))
	{
		key->walk_kind = key->att[0].kind;
		key->walk_kind2 = key->att[1].kind;
	}
}

/*
 * A string (bpchar: with its trailing spaces) compared with the argument
 * of a collated kind as bttextcmp() and bpcharcmp() compare them through
 * varstr_cmp(): byte-equal strings are equal without asking the locale;
 * else the locale's order, and strings it calls equal ordered by their
 * bytes, then by length, if the collation is deterministic.
 */
int32
btl_cmp_collated(const BtlKeyAtt *att, const char *data, int len)
{
	int32		result;

	if (att->kind == BTL_CMP_COLLATED_BPCHAR)
		len = bpchartruelen((char *) data, len);
	if (len == att->slen && memcmp(data, att->sarg, len) == 0)
		return 0;
	result = btl_strncoll(data, len, att->sarg, att->slen, att->locale);
	if (result == 0 && att->deterministic)
	{
		result = memcmp(data, att->sarg, Min(len, att->slen));
		if (result == 0)
			result = len < att->slen ? -1 : 1;
	}
	return result;
}

/*
 * The string attribute at p, of a collated kind, compared with the
 * argument by the attribute's hint: the hint's answer (as the attribute's
 * comparison would give it, tuple against argument), or 0 where it has
 * none (no usable hint, a string not stored plainly, or the hint cannot
 * tell them apart)
 */
static pg_attribute_always_inline int32
cmp_by_hint(const BtlKeyAtt *att, const char *p)
{
	const char *data;
	int			len;

	if (att->hint == NULL || !att->hint->usable ||
		!btl_varlena_plain(p, &data, &len))
		return 0;
	if (att->kind == BTL_CMP_COLLATED_BPCHAR)
		len = bpchartruelen((char *) data, len);
	return btl_collhint_cmp(att->hint, data, len, att->sarg, att->slen);
}

/* cmp_by_hint() where it answers (then *hinted is set), else the collation */
static int32
cmp_collated_hinted(const BtlKeyAtt *att, Datum datum, bool *hinted)
{
	int32		result = cmp_by_hint(att, DatumGetPointer(datum));

	if (result != 0)
	{
		*hinted = true;
		return result;
	}
	return btl_cmp_value(att, datum);
}

/*
 * Compare the key with any tuple: _bt_compare()'s rules for scans.  With
 * hints, collated attributes are compared by their hints where those tell
 * (*hinted set then: the result is a hint, not an answer).
 */
static pg_attribute_always_inline int32
compare_tuple(const BtlSearchKey *key, Relation rel, IndexTuple itup,
			  bool hints, bool *hinted)
{
	int			ntupatts = BTreeTupleGetNAtts(itup, rel);
	int			ncmp;
	int			i;

	if (!hints && key->fixed && !IndexTupleHasNulls(itup))
		return btl_compare_fixed(key, itup, ntupatts);

	ncmp = Min(ntupatts, key->keysz);
	for (i = 0; i < ncmp; i++)
	{
		const BtlKeyAtt *att = &key->att[i];
		bool		isnull;
		Datum		datum = index_getattr(itup, i + 1, key->tupdesc, &isnull);
		int32		result;

		if (att->argnull)
			result = isnull ? 0 : (att->nulls_first ? -1 : 1);
		else if (isnull)
			result = att->nulls_first ? 1 : -1;
		else
		{
			result = hints && (att->kind == BTL_CMP_COLLATED ||
							   att->kind == BTL_CMP_COLLATED_BPCHAR) ?
				cmp_collated_hinted(att, datum, hinted) :
				btl_cmp_value(att, datum);
			if (!att->desc)
				INVERT_COMPARE_RESULT(result);
		}
		if (result != 0)
			return result;
	}
	return btl_compare_tail(key, itup, ntupatts);
}

int32
btl_compare(const BtlSearchKey *key, Relation rel, IndexTuple itup)
{
	return compare_tuple(key, rel, itup, false, NULL);
}

/*
 * btl_compare() with the key's hints (key->hint set): *hinted tells
 * whether a hint decided the result
 */
int32
btl_compare_hinted(const BtlSearchKey *key, Relation rel, IndexTuple itup,
				   bool *hinted)
{
	*hinted = false;

	/*
	 * One string attribute at a fixed offset, a tuple without NULLs: the
	 * commonest key, read where btl_compare_fixed() reads it, without
	 * deforming the tuple
	 */
	if (key->keysz == 1 && key->fixed && !IndexTupleHasNulls(itup))
	{
		const BtlKeyAtt *att = &key->att[0];
		int			ntupatts = BTreeTupleGetNAtts(itup, rel);
		int32		result = ntupatts > 0 ?
			cmp_by_hint(att, (const char *) itup + att->attoff) : 0;

		if (result != 0)
		{
			*hinted = true;
			if (!att->desc)
				INVERT_COMPARE_RESULT(result);
			return result;
		}
		return btl_compare_fixed(key, itup, ntupatts);
	}
	return compare_tuple(key, rel, itup, true, hinted);
}
