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

/*
 * How an index's key columns encode: each column's comparison kind (the
 * one its operator class's comparator has against its own type, by
 * classify() in compare.c) or collated-string encoding, DESC and NULLS
 * FIRST, and for a collated string its collation, the collation's locale
 * and whether it is deterministic.  ncols 0: some column has no encoding,
 * and the index's images keep no keys.  Made from the catalogs before any
 * page is locked (btl_nk_plan_of()).
 */
typedef struct BtlNkColumn
{
	uint8		kind;			/* BtlCmpKind, or BTL_NK_COLL_* */
	bool		desc;
	bool		nulls_first;
	bool		deterministic;
	Oid			collation;
	pg_locale_t locale;
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
extern bool btl_nk_make_key(const BtlNkPlan *plan, const BtlSearchKey *key,
							BtlNormKey *nk);
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
		btl_nk_pad(nk, keys->prefixlen + 8);
		c = btl_bytes_cmp(nk->bytes, BTL_NK_PREFIX(keys), keys->prefixlen);
		if (c != 0 || n == 0)
			return c > 0 ? n : 0;
		h = btl_nk_head(nk->bytes + keys->prefixlen, keys->width);
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
