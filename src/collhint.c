/*-------------------------------------------------------------------------
 *
 * collhint.c
 *	  The collation hints of this backend: worked out from each collation
 *	  the first time a search key uses it, checked against it, kept for the
 *	  life of the backend, given up when their proofs fail.
 *
 * A hint is worked out from the collation's own comparison (compat.h's
 * btl_strncoll(), whatever the provider), on strings of one or two ASCII
 * characters:
 *
 *	- c is ignored at the first level if "c" + y sorts above x and "c" + x
 *	  below y, for x, y = "a", "b" and again for "y", "z": a character with
 *	  a weight of its own would have to lie between a and b and between y
 *	  and z at once;
 *	- the others are sorted by the collation, one character a string, and
 *	  two neighbours c, d share a rank if "c" + "b" sorts above "d" + "a"
 *	  and "c" + "a" below "d" + "b" (the second character decides: c and d
 *	  are equal at the first level), else d's rank is the next one.
 *
 * That is the order of UCA-style collations on ASCII text: ICU's root and
 * most of its locales, glibc's.  It is not the order of a collation with
 * contractions of ASCII letters (Czech "ch", Danish "aa"), numeric
 * ordering ("kn"), or a tailoring this misses; so before a hint is used it
 * is compared with the collation on a fixed set of such strings and on
 * random ASCII strings (a fixed seed: the same in every backend), and a
 * hint that disagrees once is not used.  That check is a sample; nothing
 * rests on it.  Every hinted search is proven by the collation itself
 * (search.c), and a hint whose proofs fail for more than one search in
 * eight (after 64) is given up for the rest of the backend's life, so
 * that a wrong hint cannot keep costing a search twice.
 *
 * Memory: one entry (300 bytes) per collation a search key of this
 * backend used, in TopMemoryContext; collations are catalog objects, a
 * handful in a database.  Working one out costs about 2,000 comparisons
 * of the collation, once per backend.
 *
 * src/collhint.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "collhint.h"
#include "common/pg_prng.h"
#include "utils/memutils.h"

bool		btl_collation_hints = true;
bool		btl_debug_collation_hint_scramble = false;

/* A hint is given up once more than one proof in GIVE_UP_RATIO failed */
#define GIVE_UP_AFTER	64
#define GIVE_UP_RATIO	8

/* Random strings a hint is checked on, and their longest */
#define CHECK_PAIRS		256
#define CHECK_MAXLEN	12

/*
 * The hints of this backend, by collation and the locale the server gave
 * for it (a collation dropped and its OID reused by another, whose locale
 * the server makes anew, gets a hint of its own; a stale one would cost
 * only its proofs); a scrambled one is kept apart from its own
 */
typedef struct HintEntry
{
	pg_locale_t locale;
	bool		scrambled;
	BtlCollHint hint;
} HintEntry;

static HintEntry **hints;
static int	nhints;
static int	maxhints;

/*
 * Strings the hint's model gets wrong in some collations: numeric
 * ordering, contractions and expansions of ASCII letters, punctuation
 * ignored or not, case
 */
static const char *const check_pairs[][2] = {
	{"9", "10"}, {"a9", "a10"}, {"ch", "d"}, {"ch", "h"}, {"ch", "ci"},
	{"ll", "m"}, {"aa", "b"}, {"aa", "z"}, {"ae", "af"}, {"oe", "p"},
	{"ss", "st"}, {"th", "tz"}, {"ij", "ik"}, {"a b", "ab"}, {"a-b", "ab"},
	{"a_b", "a.b"}, {"co-op", "coop"}, {"Ab", "ab"}, {"aB", "Ab"},
	{"a@b.c", "a.b@c"}, {"x1", "x-1"}, {"dz", "e"}, {"cs", "d"}, {"ly", "m"},
};

/* The collation's order of two strings, before any tie-break by bytes */
static int
coll_cmp(const char *a, int alen, const char *b, int blen, pg_locale_t locale)
{
	int			c = btl_strncoll(a, alen, b, blen, locale);

	return (c > 0) - (c < 0);
}

/* The order of "c" + s (one byte) and t (one byte) */
static int
coll_cmp_pair(char c, char s, char t, pg_locale_t locale)
{
	char		a[2] = {c, s};

	return coll_cmp(a, 2, &t, 1, locale);
}

/* Is c ignored at the first level?  (The file header says why.) */
static bool
ignored(char c, pg_locale_t locale)
{
	return coll_cmp_pair(c, 'b', 'a', locale) > 0 &&
		coll_cmp_pair(c, 'a', 'b', locale) < 0 &&
		coll_cmp_pair(c, 'z', 'y', locale) > 0 &&
		coll_cmp_pair(c, 'y', 'z', locale) < 0;
}

/* Are c and d equal at the first level? */
static bool
first_level_equal(char c, char d, pg_locale_t locale)
{
	char		cb[2] = {c, 'b'};
	char		ca[2] = {c, 'a'};
	char		da[2] = {d, 'a'};
	char		db[2] = {d, 'b'};

	return coll_cmp(cb, 2, da, 2, locale) > 0 &&
		coll_cmp(ca, 2, db, 2, locale) < 0;
}

/* qsort_arg() comparator: characters in the collation's order */
static int
char_cmp(const void *a, const void *b, void *arg)
{
	char		ca = *(const char *) a;
	char		cb = *(const char *) b;
	int			c = coll_cmp(&ca, 1, &cb, 1, (pg_locale_t) arg);

	return c != 0 ? c : (int) (uint8) ca - (int) (uint8) cb;
}

/* A random ASCII character, letters and digits likelier */
static char
random_char(pg_prng_state *rng)
{
	static const char punct[] = " -_.@+,:/'&";
	uint32		r = pg_prng_uint32(rng) % 100;

	if (r < 55)
		return 'a' + pg_prng_uint32(rng) % 26;
	if (r < 70)
		return 'A' + pg_prng_uint32(rng) % 26;
	if (r < 85)
		return '0' + pg_prng_uint32(rng) % 10;
	if (r < 95)
		return punct[pg_prng_uint32(rng) % (sizeof(punct) - 1)];
	return 0x20 + pg_prng_uint32(rng) % 95;
}

/*
 * Does the hint order a and b as the collation does, wherever it says
 * anything?  The strings the hint calls unequal differ at the first level,
 * where no tie-break reaches.
 */
static bool
agrees(const BtlCollHint *hint, const char *a, int alen, const char *b,
	   int blen, pg_locale_t locale)
{
	int			h = btl_collhint_cmp(hint, a, alen, b, blen);

	return h == 0 || h == coll_cmp(a, alen, b, blen, locale);
}

/*
 * Check the hint against the collation: the fixed pairs, then random
 * strings, half of them a change of one character of the other (the
 * neighbours a search meets).  The first disagreement, or NULL.
 */
static const char *
check_hint(const BtlCollHint *hint, pg_locale_t locale)
{
	pg_prng_state rng;

	for (int i = 0; i < lengthof(check_pairs); i++)
	{
		const char *a = check_pairs[i][0];
		const char *b = check_pairs[i][1];

		if (!agrees(hint, a, strlen(a), b, strlen(b), locale))
			return psprintf("\"%s\" and \"%s\"", a, b);
	}
	pg_prng_seed(&rng, UINT64CONST(0x62746c6179));
	for (int i = 0; i < CHECK_PAIRS; i++)
	{
		char		a[CHECK_MAXLEN + 1];
		char		b[CHECK_MAXLEN + 1];
		int			alen = pg_prng_uint32(&rng) % (CHECK_MAXLEN + 1);
		int			blen;

		for (int k = 0; k < alen; k++)
			a[k] = random_char(&rng);
		if (alen > 0 && pg_prng_bool(&rng))
		{
			memcpy(b, a, alen);
			blen = alen;
			b[pg_prng_uint32(&rng) % alen] = random_char(&rng);
			if (pg_prng_bool(&rng))
				blen = pg_prng_uint32(&rng) % (alen + 1);
		}
		else
		{
			blen = pg_prng_uint32(&rng) % (CHECK_MAXLEN + 1);
			for (int k = 0; k < blen; k++)
				b[k] = random_char(&rng);
		}
		if (!agrees(hint, a, alen, b, blen, locale))
			return psprintf("\"%.*s\" and \"%.*s\"", alen, a, blen, b);
	}
	return NULL;
}

/* Work the ranks of a hint out (the file header gives the rules) */
static void
make_ranks(BtlCollHint *hint, pg_locale_t locale)
{
	char		order[128];
	int			n = 0;
	int			rank = 0;

	memset(hint->rank, BTL_HINT_UNKNOWN, sizeof(hint->rank));
	for (int c = 1; c < 128; c++)
	{
		if (ignored((char) c, locale))
			hint->rank[c] = BTL_HINT_IGNORED;
		else
			order[n++] = (char) c;
	}
	qsort_arg(order, n, sizeof(char), char_cmp, locale);
	for (int k = 0; k < n; k++)
	{
		if (k == 0 || !first_level_equal(order[k - 1], order[k], locale))
			rank++;
		hint->rank[(uint8) order[k]] = (uint8) rank;
	}
}

/*
 * For tests (btlayout.debug_collation_hint_scramble): the ranks turned
 * upside down, so that the hint orders nearly every pair of strings
 * wrongly, and used unchecked
 */
static void
scramble_ranks(BtlCollHint *hint)
{
	for (int c = 1; c < 128; c++)
		if (hint->rank[c] != BTL_HINT_IGNORED)
			hint->rank[c] = (uint8) (BTL_HINT_UNKNOWN - hint->rank[c]);
}

/*
 * The hint of a collation (locale: its pg_locale_t), worked out on first
 * use; NULL if hints are off or the collation's is not usable.  Called
 * when a search key is prepared, before any page is locked: working one
 * out calls the collation, which may raise an error.
 */
BtlCollHint *
btl_collhint_of(Oid collation, pg_locale_t locale)
{
	bool		scrambled = btl_debug_collation_hint_scramble;
	HintEntry  *e = NULL;
	const char *disagreement;

	if (!btl_collation_hints)
		return NULL;
	for (int i = 0; i < nhints; i++)
		if (hints[i]->hint.collation == collation &&
			hints[i]->locale == locale &&
			hints[i]->scrambled == scrambled)
		{
			e = hints[i];
			return e->hint.usable ? &e->hint : NULL;
		}

	if (nhints == maxhints)
	{
		maxhints = Max(4, maxhints * 2);
		hints = hints == NULL ?
			MemoryContextAlloc(TopMemoryContext, maxhints * sizeof(HintEntry *)) :
			repalloc(hints, maxhints * sizeof(HintEntry *));
	}
	e = MemoryContextAllocZero(TopMemoryContext, sizeof(HintEntry));
	e->locale = locale;
	e->scrambled = scrambled;
	e->hint.collation = collation;
	make_ranks(&e->hint, locale);
	if (scrambled)
	{
		scramble_ranks(&e->hint);
		disagreement = NULL;
	}
	else
		disagreement = check_hint(&e->hint, locale);
	e->hint.usable = disagreement == NULL;
	if (disagreement != NULL)
		elog(DEBUG1, "btlayout: collation %u has no hint: the collation orders %s otherwise",
			 collation, disagreement);
	hints[nhints++] = e;
	return e->hint.usable ? &e->hint : NULL;
}

/*
 * Count a hinted search's proof (held: the collation agreed), and give the
 * hint up if too many failed.  A plain per-backend store.
 */
void
btl_collhint_proof(BtlCollHint *hint, bool held)
{
	hint->proofs++;
	if (held)
		return;
	hint->failures++;
	if (hint->proofs >= GIVE_UP_AFTER &&
		hint->failures * GIVE_UP_RATIO > hint->proofs)
	{
		hint->usable = false;
		elog(DEBUG1, "btlayout: the hint of collation %u is given up: %llu of %llu proofs failed",
			 hint->collation, (unsigned long long) hint->failures,
			 (unsigned long long) hint->proofs);
	}
}
