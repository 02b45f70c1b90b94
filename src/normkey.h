/*-------------------------------------------------------------------------
 *
 * normkey.h
 *	  Normalized keys: byte strings that memcmp() orders as an index
 *	  orders its keys, for the copy of the upper levels (upper.c) and its
 *	  search (search.c).  normkey.c owns the encodings and the keys of an
 *	  image; docs/design.md, "Normalized keys in the copy of the upper
 *	  levels", gives the whole argument.
 *
 * src/normkey.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_NORMKEY_H
#define BTLAYOUT_NORMKEY_H

#include "compare.h"
#include "utils/guc.h"
#include "utils/pg_locale.h"

/* Bytes of a normalized string made, pivot or search key; past it, cut */
#define BTL_NK_KEYMAX		256

/* Longest prefix an image stores once: a head past it is still made */
#define BTL_NK_PREFIXMAX	(BTL_NK_KEYMAX - 8)

StaticAssertDecl(BTL_NK_PREFIXMAX <= PG_UINT8_MAX, "prefixlen is a uint8");

/*
 * Bytes of an ICU sort key a search key's string takes: the key is cut
 * after them (made by ucol_nextSortKeyPart(), the rest is never made).
 * Enough to pass the prefix and the head of most images (e-mails: about
 * 16 characters of primary weights); pivots whose strings agree with all
 * of it are decided through their items.
 */
#define BTL_NK_KEY_SORTKEY	32

/*
 * The encodings of strings in a collation that does not order bytes, next
 * to the comparison kinds (BtlCmpKind) in a plan: text and varchar
 * (bttextcmp), bpchar (bpcharcmp).
 */
#define BTL_NK_COLL_TEXT	64
#define BTL_NK_COLL_BPCHAR	65

/* numeric (numeric_cmp), by its decimal digits (normkey.c) */
#define BTL_NK_NUMERIC		66

/*
 * How an index's key columns encode: each column's comparison kind (the
 * one its operator class's comparator has against its own type, by
 * classify() in compare.c) or collated-string encoding, DESC and NULLS
 * FIRST, and for a collated string its collation, the collation's locale,
 * whether it is deterministic and its hint, if it has one.  ncols 0: some column has no encoding,
 * and the index's images keep no keys.  Made from the catalogs before any
 * page is locked (btl_nk_plan_of()).
 */
typedef struct BtlNkColumn
{
	uint8		kind;			/* BtlCmpKind, BTL_NK_COLL_* or BTL_NK_NUMERIC */
	bool		desc;
	bool		nulls_first;
	bool		deterministic;
	Oid			collation;
	pg_locale_t locale;
	struct BtlCollHint *hint;	/* the collation's hint (collhint.h): the
								 * string's ranks, not its sort key */
} BtlNkColumn;

typedef struct BtlNkPlan
{
	int			ncols;
	BtlNkColumn col[INDEX_MAX_KEYS];	/* ncols of them */
} BtlNkPlan;

/* The bytes of a plan of ncols columns (a copy keeps no more) */
#define BTL_NK_PLAN_SIZE(ncols) \
	(offsetof(BtlNkPlan, col) + (ncols) * sizeof(BtlNkColumn))

/*
 * The keys of an image (made by btl_nk_measure() and btl_nk_write(),
 * after the image's page; searched by search.c): the prefix all the
 * normalized strings of the page's pivots after its minus-infinity item
 * share, stored once; each pivot's head, the width bytes of its string
 * after the prefix (zero-padded past its end) as a native unsigned
 * integer, in page order; and the downlinks of the nkeys + 1 data items,
 * the minus-infinity item's first.
 */
typedef struct BtlNkKeys
{
	uint16		nkeys;
	uint8		width;			/* bytes of each head: 4 or 8 */
	uint8		prefixlen;		/* at most BTL_NK_PREFIXMAX */
	uint16		heads;			/* offsets from this header */
	uint16		downlinks;
	uint16		prefix;
	uint64		prefix8;		/* its first 8 bytes (0x00 past its end),
								 * big-endian, as a native integer */
} BtlNkKeys;

#define BTL_NK_HEADS(k)		((const char *) (k) + (k)->heads)
#define BTL_NK_DOWNLINKS(k) \
	((const BlockNumber *) ((const char *) (k) + (k)->downlinks))
#define BTL_NK_PREFIX(k)	((const uint8 *) (k) + (k)->prefix)

/*
 * A search key's normalized string, made once per lookup for the first
 * image with keys (btl_nk_make_key()): len bytes, then the padding (0x00,
 * or 0xFF for nextkey) up to padded bytes, extended as images need it
 * (btl_nk_pad()).  A cut string (BTL_NK_KEYMAX bytes, or an ICU sort key
 * past BTL_NK_KEY_SORTKEY) has more bytes than it holds: past len, they are
 * unknown, and its padding is not used (btl_nk_search()).
 */
typedef struct BtlNormKey
{
	int			len;
	bool		cut;
	int			padded;
	uint8		pad;
	uint64		first8;			/* bytes[0..8), padded, as prefix8 */
	uint8		bytes[BTL_NK_KEYMAX + 8];
} BtlNormKey;

/* What btl_nk_measure() found out about a page, for btl_nk_write() */
typedef struct BtlNkBuild
{
	int			nkeys;
	int			width;
	int			prefixlen;
	uint8		prefix[BTL_NK_PREFIXMAX];
	uint64		heads[MaxIndexTuplesPerPage];
} BtlNkBuild;

/* GUC btlayout.debug_normkey_scramble: for tests, wrong encodings */
typedef enum BtlNkScramble
{
	BTL_NK_SCRAMBLE_OFF,
	BTL_NK_SCRAMBLE_KEYS,		/* every other search key's last byte */
	BTL_NK_SCRAMBLE_PIVOTS		/* heads out of order, past the check */
} BtlNkScramble;

extern int	btl_debug_normkey_scramble;
/* GUC btlayout.upper_copy_sort_keys: collations whose strings have keys */
typedef enum BtlNkSortKeys
{
	BTL_NK_SORT_KEYS_NONE,
	BTL_NK_SORT_KEYS_LIBC,		/* strxfrm() */
	BTL_NK_SORT_KEYS_ICU,		/* ucol_nextSortKeyPart() */
	BTL_NK_SORT_KEYS_ALL
} BtlNkSortKeys;

extern int	btl_upper_copy_sort_keys;
extern const struct config_enum_entry btl_nk_sort_keys_values[];
extern const struct config_enum_entry btl_nk_scramble_values[];

extern void btl_nk_plan_of(Relation rel, BtlNkPlan *plan);
extern bool btl_nk_make_key_any(const BtlNkPlan *plan,
								const BtlSearchKey *key, BtlNormKey *nk);
extern Size btl_nk_measure(Relation rel, const BtlNkPlan *plan, Page src,
						   BtlNkBuild *b);
extern void btl_nk_write(const BtlNkBuild *b, Page src, BtlNkKeys *keys);

/* The key padded to at least n bytes (n <= BTL_NK_KEYMAX) */
static inline void
btl_nk_pad(BtlNormKey *nk, int n)
{
	if (n > nk->padded)
	{
		memset(nk->bytes + nk->padded, nk->pad, n - nk->padded);
		nk->padded = n;
	}
}

/* The width bytes at p, big-endian, as a native unsigned integer */
static inline uint64
btl_nk_head(const uint8 *p, int width)
{
	if (width == 4)
	{
		uint32		v;

		memcpy(&v, p, sizeof(v));
		return pg_ntoh32(v);
	}
	else
	{
		uint64		v;

		memcpy(&v, p, sizeof(v));
		return pg_ntoh64(v);
	}
}

/* The marker byte of a value (normkey.c has the others) */
#define BTL_NK_VALUE	0x03

/*
 * A search key's string of len bytes made in nk->bytes: its padding (0x00,
 * or 0xFF for nextkey), the first 8 bytes of it by one store (bytes has
 * room for it), and first8
 */
static inline void
btl_nk_finish(BtlNormKey *nk, int len, bool cut, bool nextkey)
{
	uint64		pad8 = nextkey ? PG_UINT64_MAX : 0;

	nk->len = len;
	nk->cut = cut;
	nk->pad = nextkey ? 0xFF : 0x00;
	memcpy(nk->bytes + len, &pad8, sizeof(pad8));
	nk->padded = Min(BTL_NK_KEYMAX, len + 8);
	nk->first8 = btl_nk_head(nk->bytes, 8);
}

/*
 * The normalized string of a search key, for the images of an index of
 * plan (see BtlNormKey); false if the key has none: an attribute compared
 * by a comparator of another kind than its column's.  For a NULL argument
 * (an IS NULL search) the column's NULL marker.  Made once per lookup, at
 * its first image with keys.  Keys of integers of their columns' types
 * within their range, the commonest (one int4, a tenant and an id), are
 * made here, inline: for each, 0x03 and its bytes, as normkey.c's loop
 * (nk_int()) would make them, each written as 8 bytes of which the next
 * column's, or the padding, overwrite those past its width.  Every other
 * key is made by btl_nk_make_key_any().
 */
static inline bool
btl_nk_make_key(const BtlNkPlan *plan, const BtlSearchKey *key,
				BtlNormKey *nk)
{
	int			len = 0;

	if (key->keysz < 1 || key->keysz > plan->ncols ||
		key->keysz * 9 > BTL_NK_KEYMAX ||
		unlikely(btl_debug_normkey_scramble == BTL_NK_SCRAMBLE_KEYS))
		return btl_nk_make_key_any(plan, key, nk);
	for (int i = 0; i < key->keysz; i++)
	{
		const BtlKeyAtt *att = &key->att[i];
		uint64		u;
		int			width;

		if (att->argnull || att->kind != plan->col[i].kind)
			return btl_nk_make_key_any(plan, key, nk);
		/* out of the column's range: a marker, which that loop makes */
		switch (att->kind)
		{
			case BTL_CMP_INT32:
				if (att->iarg != (int32) att->iarg)
					return btl_nk_make_key_any(plan, key, nk);
				u = (uint64) ((uint32) att->iarg ^ 0x80000000) << 32;
				width = 4;
				break;
			case BTL_CMP_INT64:
				u = (uint64) att->iarg ^ (UINT64CONST(1) << 63);
				width = 8;
				break;
			case BTL_CMP_INT16:
				if (att->iarg != (int16) att->iarg)
					return btl_nk_make_key_any(plan, key, nk);
				u = (uint64) ((uint16) att->iarg ^ 0x8000) << 48;
				width = 2;
				break;
			default:
				return btl_nk_make_key_any(plan, key, nk);
		}
		u = pg_hton64(u);
		if (att->desc)
			u = ~u;
		nk->bytes[len] = BTL_NK_VALUE;
		memcpy(nk->bytes + len + 1, &u, sizeof(u));
		len += 1 + width;
	}
	btl_nk_finish(nk, len, false, key->nextkey);
	return true;
}

/*
 * name(keys, n, x): how many of the n (> 0) sorted keys of the type are
 * below x, by a binary search whose steps choose by a conditional move, not
 * a branch.
 */
#define BTL_COUNT_BELOW(name, type) \
static inline int \
name(const type *keys, int n, type x) \
{ \
	const type *base = keys; \
\
	while (n > 1) \
	{ \
		int			half = n / 2; \
\
		base = base[half] < x ? base + half : base; \
		n -= half; \
	} \
	return (int) (base - keys) + (*base < x); \
}

BTL_COUNT_BELOW(count_below32, uint32)
BTL_COUNT_BELOW(count_below64, uint64)

/*
 * The item of the image whose keys these are that _bt_binsrch() would
 * choose for the key (its string nk): how many pivots after the
 * minus-infinity item are before the key, 0 to nkeys; downlink i of the
 * keys is that item's.  page is the image's page (its items decide the
 * pivots whose heads equal the key's), rel the index.  See normkey.c's
 * header for why this is exact, and why it is safe when it is not.
 * Inline: every lookup through a copy with keys calls it at each level.
 */
static inline int
btl_nk_search(const BtlNkKeys *keys, BtlNormKey *nk,
			  const BtlSearchKey *key, Relation rel, Page page)
{
	int			n = keys->nkeys;
	int			lo;
	int			hi;
	int			c;
	uint64		h;
	uint64		hmax;

	if (nk->cut && keys->prefixlen + keys->width > nk->len)
	{
		/*
		 * A cut key that ends before this image's head does: its bytes past
		 * len are unknown, so the pivots whose strings agree with all it has
		 * are the range between its head with 0x00 bytes and with 0xFF
		 * bytes for the unknown ones, decided through their items.
		 */
		uint8		window[8];
		int			known = nk->len - keys->prefixlen;

		c = btl_bytes_cmp(nk->bytes, BTL_NK_PREFIX(keys),
						  Min(nk->len, keys->prefixlen));
		if (c != 0 || n == 0)
			return c > 0 ? n : 0;
		if (known <= 0)
		{
			lo = 0;
			hi = n;
		}
		else
		{
			memcpy(window, nk->bytes + keys->prefixlen, known);
			memset(window + known, 0x00, 8 - known);
			h = btl_nk_head(window, keys->width);
			memset(window + known, 0xFF, 8 - known);
			hmax = btl_nk_head(window, keys->width);
			if (keys->width == 4)
			{
				const uint32 *heads = (const uint32 *) BTL_NK_HEADS(keys);

				lo = count_below32(heads, n, (uint32) h);
				hi = (uint32) hmax == PG_UINT32_MAX ? n :
					count_below32(heads, n, (uint32) hmax + 1);
			}
			else
			{
				const uint64 *heads = (const uint64 *) BTL_NK_HEADS(keys);

				lo = count_below64(heads, n, h);
				hi = hmax == PG_UINT64_MAX ? n :
					count_below64(heads, n, hmax + 1);
			}
		}
	}
	else
	{
		if (keys->prefixlen + keys->width <= 8)
		{
			/*
			 * The prefix and the head lie in the key's first 8 bytes (an
			 * integer column's image): both taken from first8 by shifts
			 */
			int			pbits = 8 * keys->prefixlen;
			uint64		kp = pbits == 0 ? 0 :
				nk->first8 & (PG_UINT64_MAX << (64 - pbits));

			c = (kp > keys->prefix8) - (kp < keys->prefix8);
			h = (nk->first8 << pbits) >> (64 - 8 * keys->width);
		}
		else
		{
			btl_nk_pad(nk, keys->prefixlen + 8);
			c = btl_bytes_cmp(nk->bytes, BTL_NK_PREFIX(keys), keys->prefixlen);
			h = btl_nk_head(nk->bytes + keys->prefixlen, keys->width);
		}
		if (c != 0 || n == 0)
			return c > 0 ? n : 0;
		if (keys->width == 4)
		{
			const uint32 *heads = (const uint32 *) BTL_NK_HEADS(keys);

			lo = count_below32(heads, n, (uint32) h);
			for (hi = lo; hi < n && heads[hi] == (uint32) h; hi++)
				;
		}
		else
		{
			const uint64 *heads = (const uint64 *) BTL_NK_HEADS(keys);

			lo = count_below64(heads, n, h);
			for (hi = lo; hi < n && heads[hi] == h; hi++)
				;
		}
	}

	/* The pivots in [lo, hi) tie with the key on their heads: their items */
	if (lo < hi)
	{
		OffsetNumber first = P_FIRSTDATAKEY(BTPageGetOpaque(page)) + 1;
		int			cmpval = key->nextkey ? 0 : 1;

		while (lo < hi)
		{
			int			mid = lo + (hi - lo) / 2;
			IndexTuple	itup = (IndexTuple)
				PageGetItem(page, PageGetItemId(page, first + mid));

			if (btl_compare(key, rel, itup) >= cmpval)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return lo;
}

#endif							/* BTLAYOUT_NORMKEY_H */
