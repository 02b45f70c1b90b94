/*-------------------------------------------------------------------------
 *
 * collhint.h
 *	  Collation hints: for a collation that does not order bytes (ICU's,
 *	  libc's), an order of ASCII strings worked out from the collation
 *	  itself, which the in-page search follows instead of calling the
 *	  collation at every step.  collhint.c owns the hints of this backend
 *	  (one per collation), how one is worked out and checked, and when one
 *	  is given up.
 *
 * A hint is never an answer.  It ranks each ASCII character by the
 * collation's first level (primary weights: letters without case, digits,
 * punctuation) and orders two ASCII strings by their ranks, characters
 * the collation ignores at that level skipped; where that says "equal",
 * or a string has a byte outside ASCII, it says nothing, and the
 * collation decides.  search.c then proves the position the hinted search
 * found with the collation itself on the two items around it, and
 * searches the page again without the hint if either disagrees
 * (docs/design.md, "Collation hints").  A hint that orders wrongly, by a
 * collation this model does not fit (contractions, numeric ordering,
 * tailorings), therefore costs time, never an answer; collhint.c checks
 * each hint against the collation before using it, and gives one up
 * whose proofs fail too often.
 *
 * src/collhint.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_COLLHINT_H
#define BTLAYOUT_COLLHINT_H

#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"
#include "utils/guc.h"
#include "utils/pg_locale.h"

/* The rank of a byte the collation ignores at its first level */
#define BTL_HINT_IGNORED	0
/* The rank of a byte the hint knows nothing of (one outside ASCII) */
#define BTL_HINT_UNKNOWN	255

typedef struct BtlCollHint
{
	Oid			collation;
	bool		usable;			/* checked, and not given up */
	uint8		rank[256];		/* by byte: IGNORED, 1..254, or UNKNOWN */
	uint64		proofs;			/* hinted searches proven by the collation */
	uint64		failures;		/* ... whose proof failed */
} BtlCollHint;

/* GUC btlayout.collation_hints */
extern bool btl_collation_hints;
/* GUC btlayout.debug_collation_hint_scramble: for tests, wrong hints */
extern bool btl_debug_collation_hint_scramble;

extern BtlCollHint *btl_collhint_of(Oid collation, pg_locale_t locale);
extern void btl_collhint_proof(BtlCollHint *hint, bool held);

/*
 * How the hint orders the strings a (alen bytes) and b: -1 or 1 if a's
 * ranks, characters ignored at the first level skipped, sort below or
 * above b's; 0 if they are the same ranks or a byte outside ASCII leaves
 * the hint without an answer.  Bytes both strings start with rank alike,
 * so they are passed over unread.
 */
static pg_attribute_always_inline int
btl_collhint_cmp(const BtlCollHint *hint, const char *a, int alen,
				 const char *b, int blen)
{
	const uint8 *rank = hint->rank;
	int			n = Min(alen, blen);
	int			i = 0;
	int			j;

	while (i + 8 <= n)
	{
		uint64		wa;
		uint64		wb;

		memcpy(&wa, a + i, sizeof(wa));
		memcpy(&wb, b + i, sizeof(wb));
		if (wa != wb)
		{
			/* the first byte that differs: the highest, read big-endian */
			i += (63 - pg_leftmost_one_pos64(pg_ntoh64(wa ^ wb))) / 8;
			break;
		}
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	j = i;
	for (;;)
	{
		uint8		ra = BTL_HINT_IGNORED;
		uint8		rb = BTL_HINT_IGNORED;

		while (i < alen && (ra = rank[(uint8) a[i]]) == BTL_HINT_IGNORED)
			i++;
		while (j < blen && (rb = rank[(uint8) b[j]]) == BTL_HINT_IGNORED)
			j++;
		if (i == alen || j == blen)
		{
			/* a string that ended: below the other, unless it had an unknown */
			if (i == alen && j == blen)
				return 0;
			if (i == alen)
				return rb == BTL_HINT_UNKNOWN ? 0 : -1;
			return ra == BTL_HINT_UNKNOWN ? 0 : 1;
		}
		if (ra == BTL_HINT_UNKNOWN || rb == BTL_HINT_UNKNOWN)
			return 0;
		if (ra != rb)
			return ra < rb ? -1 : 1;
		i++;
		j++;
	}
}

#endif							/* BTLAYOUT_COLLHINT_H */
