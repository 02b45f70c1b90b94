/*-------------------------------------------------------------------------
 *
 * binops.c
 *	  The BIN-collation operator classes: comparison functions, sort
 *	  support and the collation they require.
 *
 * text_bin_ops (text and varchar), bpchar_bin_ops and bytea_bin_ops order
 * strings by their bytes, as the server's comparators do under the "C"
 * collation, but compare with the compare core (bincmp.c) instead of
 * memcmp() after a collation lookup.  bpchar_bin_ops ignores trailing
 * spaces, as bpchar does: 'a' = 'a  ', and 'a' < 'a' || E'\t' since the
 * shorter string sorts first once the padding is gone.
 *
 * The operators are the standard ones of each type, so the planner uses
 * these indexes for ordinary queries, and the operators' own semantics
 * must agree with ours: they do only under a "C" collation (for text and
 * bpchar; bytea has no collation).  Hence the collation check: CREATE
 * INDEX refuses a column of these classes whose collation is not "C"
 * (btl_check_bin_collations, called by the build, which every CREATE
 * INDEX, REINDEX and rewrite goes through), and the comparison functions
 * refuse to run under another collation rather than return an order the
 * operators would contradict.
 *
 * The search path (compare.c) recognises these comparison functions by
 * their address and compares inline; sort support serves whoever sorts
 * with an operator class's support function 2.
 *
 * src/binops.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/genam.h"
#include "bincmp.h"
#include "binops.h"
#include "common/hashfn.h"
#include "lib/hyperloglog.h"
#include "port/pg_bswap.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/sortsupport.h"

PG_FUNCTION_INFO_V1(btlayout_text_bin_cmp);
PG_FUNCTION_INFO_V1(btlayout_bpchar_bin_cmp);
PG_FUNCTION_INFO_V1(btlayout_bytea_bin_cmp);
PG_FUNCTION_INFO_V1(btlayout_text_bin_sortsupport);
PG_FUNCTION_INFO_V1(btlayout_bpchar_bin_sortsupport);
PG_FUNCTION_INFO_V1(btlayout_bytea_bin_sortsupport);

/* Sort support state, for abbreviated keys */
typedef struct BinSortState
{
	bool		bpchar;			/* ignore trailing spaces */
	hyperLogLogState abbr_card; /* distinct abbreviated keys seen */
	hyperLogLogState full_card; /* distinct strings seen */
} BinSortState;

/* Fewer distinct abbreviations than this share of distinct strings: abort */
#define BIN_ABBREV_MIN_SHARE	0.05

/* Strings seen before abbreviation may be judged */
#define BIN_ABBREV_PATIENCE		100

static void
bin_collation_error(Oid collid, const char *opclass, const char *column)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("operator class \"%s\" of access method btlayout requires the \"C\" collation",
					opclass),
			 column ?
			 errdetail("Index column \"%s\" has collation \"%s\".", column,
					   OidIsValid(collid) ? get_collation_name(collid) : "none") : 0,
			 errhint("Add COLLATE \"C\" to the index column.")));
}

/*
 * The bytes a string datum compares by: its data, without the trailing
 * spaces for bpchar.  *copy is set to the detoasted copy to free, if any.
 */
static inline const char *
bin_bytes(Datum d, bool bpchar, int *len, struct varlena **copy)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(d);
	char	   *data = VARDATA_ANY(v);

	*len = VARSIZE_ANY_EXHDR(v);
	if (bpchar)
		*len = bpchartruelen(data, *len);
	*copy = (Pointer) v != DatumGetPointer(d) ? v : NULL;
	return data;
}

static int
bin_cmp_datums(Datum x, Datum y, bool bpchar)
{
	struct varlena *xcopy;
	struct varlena *ycopy;
	int			xlen;
	int			ylen;
	const char *xdata = bin_bytes(x, bpchar, &xlen, &xcopy);
	const char *ydata = bin_bytes(y, bpchar, &ylen, &ycopy);
	int			result = btl_str_cmp(xdata, xlen, ydata, ylen);

	if (xcopy)
		pfree(xcopy);
	if (ycopy)
		pfree(ycopy);
	return result;
}

/*
 * Comparison functions (support function 1)
 */
Datum
btlayout_text_bin_cmp(PG_FUNCTION_ARGS)
{
	Oid			collid = PG_GET_COLLATION();

	if (!btl_collation_is_c(collid))
		bin_collation_error(collid, "text_bin_ops", NULL);
	PG_RETURN_INT32(bin_cmp_datums(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1),
								   false));
}

Datum
btlayout_bpchar_bin_cmp(PG_FUNCTION_ARGS)
{
	Oid			collid = PG_GET_COLLATION();

	if (!btl_collation_is_c(collid))
		bin_collation_error(collid, "bpchar_bin_ops", NULL);
	PG_RETURN_INT32(bin_cmp_datums(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1),
								   true));
}

Datum
btlayout_bytea_bin_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(bin_cmp_datums(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1),
								   false));
}

/*
 * Sort support (support function 2): the comparator without the function
 * manager, and abbreviated keys: the first eight bytes, big-endian, zero
 * padded, compared as unsigned integers.  A string's abbreviation never
 * sorts above a longer string it is a prefix of, and equal abbreviations
 * go to the full comparator, so the abbreviated order is never wrong.
 */
static int
bin_sort_cmp(Datum x, Datum y, SortSupport ssup)
{
	return bin_cmp_datums(x, y, false);
}

static int
bin_sort_cmp_bpchar(Datum x, Datum y, SortSupport ssup)
{
	return bin_cmp_datums(x, y, true);
}

static Datum
bin_abbrev_convert(Datum original, SortSupport ssup)
{
	BinSortState *state = (BinSortState *) ssup->ssup_extra;
	struct varlena *copy;
	int			len;
	const char *data = bin_bytes(original, state->bpchar, &len, &copy);
	uint64		abbrev = 0;

	memcpy(&abbrev, data, Min(len, (int) sizeof(abbrev)));
	abbrev = pg_hton64(abbrev);

	addHyperLogLog(&state->abbr_card,
				   DatumGetUInt32(hash_uint32((uint32) (abbrev ^ (abbrev >> 32)))));
	addHyperLogLog(&state->full_card,
				   DatumGetUInt32(hash_any((const unsigned char *) data, len)));

	if (copy)
		pfree(copy);
	return (Datum) abbrev;
}

/*
 * Abort abbreviation when the abbreviations tell apart far fewer strings
 * than there are (long common prefixes): each comparison would then pay
 * for both.
 */
static bool
bin_abbrev_abort(int memtupcount, SortSupport ssup)
{
	BinSortState *state = (BinSortState *) ssup->ssup_extra;
	double		abbr_distinct;
	double		full_distinct;

	if (memtupcount < BIN_ABBREV_PATIENCE)
		return false;
	abbr_distinct = Max(estimateHyperLogLog(&state->abbr_card), 1.0);
	full_distinct = Max(estimateHyperLogLog(&state->full_card), 1.0);
	return abbr_distinct < full_distinct * BIN_ABBREV_MIN_SHARE;
}

static void
bin_sortsupport(SortSupport ssup, bool bpchar)
{
	ssup->comparator = bpchar ? bin_sort_cmp_bpchar : bin_sort_cmp;

#if SIZEOF_DATUM >= 8
	if (ssup->abbreviate)
	{
		BinSortState *state = MemoryContextAlloc(ssup->ssup_cxt,
												 sizeof(BinSortState));

		state->bpchar = bpchar;
		initHyperLogLog(&state->abbr_card, 10);
		initHyperLogLog(&state->full_card, 10);
		ssup->ssup_extra = state;
		ssup->abbrev_full_comparator = ssup->comparator;
		ssup->comparator = ssup_datum_unsigned_cmp;
		ssup->abbrev_converter = bin_abbrev_convert;
		ssup->abbrev_abort = bin_abbrev_abort;
	}
#endif
}

Datum
btlayout_text_bin_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	if (!btl_collation_is_c(ssup->ssup_collation))
		bin_collation_error(ssup->ssup_collation, "text_bin_ops", NULL);
	bin_sortsupport(ssup, false);
	PG_RETURN_VOID();
}

Datum
btlayout_bpchar_bin_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	if (!btl_collation_is_c(ssup->ssup_collation))
		bin_collation_error(ssup->ssup_collation, "bpchar_bin_ops", NULL);
	bin_sortsupport(ssup, true);
	PG_RETURN_VOID();
}

Datum
btlayout_bytea_bin_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	bin_sortsupport(ssup, false);
	PG_RETURN_VOID();
}

/*
 * Which BIN comparison, if any, this comparison function is.
 */
BtlBinKind
btl_bin_kind(PGFunction fn)
{
	if (fn == btlayout_text_bin_cmp)
		return BTL_BIN_TEXT;
	if (fn == btlayout_bpchar_bin_cmp)
		return BTL_BIN_BPCHAR;
	if (fn == btlayout_bytea_bin_cmp)
		return BTL_BIN_BYTEA;
	return BTL_BIN_NONE;
}

/*
 * Refuse an index with a column of a collated BIN class (text_bin_ops,
 * bpchar_bin_ops) whose collation is not "C".
 */
void
btl_check_bin_collations(Relation index)
{
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(index);
	int			i;

	for (i = 0; i < nkeyatts; i++)
	{
		BtlBinKind	kind;
		Oid			collid = index->rd_indcollation[i];

		kind = btl_bin_kind(index_getprocinfo(index, i + 1, BTORDER_PROC)->fn_addr);
		if ((kind == BTL_BIN_TEXT || kind == BTL_BIN_BPCHAR) &&
			!btl_collation_is_c(collid))
			bin_collation_error(collid,
								kind == BTL_BIN_TEXT ? "text_bin_ops" : "bpchar_bin_ops",
								NameStr(TupleDescAttr(RelationGetDescr(index), i)->attname));
	}
}
