/*-------------------------------------------------------------------------
 *
 * normkey.c
 *	  Normalized keys: each key a byte string that memcmp() orders as the
 *	  index orders keys, for every index whose key columns all have such
 *	  an encoding.  This file owns the encodings, the keys an image of the
 *	  copy of the upper levels keeps (made under the page's lock with the
 *	  image, upper.c), their search (called by search.c), and
 *	  btlayout_normkey_check(), the property test of all of it.
 *
 * The string of a tuple or a search key is, column after column, a marker
 * byte and, for a value, its encoding:
 *
 *	0x01	NULL, in a NULLS FIRST column
 *	0x02	(search keys only) an argument below every value of the column
 *	0x03	a value, then its encoding
 *	0x04	(search keys only) an argument above every value of the column
 *	0x05	NULL, in a NULLS LAST column
 *
 * A value's encoding is prefix-free (fixed width, or terminated) and
 * memcmp() orders encodings as the column's comparator orders values;
 * DESC complements every byte of it (which reverses the order of
 * prefix-free strings), not the marker: NULLS FIRST and LAST name places
 * in the index's order whatever its direction.  So the strings of two
 * tuples compare at their first differing byte as the tuples compare at
 * their first differing column, and a string that is a proper prefix of
 * another is that of a tuple whose attributes (all it has) equal the
 * other's first ones.  A search key's string ends after a 0x02 or 0x04
 * marker: that column decides against every pivot that has it.
 *
 * The encodings, by the comparison kind of the column's operator class
 * (classify() in compare.c):
 *
 *	integers (int2, int4, int8, and date, time, timestamps, money, which
 *	compare as those): two's complement, big-endian, sign bit flipped, in
 *	the column's width; oid, bool and "char": unsigned, big-endian;
 *	float4 and float8: as float8 (float4 widens exactly), -0 as +0 and
 *	every NaN as one, the sign bit set for positives and every bit
 *	complemented for negatives, which orders -Inf < ... < +Inf < NaN as
 *	the float comparators do; uuid: its 16 bytes; strings compared as
 *	bytes (text and varchar under "C", bpchar without its trailing spaces,
 *	bytea, the BIN classes): the bytes with 0x00 escaped as 0x00 0xFF, then
 *	0x00 0x00; numeric: by its decimal digits (nk_numeric()); strings in a
 *	collation: the ranks of the collation's hint, if it has one
 *	(nk_ranks(): a string cut after its first level), else their sort
 *	keys (nk_collated()).
 *
 * A search key's argument of another type than the column's is encoded
 * into the column's domain by the kind its comparator has (compare.c):
 * integers of any width, out of the column's range as 0x02 or 0x04;
 * float4 against float8 either way, exactly.  Any other comparator
 * (another collation, a type without an encoding) leaves the key without
 * a string, and the images are searched as pages.
 *
 * How a string decides "is pivot P before key K" (btl_compare(K, P) >=
 * cmpval, the test by which _bt_binsrch() passes a pivot): pad P's string
 * with 0x00 bytes and K's with 0x00, or 0xFF for nextkey, and compare the
 * padded strings.  If P's is below, P is before K; if above, it is not; if
 * they are equal, the strings say nothing and the item decides.  Why, at
 * the first byte where they differ:
 *
 *	- both strings have it: the columns before are equal, and this one
 *	  differs as the bytes do (markers order NULLs, values and the 0x02
 *	  and 0x04 arguments as _bt_compare() does);
 *	- only K's has it (P's string is a proper prefix of K's, its 0x00
 *	  padding below K's byte): P has fewer attributes than K, all equal
 *	  to K's first, and _bt_compare() puts such a pivot (its truncated
 *	  attributes minus infinity) before K;
 *	- only P's has it: K's attributes equal P's first and P has more;
 *	  _bt_compare() returns 0, "before" exactly for nextkey, when K's 0xFF
 *	  padding is above P's byte; otherwise K's 0x00 is below it;
 *	- neither has it: only with nextkey (0xFF against 0x00); the strings
 *	  are equal, so are the attributes, and _bt_compare() returns 0 or 1,
 *	  both "before" for nextkey.
 *
 * A string is made to at most BTL_NK_KEYMAX bytes; one cut there has its
 * real bytes as far as any image reads (an image's prefix and heads end
 * within BTL_NK_KEYMAX), so the rule holds for cut strings too.
 *
 * An image's keys (BtlNkKeys) hold the bytes its pivots' strings share,
 * once, and of each pivot the next 4 or 8 bytes, its head, as an unsigned
 * integer: a head below the key's is a pivot before the key, above it one
 * that is not, and the pivots whose heads equal the key's are decided
 * through the image's items, by btl_compare().  So the search of an image
 * (btl_nk_search()) gives exactly the item _bt_binsrch() would choose on
 * the page the image was made of, whatever the key; under a wrong encoding
 * (a bug, btlayout.debug_normkey_scramble) it gives some item of the
 * image, whose downlink the leaf must prove, as every answer of the copy
 * (btl_search()).  Answers never rest on the encoding.
 *
 * src/normkey.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/relation.h"
#include "collhint.h"
#include "common/pg_prng.h"
#include "funcapi.h"
#include "normkey.h"
#include "storage/bufmgr.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/numeric.h"
#include "utils/syscache.h"

/* The markers */
#define NK_NULL_FIRST	0x01
#define NK_BELOW		0x02
#define NK_VALUE		BTL_NK_VALUE
#define NK_ABOVE		0x04
#define NK_NULL_LAST	0x05

/* GUC btlayout.debug_normkey_scramble */
int			btl_debug_normkey_scramble = BTL_NK_SCRAMBLE_OFF;

/*
 * GUC btlayout.upper_copy_sort_keys: the providers whose collations,
 * those without a hint (collhint.h, whose ranks serve the others), give
 * strings sort keys.  libc's by default: a sort key per lookup costs about what
 * the comparisons it saves in the upper levels cost under ICU, whose
 * comparison is quick, and much less under glibc's strcoll() on long keys
 * (docs/performance.md, "Normalized keys").
 */
int			btl_upper_copy_sort_keys = BTL_NK_SORT_KEYS_LIBC;

const struct config_enum_entry btl_nk_sort_keys_values[] = {
	{"none", BTL_NK_SORT_KEYS_NONE, false},
	{"libc", BTL_NK_SORT_KEYS_LIBC, false},
	{"icu", BTL_NK_SORT_KEYS_ICU, false},
	{"all", BTL_NK_SORT_KEYS_ALL, false},
	{NULL, 0, false}
};

const struct config_enum_entry btl_nk_scramble_values[] = {
	{"off", BTL_NK_SCRAMBLE_OFF, false},
	{"keys", BTL_NK_SCRAMBLE_KEYS, false},
	{"pivots", BTL_NK_SCRAMBLE_PIVOTS, false},
	{NULL, 0, false}
};

/*
 * The provider of a collation (COLLPROVIDER_*): the database's for the
 * default collation.  (pg_locale_t says it on every version but 19.)
 */
static char
collation_provider(Oid collation)
{
	HeapTuple	tup;
	char		provider;

	if (collation == DEFAULT_COLLATION_OID)
	{
		tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for database %u", MyDatabaseId);
		provider = ((Form_pg_database) GETSTRUCT(tup))->datlocprovider;
	}
	else
	{
		tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for collation %u", collation);
		provider = ((Form_pg_collation) GETSTRUCT(tup))->collprovider;
	}
	ReleaseSysCache(tup);
	return provider;
}

/*
 * The encoding of key column i of rel whose comparator compares it
 * through a function (BTL_CMP_GENERIC) or a collation's locale
 * (BTL_CMP_COLLATED*): numeric, by its digits; text,
 * varchar and bpchar in a collation that does not order bytes, by the
 * ranks of the collation's hint if it has one (collhint.h), else by their
 * sort keys, for the providers btlayout.upper_copy_sort_keys names.  0 if
 * the column has none.
 */
static uint8
function_kind(Relation rel, int i, BtlNkPlan *plan)
{
	Oid			fn = index_getprocinfo(rel, i + 1, BTORDER_PROC)->fn_oid;
	Oid			collation = rel->rd_indcollation[i];
	char		provider;
	pg_locale_t locale;
	BtlCollHint *hint;

	if (fn == F_NUMERIC_CMP)
		return BTL_NK_NUMERIC;
	if ((fn != F_BTTEXTCMP && fn != F_BPCHARCMP) || !OidIsValid(collation))
		return 0;
	locale = pg_newlocale_from_collation(collation);
	hint = btl_collhint_of(collation, locale);
	if (hint == NULL)
	{
		provider = collation_provider(collation);
		if (provider == COLLPROVIDER_ICU ?
			(btl_upper_copy_sort_keys & BTL_NK_SORT_KEYS_ICU) == 0 :
			provider != COLLPROVIDER_LIBC ||
			(btl_upper_copy_sort_keys & BTL_NK_SORT_KEYS_LIBC) == 0)
			return 0;
	}
	plan->col[i].collation = collation;
	plan->col[i].locale = locale;
	plan->col[i].deterministic = btl_locale_deterministic(locale);
	plan->col[i].hint = hint;
	return fn == F_BTTEXTCMP ? BTL_NK_COLL_TEXT : BTL_NK_COLL_BPCHAR;
}

/*
 * The plan of rel's key columns (see BtlNkPlan).  Reads the catalogs the
 * first time for an index (its comparators, collations and locales): not
 * under a buffer lock.
 */
void
btl_nk_plan_of(Relation rel, BtlNkPlan *plan)
{
	int			nkeyatts = IndexRelationGetNumberOfKeyAttributes(rel);

	plan->ncols = 0;
	for (int i = 0; i < nkeyatts; i++)
	{
		uint8		kind = (uint8) btl_column_kind(rel, i);

		/* a column not of a collation has no collation, locale, ... */
		memset(&plan->col[i], 0, sizeof(BtlNkColumn));
		if (kind == BTL_CMP_GENERIC || kind == BTL_CMP_COLLATED ||
			kind == BTL_CMP_COLLATED_BPCHAR)
			kind = function_kind(rel, i, plan);
		if (kind == 0)
			return;
		plan->col[i].kind = kind;
		plan->col[i].desc = (rel->rd_indoption[i] & INDOPTION_DESC) != 0;
		plan->col[i].nulls_first = (rel->rd_indoption[i] & INDOPTION_NULLS_FIRST) != 0;
	}
	plan->ncols = nkeyatts;
}

/*
 * A string being made: at most cap bytes are kept; one that had more to
 * take, or whose sort key was made only in part, is cut, and ends there.
 */
typedef struct NkOut
{
	uint8	   *buf;
	int			len;
	int			cap;
	bool		cut;
} NkOut;

static inline void
nk_byte(NkOut *o, uint8 b)
{
	if (o->cut)
		return;
	if (o->len < o->cap)
		o->buf[o->len++] = b;
	else
		o->cut = true;
}

/* n bytes, complemented for DESC */
static inline void
nk_bytes(NkOut *o, const uint8 *p, int n, bool desc)
{
	uint8		flip = desc ? 0xFF : 0x00;

	if (o->cut)
		return;
	if (n > o->cap - o->len)
	{
		n = o->cap - o->len;
		o->cut = true;
	}
	for (int i = 0; i < n; i++)
		o->buf[o->len + i] = p[i] ^ flip;
	o->len += n;
}

/* The low width (1, 2, 4 or 8) bytes of u, big-endian */
static inline void
nk_uint(NkOut *o, uint64 u, int width, bool desc)
{
	uint64		be = pg_hton64(u << (8 * (8 - width)));

	if (desc)
		be = ~be;
	if (likely(!o->cut && o->cap - o->len >= width))
	{
		/* each width a copy of constant size: a store, not a call */
		switch (width)
		{
			case 1:
				memcpy(o->buf + o->len, &be, 1);
				break;
			case 2:
				memcpy(o->buf + o->len, &be, 2);
				break;
			case 4:
				memcpy(o->buf + o->len, &be, 4);
				break;
			default:
				memcpy(o->buf + o->len, &be, 8);
				break;
		}
		o->len += width;
	}
	else
		nk_bytes(o, (const uint8 *) &be, width, false);
}

static inline int
int_width(BtlCmpKind kind)
{
	return kind == BTL_CMP_INT16 ? 2 : kind == BTL_CMP_INT32 ? 4 : 8;
}

/*
 * A signed integer of a column of the kind: 0x03 and its encoding, or, for
 * an argument out of the column's range, the marker that says which side
 * of every value it lies on (false: the string ends there).
 */
static inline bool
nk_int(NkOut *o, int64 v, BtlCmpKind kind, bool desc)
{
	int			width = int_width(kind);

	if (width < 8)
	{
		int64		max = (INT64CONST(1) << (8 * width - 1)) - 1;

		if (v > max || v < -max - 1)
		{
			nk_byte(o, (v > max) != desc ? NK_ABOVE : NK_BELOW);
			return false;
		}
	}
	nk_byte(o, NK_VALUE);
	nk_uint(o, (uint64) v ^ (UINT64CONST(1) << (8 * width - 1)), width, desc);
	return true;
}

/* A float, as the float comparators order them */
static inline void
nk_float(NkOut *o, double d, bool desc)
{
	uint64		u;

	if (isnan(d))
		d = get_float8_nan();
	else if (d == 0.0)
		d = 0.0;				/* -0 as +0 */
	memcpy(&u, &d, sizeof(u));
	u = (u & (UINT64CONST(1) << 63)) ? ~u : u | (UINT64CONST(1) << 63);
	nk_byte(o, NK_VALUE);
	nk_uint(o, u, 8, desc);
}

/* Bytes compared as bytes, then by length: 0x00 escaped, then 0x00 0x00 */
static inline void
nk_escaped(NkOut *o, const char *s, int len, bool desc)
{
	static const uint8 zero_escape[2] = {0x00, 0xFF};
	static const uint8 terminator[2] = {0x00, 0x00};
	int			start = 0;

	for (int i = 0; i < len && !o->cut; i++)
	{
		if (s[i] != '\0')
			continue;
		nk_bytes(o, (const uint8 *) s + start, i - start, desc);
		nk_bytes(o, zero_escape, 2, desc);
		start = i + 1;
	}
	nk_bytes(o, (const uint8 *) s + start, len - start, desc);
	nk_bytes(o, terminator, 2, desc);
}

/* A string compared as bytes: 0x03, then the bytes (nk_escaped()) */
static inline void
nk_string(NkOut *o, const char *s, int len, bool desc)
{
	nk_byte(o, NK_VALUE);
	nk_escaped(o, s, len, desc);
}

/*
 * A numeric, by the decimal string numeric_normalize() makes of it (no
 * insignificant zeros, so equal values give equal strings, as numeric_cmp()
 * has 1.0 = 1.00): 0x03, a class byte (0x00 -Infinity, 0x01 negative, 0x02
 * zero, 0x03 positive, 0x04 Infinity, 0x05 NaN, which numeric_cmp() puts
 * above every value), then, for a value other than zero, its decimal
 * exponent e (the value is 0.d1d2... times 10^e, d1 not 0) as 4 bytes
 * big-endian, 2^31 added, and its digits two to a byte (10 d1 + d2 + 1,
 * 1 to 100, a missing last digit as 0) ended by 0x00.  Of two magnitudes
 * the larger exponent is the larger, then the digits decide, a shorter
 * run of digits being a prefix of a longer one and ended below it; a
 * negative value's exponent and digits are complemented, so that the
 * larger magnitude comes first.  Calls the server's numeric_normalize()
 * (numeric's format is numeric.c's own).
 */
static void
nk_numeric(NkOut *o, Datum d, bool desc)
{
	Numeric		num = DatumGetNumeric(d);
	char	   *str = numeric_normalize(num);
	const char *p = str;
	bool		neg = (*p == '-');
	const char *digits;
	const char *point;
	int			ndigits = 0;
	int32		e;
	uint8		class;
	uint8		flip;

	nk_byte(o, NK_VALUE);
	if (neg)
		p++;
	if (strcmp(p, "NaN") == 0 || strcmp(p, "Infinity") == 0)
	{
		class = *p == 'N' ? 0x05 : neg ? 0x00 : 0x04;
		nk_bytes(o, &class, 1, desc);
		goto done;
	}

	/* the first significant digit, and the exponent */
	point = strchr(p, '.');
	digits = p;
	while (*digits == '0' || *digits == '.')
		digits++;
	if (*digits == '\0')
	{
		class = 0x02;
		nk_bytes(o, &class, 1, desc);
		goto done;
	}
	if (point == NULL || digits < point)
		e = (int32) ((point ? point : p + strlen(p)) - digits);
	else
		e = -(int32) (digits - point - 1);

	class = neg ? 0x01 : 0x03;
	nk_bytes(o, &class, 1, desc);
	flip = neg ? 0xFF : 0x00;
	nk_uint(o, (uint64) ((uint32) e ^ 0x80000000), 4, desc != neg);

	/* the digits, without the point and without trailing zeros */
	{
		char	   *out = str;	/* overwrites what was read */
		uint8		b;

		for (const char *q = digits; *q; q++)
			if (*q != '.')
				out[ndigits++] = *q;
		while (ndigits > 0 && out[ndigits - 1] == '0')
			ndigits--;
		for (int i = 0; i < ndigits; i += 2)
		{
			b = (uint8) ((out[i] - '0') * 10 +
						 (i + 1 < ndigits ? out[i + 1] - '0' : 0) + 1);
			b ^= flip;
			nk_bytes(o, &b, 1, desc);
		}
		b = flip;
		nk_bytes(o, &b, 1, desc);
	}

done:
	pfree(str);
	if ((Pointer) num != DatumGetPointer(d))
		pfree(num);
}

/*
 * A string of ASCII bytes by the ranks of its collation's hint (collhint.h):
 * each byte's rank (1 to 254), but for the bytes the collation ignores at
 * its first level, then 0x00; the string is cut there.  So two strings
 * that differ at the first level differ in these bytes as the hint orders
 * them, a string whose ranks are those of another's beginning sorting
 * first, and strings of the same ranks (differing in case, in ignored
 * bytes, or not at all) have the same bytes and nothing after them: the
 * image's items decide between them, as between any pivots a cut key
 * cannot tell apart (btl_nk_search()).  A wrong hint only misorders keys,
 * which costs what a wrong encoding costs (see the file header).
 *
 * A byte outside ASCII has no rank: a pivot with one has no string (false;
 * its page keeps no keys), and a search key's string is cut before it, its
 * ranks so far all it knows, as a cut string's bytes are (the byte's weight
 * is unknown, and may be none).
 */
static bool
nk_ranks(NkOut *o, const char *s, int len, const BtlCollHint *hint,
		 bool desc, bool key)
{
	uint8		flip = desc ? 0xFF : 0x00;
	uint8	   *out = o->buf + o->len;
	int			room = o->cap - o->len;
	int			n = 0;

	/* written in place, a byte a character: a key's is made per lookup */
	for (int k = 0; k < len; k++)
	{
		uint8		r = hint->rank[(uint8) s[k]];

		if (r == BTL_HINT_UNKNOWN)
		{
			if (!key)
				return false;
			room = n;			/* no 0x00: the ranks end unknown */
			break;
		}
		if (r == BTL_HINT_IGNORED)
			continue;
		if (n == room)
			break;
		out[n++] = r ^ flip;
	}
	if (n < room)
		out[n++] = 0x00 ^ flip;
	o->len += n;
	o->cut = true;
	return true;
}

/*
 * A string in a collation: 0x03, its sort key (which holds no 0x00 byte),
 * 0x00, and for a deterministic collation the bytes as nk_escaped()
 * encodes them, the order varstr_cmp() gives strings the collation says
 * are equal.  ICU's sort key is made by ucol_nextSortKeyPart() on the
 * UTF-8 string, and only as much of it as the string can still take: a key
 * that fills it is cut there, every byte real (see the file header); a
 * libc collation's by strxfrm(), whole.  false if the transform gave a key
 * with a 0x00 byte.  A collation with a hint: the hint's ranks
 * (nk_ranks()) instead.  key: the string is a search key's (ICU's sort key
 * made only to BTL_NK_KEY_SORTKEY bytes), not a pivot's.
 */
static bool
nk_collated(NkOut *o, const char *s, int len, const BtlNkColumn *col,
			bool desc, bool key)
{
	int			budget = key ? BTL_NK_KEY_SORTKEY : INT_MAX;
	static const uint8 separator[1] = {0x00};
	pg_locale_t locale = col->locale;
	char		stackbuf[1024];
	char	   *buf = stackbuf;
	size_t		n;

	if (col->kind == BTL_NK_COLL_BPCHAR)
		len = bpchartruelen((char *) s, len);
	nk_byte(o, NK_VALUE);
	if (o->cut)
		return true;
	if (col->hint != NULL)
		return nk_ranks(o, s, len, col->hint, desc, key);
	if (btl_strxfrm_prefix_ok(locale))
	{
		char	   *key = (char *) o->buf + o->len;
		size_t		room = Min(o->cap - o->len, budget);

		n = room == 0 ? 0 : btl_strnxfrm_prefix(key, room, s, len, locale);
		if (n >= room)
		{
			o->len += room;		/* the key goes on: cut */
			o->cut = true;
			if (desc)
				for (size_t i = 0; i < room; i++)
					key[i] = ~key[i];
			return memchr(key, desc ? 0xFF : 0x00, room) == NULL;
		}
		/* the whole key, whether or not it ends in a 0x00 */
		if (n > 0 && key[n - 1] == '\0')
			n--;
		if (memchr(key, 0, n) != NULL)
			return false;
		if (desc)
			for (size_t i = 0; i < n; i++)
				key[i] = ~key[i];
		o->len += n;
	}
	else
	{
		n = btl_strnxfrm(buf, sizeof(stackbuf), s, len, locale);
		if (n != SIZE_MAX && n >= sizeof(stackbuf))
		{
			size_t		needed = n + 1;

			buf = palloc(needed);
			n = btl_strnxfrm(buf, needed, s, len, locale);
			if (n >= needed)
				n = SIZE_MAX;
		}
		if (n == SIZE_MAX || memchr(buf, 0, n) != NULL)
		{
			if (buf != stackbuf)
				pfree(buf);
			return false;
		}
		nk_bytes(o, (const uint8 *) buf, (int) Min(n, (size_t) o->cap), desc);
		if (buf != stackbuf)
			pfree(buf);
	}
	nk_bytes(o, separator, 1, desc);
	if (col->deterministic)
		nk_escaped(o, s, len, desc);
	return true;
}

/*
 * The string of the first natts attributes of itup into buf (cap bytes):
 * its length, or -1 if an attribute has no encoding here (a varlena not
 * stored plainly).  Reads the tuple as _bt_compare() does.
 */
static int
nk_encode_tuple(const BtlNkPlan *plan, TupleDesc desc, IndexTuple itup,
				int natts, uint8 *buf, int cap)
{
	NkOut		o = {buf, 0, cap, false};

	for (int i = 0; i < natts && !o.cut; i++)
	{
		BtlCmpKind	kind = (BtlCmpKind) plan->col[i].kind;
		bool		dsc = plan->col[i].desc;
		bool		isnull;
		Datum		d = index_getattr(itup, i + 1, desc, &isnull);

		if (isnull)
		{
			nk_byte(&o, plan->col[i].nulls_first ? NK_NULL_FIRST : NK_NULL_LAST);
			continue;
		}
		switch (plan->col[i].kind)	/* a BtlCmpKind or BTL_NK_* */
		{
			case BTL_CMP_INT16:
				nk_int(&o, DatumGetInt16(d), kind, dsc);
				break;
			case BTL_CMP_INT32:
				nk_int(&o, DatumGetInt32(d), kind, dsc);
				break;
			case BTL_CMP_INT64:
				nk_int(&o, DatumGetInt64(d), kind, dsc);
				break;
			case BTL_CMP_UINT32:
				nk_byte(&o, NK_VALUE);
				nk_uint(&o, DatumGetObjectId(d), 4, dsc);
				break;
			case BTL_CMP_UINT8:
				nk_byte(&o, NK_VALUE);
				nk_uint(&o, (uint8) DatumGetChar(d), 1, dsc);
				break;
			case BTL_CMP_FLOAT4:
				nk_float(&o, DatumGetFloat4(d), dsc);
				break;
			case BTL_CMP_FLOAT8:
				nk_float(&o, DatumGetFloat8(d), dsc);
				break;
			case BTL_CMP_UUID:
				nk_byte(&o, NK_VALUE);
				nk_bytes(&o, (const uint8 *) DatumGetPointer(d), 16, dsc);
				break;
			case BTL_CMP_BYTES:
			case BTL_CMP_BPCHAR:
				{
					const char *data;
					int			len;

					if (!btl_varlena_plain(DatumGetPointer(d), &data, &len))
						return -1;
					if (kind == BTL_CMP_BPCHAR)
						len = bpchartruelen((char *) data, len);
					nk_string(&o, data, len, dsc);
				}
				break;
			case BTL_CMP_GENERIC:
				return -1;
			case BTL_NK_NUMERIC:
				nk_numeric(&o, d, dsc);
				break;
			default:			/* BTL_NK_COLL_* */
				{
					const char *data;
					int			len;

					if (!btl_varlena_plain(DatumGetPointer(d), &data, &len) ||
						!nk_collated(&o, data, len, &plan->col[i], dsc, false))
						return -1;
				}
				break;
		}
	}
	return o.len;
}

/*
 * btl_nk_make_key() for every key but the one it makes inline
 */
bool
btl_nk_make_key_any(const BtlNkPlan *plan, const BtlSearchKey *key,
					BtlNormKey *nk)
{
	static uint32 scrambled;
	NkOut		o = {nk->bytes, 0, BTL_NK_KEYMAX, false};

	if (key->keysz < 1 || key->keysz > plan->ncols)
		return false;
	for (int i = 0; i < key->keysz && !o.cut; i++)
	{
		const BtlKeyAtt *att = &key->att[i];
		BtlCmpKind	kind = (BtlCmpKind) plan->col[i].kind;

		if (att->argnull)
		{
			nk_byte(&o, att->nulls_first ? NK_NULL_FIRST : NK_NULL_LAST);
			continue;
		}
		if (plan->col[i].kind == BTL_NK_NUMERIC)
		{
			/* numeric_cmp() against a numeric */
			if (att->kind != BTL_CMP_GENERIC ||
				att->sk->sk_func.fn_oid != F_NUMERIC_CMP)
				return false;
			nk_numeric(&o, att->sk->sk_argument, att->desc);
			continue;
		}
		if (plan->col[i].kind >= BTL_NK_COLL_TEXT)
		{
			/* A string in a collation: the column's comparator and collation */
			const char *data;
			int			len;

			if (att->kind != (plan->col[i].kind == BTL_NK_COLL_TEXT ?
							  BTL_CMP_COLLATED : BTL_CMP_COLLATED_BPCHAR) ||
				att->sk->sk_collation != plan->col[i].collation ||
				!btl_varlena_plain(DatumGetPointer(att->sk->sk_argument),
								   &data, &len) ||
				!nk_collated(&o, data, len, &plan->col[i], att->desc, true))
				return false;
			continue;
		}
		if (att->kind != kind)
			return false;
		switch (kind)
		{
			case BTL_CMP_INT16:
			case BTL_CMP_INT32:
			case BTL_CMP_INT64:
				if (!nk_int(&o, att->iarg, kind, att->desc))
					i = key->keysz; /* the marker ends the string */
				break;
			case BTL_CMP_UINT32:
				nk_byte(&o, NK_VALUE);
				nk_uint(&o, (uint64) att->iarg, 4, att->desc);
				break;
			case BTL_CMP_UINT8:
				nk_byte(&o, NK_VALUE);
				nk_uint(&o, (uint64) att->iarg, 1, att->desc);
				break;
			case BTL_CMP_FLOAT4:
			case BTL_CMP_FLOAT8:
				nk_float(&o, att->farg, att->desc);
				break;
			case BTL_CMP_UUID:
				nk_byte(&o, NK_VALUE);
				nk_uint(&o, att->sprefix, 8, att->desc);
				nk_uint(&o, att->ssuffix, 8, att->desc);
				break;
			case BTL_CMP_BYTES:
			case BTL_CMP_BPCHAR:
				nk_string(&o, att->sarg, att->slen, att->desc);
				break;
			default:
				return false;
		}
	}
	/* A wrong key, for tests: every other one's last byte changed */
	if (unlikely(btl_debug_normkey_scramble == BTL_NK_SCRAMBLE_KEYS) &&
		o.len > 0 && (scrambled++ & 1) != 0)
		nk->bytes[o.len - 1] ^= 0x5A;
	btl_nk_finish(nk, o.len, o.cut, key->nextkey);
	return true;
}

/*
 * The pivots of internal page src after its minus-infinity item: each a
 * pivot of 1 to plan->ncols attributes (its count, as nbtree stores it in
 * a pivot's TID), for btl_nk_measure().  0 if a data item is not such a
 * pivot, or the first is not the minus-infinity item.
 */
static int
nk_page_pivots(Page src, int ncols)
{
	BTPageOpaque opaque = BTPageGetOpaque(src);
	OffsetNumber first = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(src);

	if (P_ISLEAF(opaque) || maxoff < first)
		return -1;
	for (OffsetNumber i = first; i <= maxoff; i++)
	{
		ItemId		iid = PageGetItemId(src, i);
		IndexTuple	itup;
		int			natts;

		if (!ItemIdHasStorage(iid))
			return -1;
		itup = (IndexTuple) PageGetItem(src, iid);
		if (!BTreeTupleIsPivot(itup))
			return -1;
		natts = ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) & BT_OFFSET_MASK;
		if (i == first ? natts != 0 : (natts < 1 || natts > ncols))
			return -1;
	}
	return maxoff - first;
}

/* The string of the pivot after src's minus-infinity item numbered j */
static inline int
nk_pivot(const BtlNkPlan *plan, TupleDesc desc, Page src, int j, uint8 *buf)
{
	OffsetNumber off = P_FIRSTDATAKEY(BTPageGetOpaque(src)) + 1 + j;
	IndexTuple	itup = (IndexTuple) PageGetItem(src, PageGetItemId(src, off));

	return nk_encode_tuple(plan, desc, itup,
						   ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) & BT_OFFSET_MASK,
						   buf, BTL_NK_KEYMAX);
}

/* Does a column of the plan encode by a collation's hint? */
static bool
nk_plan_hinted(const BtlNkPlan *plan)
{
	for (int i = 0; i < plan->ncols; i++)
		if (plan->col[i].hint != NULL)
			return true;
	return false;
}

/*
 * Work out the keys of internal page src (read-locked by the caller, its
 * line pointers checked by make_image() in upper.c) of index rel, whose
 * key columns encode by plan, into b: their prefix and heads.  Returns the
 * bytes btl_nk_write() will write, or 0 if the page gets no keys: not all
 * its data items are pivots the plan encodes, or their heads decrease in
 * page order (the encoding disagrees with the page: a bug, or a libc
 * strxfrm() that disagrees with strcoll(); reported once per backend, and
 * the image is then searched as a page).
 *
 * Each pivot is encoded once, into a scratch allocation.  For strings in
 * a collation that is a transform per pivot (ICU's ucol_getSortKey() or
 * strxfrm(), about a microsecond each) while the caller holds the page's
 * share lock: a writer that must lock the page (to add a downlink) waits
 * for it, once per image a backend makes, as it waits for a reader that
 * searches the page; the collation's locale was made before the lock
 * (btl_nk_plan_of()), so no catalog is read under it.
 */
Size
btl_nk_measure(Relation rel, const BtlNkPlan *plan, Page src, BtlNkBuild *b)
{
	static bool warned;
	TupleDesc	desc = RelationGetDescr(rel);
	int			n = nk_page_pivots(src, plan->ncols);
	uint8	   *strings;
	int		   *lens;
	int			prefixlen = BTL_NK_PREFIXMAX;
	int			maxrest = 0;

	if (n <= 0)
	{
		if (n < 0)
			return 0;
		prefixlen = 0;
	}
	strings = palloc(Max(n, 1) * BTL_NK_KEYMAX);
	lens = palloc(Max(n, 1) * sizeof(int));
	for (int j = 0; j < n; j++)
	{
		uint8	   *str = strings + j * BTL_NK_KEYMAX;
		int			common = 0;

		lens[j] = nk_pivot(plan, desc, src, j, str);
		if (lens[j] < 0)
		{
			n = -1;
			break;
		}

		/* The prefix: the bytes every pivot's string starts with */
		while (common < prefixlen && common < lens[j] && str[common] == strings[common])
			common++;
		prefixlen = common;
	}

	/* The heads, which must not decrease */
	for (int j = 0; j < n; j++)
	{
		uint8	   *rest = strings + j * BTL_NK_KEYMAX + prefixlen;
		int			restlen = lens[j] - prefixlen;

		if (restlen < 8)
			memset(rest + restlen, 0, 8 - restlen);
		b->heads[j] = btl_nk_head(rest, 8);
		maxrest = Max(maxrest, restlen);
		if (j > 0 && b->heads[j] < b->heads[j - 1])
		{
			/* (a hint's order is a hint: no warning for it) */
			if (!warned && !nk_plan_hinted(plan))
				ereport(WARNING,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("normalized keys of an internal page of index \"%s\" are out of order",
								RelationGetRelationName(rel)),
						 errdetail("The page is searched through its items.")));
			warned = true;
			n = -1;
			break;
		}
	}
	if (n >= 0)
		memcpy(b->prefix, strings, prefixlen);
	pfree(strings);
	pfree(lens);
	if (n < 0)
		return 0;

	/* A wrong encoding, for tests: heads out of order, past the check */
	if (unlikely(btl_debug_normkey_scramble == BTL_NK_SCRAMBLE_PIVOTS))
		for (int j = 0; j < n / 2; j++)
		{
			uint64		h = b->heads[j];

			b->heads[j] = b->heads[n - 1 - j];
			b->heads[n - 1 - j] = h;
		}

	b->nkeys = n;
	b->width = maxrest <= 4 ? 4 : 8;
	b->prefixlen = prefixlen;
	return MAXALIGN(sizeof(BtlNkKeys)) + MAXALIGN(n * b->width) +
		MAXALIGN((n + 1) * sizeof(BlockNumber)) + prefixlen;
}

/* Write at keys the keys of page src that btl_nk_measure() worked out */
void
btl_nk_write(const BtlNkBuild *b, Page src, BtlNkKeys *keys)
{
	OffsetNumber first = P_FIRSTDATAKEY(BTPageGetOpaque(src));
	char	   *heads;
	BlockNumber *downlinks;

	keys->nkeys = (uint16) b->nkeys;
	keys->width = (uint8) b->width;
	keys->prefixlen = (uint8) b->prefixlen;
	keys->heads = MAXALIGN(sizeof(BtlNkKeys));
	keys->downlinks = keys->heads + MAXALIGN(b->nkeys * b->width);
	keys->prefix = keys->downlinks + MAXALIGN((b->nkeys + 1) * sizeof(BlockNumber));
	heads = (char *) keys + keys->heads;
	downlinks = (BlockNumber *) ((char *) keys + keys->downlinks);
	for (int j = 0; j < b->nkeys; j++)
	{
		if (b->width == 4)
			((uint32 *) heads)[j] = (uint32) (b->heads[j] >> 32);
		else
			((uint64 *) heads)[j] = b->heads[j];
	}
	for (int j = 0; j <= b->nkeys; j++)
		downlinks[j] = BTreeTupleGetDownLink((IndexTuple)
											 PageGetItem(src, PageGetItemId(src, first + j)));
	memcpy((char *) keys + keys->prefix, b->prefix, b->prefixlen);
	{
		uint8		first[8] = {0};

		memcpy(first, b->prefix, Min(b->prefixlen, 8));
		keys->prefix8 = btl_nk_head(first, 8);
	}
}

/* One tuple the property test compares keys with, and its padded string */
typedef struct NkCheckTuple
{
	IndexTuple	itup;
	bool		encoded;
	uint8		bytes[BTL_NK_KEYMAX];
} NkCheckTuple;

/*
 * btlayout_normkey_check(index regclass, probes int, seed int): the
 * property test of the normalized keys of a btlayout index (a test
 * function, created by the tests, not by the extension's scripts; like
 * the debug settings, it is not part of the interface).
 *
 * It reads every page of the index (each a copy made under its share
 * lock), keeps the internal pages and 8 leaves drawn at random, and makes
 * probes of probes random tuples of those leaves: for each, the search
 * keys of its first 1, 2, ... key attributes (NULLs included), each plain,
 * treating a truncated-equal pivot as equal (backward scans from 17) and
 * as nextkey.  For every probe and every tuple of those pages (pivots of
 * every truncation, leaf tuples), the padded strings' decision, where they
 * differ, must be btl_compare()'s (pairs, decided, mismatches); and for
 * every probe and internal page, btl_nk_search() on that page's keys must
 * choose the item _bt_binsrch() would (searches, search_mismatches).
 */
PG_FUNCTION_INFO_V1(btlayout_normkey_check);

Datum
btlayout_normkey_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	int			nprobes = PG_GETARG_INT32(1);
	pg_prng_state prng;
	Relation	index;
	BtlNkPlan	plan;
	BlockNumber nblocks;
	List	   *internal = NIL;
	Page		leaves[8];
	int			nleaves = 0;
	int64		nleafpages = 0;
	NkCheckTuple *tuples;
	int			ntuples = 0;
	int			maxtuples = 0;
	int64		counts[6] = {0};	/* tuples, pairs, decided, mismatches,
									 * searches, search_mismatches */
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {false};
	BtlNkKeys **pagekeys;
	BtlNkBuild *build;
	ListCell   *lc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (nprobes < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("probes must not be negative")));
	pg_prng_seed(&prng, (uint64) PG_GETARG_INT32(2));

	index = btl_open_index(indexoid, AccessShareLock, false);
	btl_nk_plan_of(index, &plan);
	if (plan.ncols == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" has a key column without a normalized key encoding",
						RelationGetRelationName(index))));

	/* The internal pages, and 8 leaves drawn at random (reservoir) */
	nblocks = RelationGetNumberOfBlocks(index);
	for (BlockNumber blkno = 1; blkno < nblocks; blkno++)
	{
		Page		page = palloc(BLCKSZ);
		BTPageOpaque opaque;

		CHECK_FOR_INTERRUPTS();
		btl_read_page_copy(index, blkno, NULL, page);
		opaque = BTPageGetOpaque(page);
		if (PageIsNew(page) ||
			PageGetSpecialSize(page) != MAXALIGN(sizeof(BTPageOpaqueData)) ||
			P_IGNORE(opaque) || P_ISMETA(opaque))
		{
			pfree(page);
			continue;
		}
		if (!P_ISLEAF(opaque))
		{
			internal = lappend(internal, page);
			continue;
		}
		nleafpages++;
		if (nleaves < lengthof(leaves))
			leaves[nleaves++] = page;
		else
		{
			int64		r = (int64) pg_prng_uint64_range(&prng, 0, nleafpages - 1);

			if (r < lengthof(leaves))
			{
				pfree(leaves[r]);
				leaves[r] = page;
			}
			else
				pfree(page);
		}
	}

	/* Every data item of those pages, encoded and padded with 0x00 */
	foreach(lc, internal)
		maxtuples += PageGetMaxOffsetNumber((Page) lfirst(lc));
	for (int i = 0; i < nleaves; i++)
		maxtuples += PageGetMaxOffsetNumber(leaves[i]);
	tuples = palloc(Max(maxtuples, 1) * sizeof(NkCheckTuple));
	for (int p = 0; p < list_length(internal) + nleaves; p++)
	{
		Page		page = p < list_length(internal) ?
			(Page) list_nth(internal, p) : leaves[p - list_length(internal)];
		BTPageOpaque opaque = BTPageGetOpaque(page);

		for (OffsetNumber off = P_FIRSTDATAKEY(opaque) + (P_ISLEAF(opaque) ? 0 : 1);
			 off <= PageGetMaxOffsetNumber(page); off++)
		{
			NkCheckTuple *t = &tuples[ntuples++];
			int			len;

			t->itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
			len = nk_encode_tuple(&plan, RelationGetDescr(index), t->itup,
								  BTreeTupleGetNAtts(t->itup, index),
								  t->bytes, BTL_NK_KEYMAX);
			t->encoded = len >= 0;
			if (len >= 0)
				memset(t->bytes + len, 0, BTL_NK_KEYMAX - len);
		}
	}
	counts[0] = ntuples;

	/* The keys of each internal page, as an image of it would have them */
	pagekeys = palloc0(Max(list_length(internal), 1) * sizeof(BtlNkKeys *));
	build = palloc(sizeof(BtlNkBuild));
	for (int i = 0; i < list_length(internal); i++)
	{
		Page		page = (Page) list_nth(internal, i);
		Size		size = btl_nk_measure(index, &plan, page, build);

		if (size == 0)
			continue;
		pagekeys[i] = palloc(size);
		btl_nk_write(build, page, pagekeys[i]);
	}

	for (int p = 0; p < nprobes && nleaves > 0; p++)
	{
		Page		leaf = leaves[pg_prng_uint64_range(&prng, 0, nleaves - 1)];
		OffsetNumber first = P_FIRSTDATAKEY(BTPageGetOpaque(leaf));
		OffsetNumber maxoff = PageGetMaxOffsetNumber(leaf);
		IndexTuple	probe;
		BTScanInsert inskey;

		if (maxoff < first)
			continue;
		probe = (IndexTuple) PageGetItem(leaf, PageGetItemId(leaf,
															 pg_prng_uint64_range(&prng, first, maxoff)));
		inskey = _bt_mkscankey(index, probe);
		inskey->scantid = NULL;
		for (int keysz = 1; keysz <= plan.ncols; keysz++)
		{
			for (int variant = 0; variant < 3; variant++)
			{
				BtlSearchKey key;
				BtlNormKey	nk;
				int			cmpval;

				CHECK_FOR_INTERRUPTS();
				inskey->keysz = keysz;
				inskey->nextkey = variant == 2;
				btl_prepare_search_key(index, inskey, &key);
				key.truncated_equal = variant == 1;
				cmpval = key.nextkey ? 0 : 1;
				if (!btl_nk_make_key(&plan, &key, &nk))
				{
					counts[3]++;	/* a key of the column's own type has one */
					continue;
				}
				if (!nk.cut)
					btl_nk_pad(&nk, BTL_NK_KEYMAX);

				for (int t = 0; t < ntuples; t++)
				{
					int			c;

					if (!tuples[t].encoded)
						continue;
					counts[1]++;
					c = memcmp(nk.bytes, tuples[t].bytes,
							   nk.cut ? nk.len : BTL_NK_KEYMAX);
					if (c == 0)
						continue;
					counts[2]++;
					if ((c > 0) != (btl_compare(&key, index, tuples[t].itup) >= cmpval))
						counts[3]++;
				}

				for (int i = 0; i < list_length(internal); i++)
				{
					Page		page = (Page) list_nth(internal, i);
					int			before = 0;

					if (pagekeys[i] == NULL)
						continue;
					for (OffsetNumber off = P_FIRSTDATAKEY(BTPageGetOpaque(page)) + 1;
						 off <= PageGetMaxOffsetNumber(page); off++)
						if (btl_compare(&key, index,
										(IndexTuple) PageGetItem(page, PageGetItemId(page, off))) >= cmpval)
							before++;
					counts[4]++;
					if (btl_nk_search(pagekeys[i], &nk, &key, index, page) != before)
						counts[5]++;
				}
			}
		}
		pfree(inskey);
	}
	relation_close(index, AccessShareLock);

	for (int i = 0; i < lengthof(values); i++)
		values[i] = Int64GetDatum(counts[i]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
