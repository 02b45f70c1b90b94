/*-------------------------------------------------------------------------
 *
 * bincmp.h
 *	  The compare core: three-way comparison and equality of byte strings,
 *	  as memcmp() orders them, for the BIN-collation operator classes and
 *	  the search path's inline string comparisons.
 *
 * Keys are mostly short, so the common case is inline and has no loop: up
 * to 16 bytes are compared with at most two overlapping word loads per
 * side, byte-swapped to big-endian so that an integer comparison gives the
 * byte order.  Longer strings go to an out-of-line function chosen once,
 * at load, for the best instruction set the CPU and the OS support (AVX2,
 * SSE4.2, or portable 8-byte words); btl_isa_set() selects a lower one (the
 * GUC btlayout.compare_isa, so that tests exercise every path).  No path
 * reads a byte outside [p, p + n): tails are compared with a last load that
 * ends exactly at n, overlapping what was compared already.
 *
 * This file and bincmp.c use nothing of the server but c.h, so that the
 * unit test (test/bincmp_test.c) runs them without a server.
 *
 * src/bincmp.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_BINCMP_H
#define BTLAYOUT_BINCMP_H

#include "c.h"
#include "port/pg_bswap.h"

/* Instruction sets of the long path, in increasing order */
typedef enum BtlIsa
{
	BTL_ISA_PORTABLE = 0,
	BTL_ISA_SSE42 = 1,
	BTL_ISA_AVX2 = 2
} BtlIsa;

extern BtlIsa btl_isa_best(void);
extern void btl_isa_set(BtlIsa level);
extern BtlIsa btl_isa_current(void);
extern const char *btl_isa_name(BtlIsa level);

/* The long path (n > 16) of the current level */
typedef int (*BtlBytesCmpFn) (const unsigned char *a, const unsigned char *b,
							  size_t n);
typedef bool (*BtlBytesEqFn) (const unsigned char *a, const unsigned char *b,
							  size_t n);
extern BtlBytesCmpFn btl_bytes_cmp_long;
extern BtlBytesEqFn btl_bytes_eq_long;

/* Longest length the inline path compares */
#define BTL_BYTES_SHORT		16

static inline uint64
btl_load64(const unsigned char *p)
{
	uint64		v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32
btl_load32(const unsigned char *p)
{
	uint32		v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The first n <= 16 bytes of a string as one or two big-endian integers
 * that compare as the bytes do against another string's of the same n.
 * Bytes may be counted twice (overlapping loads), which is harmless when
 * both sides are loaded alike.
 */
static inline int
btl_bytes_cmp_short(const unsigned char *a, const unsigned char *b, size_t n)
{
	if (n >= 8)
	{
		uint64		x = pg_ntoh64(btl_load64(a));
		uint64		y = pg_ntoh64(btl_load64(b));

		if (x == y)
		{
			x = pg_ntoh64(btl_load64(a + n - 8));
			y = pg_ntoh64(btl_load64(b + n - 8));
		}
		return (x > y) - (x < y);
	}
	if (n >= 4)
	{
		uint64		x = ((uint64) pg_ntoh32(btl_load32(a)) << 32) |
			pg_ntoh32(btl_load32(a + n - 4));
		uint64		y = ((uint64) pg_ntoh32(btl_load32(b)) << 32) |
			pg_ntoh32(btl_load32(b + n - 4));

		return (x > y) - (x < y);
	}
	if (n > 0)
	{
		uint32		x = (a[0] << 16) | (a[n >> 1] << 8) | a[n - 1];
		uint32		y = (b[0] << 16) | (b[n >> 1] << 8) | b[n - 1];

		return (x > y) - (x < y);
	}
	return 0;
}

static inline bool
btl_bytes_eq_short(const unsigned char *a, const unsigned char *b, size_t n)
{
	if (n >= 8)
		return ((btl_load64(a) ^ btl_load64(b)) |
				(btl_load64(a + n - 8) ^ btl_load64(b + n - 8))) == 0;
	if (n >= 4)
		return ((btl_load32(a) ^ btl_load32(b)) |
				(btl_load32(a + n - 4) ^ btl_load32(b + n - 4))) == 0;
	return btl_bytes_cmp_short(a, b, n) == 0;
}

/* Three-way comparison of n bytes: -1, 0 or 1, the sign of memcmp(a, b, n) */
static inline int
btl_bytes_cmp(const void *a, const void *b, size_t n)
{
	if (n <= BTL_BYTES_SHORT)
		return btl_bytes_cmp_short(a, b, n);
	return btl_bytes_cmp_long(a, b, n);
}

/* Equality of n bytes */
static inline bool
btl_bytes_eq(const void *a, const void *b, size_t n)
{
	if (n <= BTL_BYTES_SHORT)
		return btl_bytes_eq_short(a, b, n);
	return btl_bytes_eq_long(a, b, n);
}

/*
 * Strings: the bytes over the shorter length, then the shorter string
 * first (text under the "C" collation, bytea).
 */
static inline int
btl_str_cmp(const void *a, size_t la, const void *b, size_t lb)
{
	int			r = btl_bytes_cmp(a, b, Min(la, lb));

	return r != 0 ? r : (la > lb) - (la < lb);
}

static inline bool
btl_str_eq(const void *a, size_t la, const void *b, size_t lb)
{
	return la == lb && btl_bytes_eq(a, b, la);
}

#endif							/* BTLAYOUT_BINCMP_H */
