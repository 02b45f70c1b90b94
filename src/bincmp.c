/*-------------------------------------------------------------------------
 *
 * bincmp.c
 *	  The compare core's long path (more than 16 bytes), one function per
 *	  instruction set, and the choice among them.
 *
 * Every function compares n > 16 bytes and returns memcmp()'s sign.  Each
 * compares 8-byte words, or two vectors per step (their equal-byte vectors
 * ANDed, so that one mask checks both), from the start while more than that
 * is left, then the last ones, ending at byte n (overlapping bytes already
 * known equal), so none reads outside the inputs.  The first differing byte
 * is found from the mask of equal bytes (vectors) or by byte-swapping the
 * two words to big-endian (portable).
 *
 * The SIMD functions are compiled for their instruction set with target
 * attributes; the rest of the extension stays baseline x86-64, and they run
 * only once the CPU (cpuid) and, for AVX2, the OS (xgetbv: the YMM state is
 * saved on context switches) have been found to support them.  The
 * "sse4.2" level uses SSE2 compare-and-mask instructions, three to five
 * times as fast as SSE4.2's string instruction pcmpestri from 65 bytes on
 * (16 bytes per pcmpestri, whose latency the loop waits for); it is named
 * for the CPUs it needs, those being the x86-64-v2 baseline.
 *
 * src/bincmp.c
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include "bincmp.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define BTL_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* The portable long path: 8-byte words */
static int
bytes_cmp_portable(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t		i = 0;
	uint64		x;
	uint64		y;

	for (;;)
	{
		if (i + 8 > n)
			i = n - 8;			/* the last word, ending at n */
		x = btl_load64(a + i);
		y = btl_load64(b + i);
		if (x != y)
		{
			x = pg_ntoh64(x);
			y = pg_ntoh64(y);
			return x < y ? -1 : 1;
		}
		if (i + 8 == n)
			return 0;
		i += 8;
	}
}

static bool
bytes_eq_portable(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t		i;

	for (i = 0; i + 8 < n; i += 8)
		if (btl_load64(a + i) != btl_load64(b + i))
			return false;
	return btl_load64(a + n - 8) == btl_load64(b + n - 8);
}

#ifdef BTL_X86

/*
 * The sign of the first difference between a and b, given a mask of their
 * differing bytes (bit k set: a[k] != b[k])
 */
static inline int
first_difference(const unsigned char *a, const unsigned char *b, uint64 ne_mask)
{
	int			k = __builtin_ctzll(ne_mask);

	return a[k] < b[k] ? -1 : 1;
}

#define SSE_TARGET __attribute__((target("sse4.2")))
#define AVX_TARGET __attribute__((target("avx2")))

#define ALL16	0xFFFFu
#define ALL32	0xFFFFFFFFu

/* Equal bytes of 16 bytes as a vector, and as a mask */
SSE_TARGET static inline __m128i
eq_vec16(const unsigned char *a, const unsigned char *b)
{
	return _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *) a),
						  _mm_loadu_si128((const __m128i *) b));
}

SSE_TARGET static inline uint32
eq_mask16(const unsigned char *a, const unsigned char *b)
{
	return (uint32) _mm_movemask_epi8(eq_vec16(a, b));
}

/* The mask of the bytes equal in both of two such vectors */
SSE_TARGET static inline uint32
both_mask16(__m128i e0, __m128i e1)
{
	return (uint32) _mm_movemask_epi8(_mm_and_si128(e0, e1));
}

/* The same for 32 bytes */
AVX_TARGET static inline __m256i
eq_vec32(const unsigned char *a, const unsigned char *b)
{
	return _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *) a),
							 _mm256_loadu_si256((const __m256i *) b));
}

AVX_TARGET static inline uint32
eq_mask32(const unsigned char *a, const unsigned char *b)
{
	return (uint32) _mm256_movemask_epi8(eq_vec32(a, b));
}

AVX_TARGET static inline uint32
both_mask32(__m256i e0, __m256i e1)
{
	return (uint32) _mm256_movemask_epi8(_mm256_and_si256(e0, e1));
}

/* 16 <= n <= 32 bytes: the first 16 and the last 16 */
SSE_TARGET static inline int
cmp_upto32(const unsigned char *a, const unsigned char *b, size_t n)
{
	uint32		m = eq_mask16(a, b);

	if (m != ALL16)
		return first_difference(a, b, ~m & ALL16);
	m = eq_mask16(a + n - 16, b + n - 16);
	return m != ALL16 ? first_difference(a + n - 16, b + n - 16, ~m & ALL16) : 0;
}

/*
 * SSE: 32 bytes (two vectors, their equal bytes ANDed into one mask) per
 * step while more than 32 are left, then the last 32, overlapping bytes
 * known to be equal.
 */
SSE_TARGET static int
bytes_cmp_sse42(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t		i;

	for (i = 0; i + 32 < n; i += 32)
	{
		__m128i		e0 = eq_vec16(a + i, b + i);
		__m128i		e1 = eq_vec16(a + i + 16, b + i + 16);

		if (both_mask16(e0, e1) != ALL16)
		{
			uint32		m = (uint32) _mm_movemask_epi8(e0) |
				((uint32) _mm_movemask_epi8(e1) << 16);

			return first_difference(a + i, b + i, ~m);
		}
	}
	return i == 0 ? cmp_upto32(a, b, n) : cmp_upto32(a + n - 32, b + n - 32, 32);
}

SSE_TARGET static bool
bytes_eq_sse42(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t		i;

	for (i = 0; i + 32 < n; i += 32)
		if (both_mask16(eq_vec16(a + i, b + i),
						eq_vec16(a + i + 16, b + i + 16)) != ALL16)
			return false;
	if (i > 0)
	{
		a += n - 32;
		b += n - 32;
		n = 32;
	}
	return both_mask16(eq_vec16(a, b),
					   eq_vec16(a + n - 16, b + n - 16)) == ALL16;
}

/* 32 <= n <= 64 bytes: the first 32 and the last 32 */
AVX_TARGET static inline int
cmp_upto64(const unsigned char *a, const unsigned char *b, size_t n)
{
	uint32		m = eq_mask32(a, b);

	if (m != ALL32)
		return first_difference(a, b, ~m & ALL32);
	m = eq_mask32(a + n - 32, b + n - 32);
	return m != ALL32 ? first_difference(a + n - 32, b + n - 32, ~m & ALL32) : 0;
}

/* AVX2: the same with 32-byte vectors; up to 32 bytes as SSE does */
AVX_TARGET static int
bytes_cmp_avx2(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t		i;

	if (n <= 32)
		return cmp_upto32(a, b, n);
	for (i = 0; i + 64 < n; i += 64)
	{
		__m256i		e0 = eq_vec32(a + i, b + i);
		__m256i		e1 = eq_vec32(a + i + 32, b + i + 32);

		if (both_mask32(e0, e1) != ALL32)
		{
			uint64		m = (uint64) (uint32) _mm256_movemask_epi8(e0) |
				((uint64) (uint32) _mm256_movemask_epi8(e1) << 32);

			return first_difference(a + i, b + i, ~m);
		}
	}
	return i == 0 ? cmp_upto64(a, b, n) : cmp_upto64(a + n - 64, b + n - 64, 64);
}

AVX_TARGET static bool
bytes_eq_avx2(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t		i;

	if (n <= 32)
		return both_mask16(eq_vec16(a, b),
						   eq_vec16(a + n - 16, b + n - 16)) == ALL16;
	for (i = 0; i + 64 < n; i += 64)
		if (both_mask32(eq_vec32(a + i, b + i),
						eq_vec32(a + i + 32, b + i + 32)) != ALL32)
			return false;
	if (i > 0)
	{
		a += n - 64;
		b += n - 64;
		n = 64;
	}
	return both_mask32(eq_vec32(a, b),
					   eq_vec32(a + n - 32, b + n - 32)) == ALL32;
}

/* What the CPU and the OS support */
static BtlIsa
detect_isa(void)
{
	unsigned int eax,
				ebx,
				ecx,
				edx;
	bool		avx_usable;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || (ecx & bit_SSE4_2) == 0)
		return BTL_ISA_PORTABLE;

	/* AVX, and XGETBV to ask the OS whether it saves the AVX state */
	avx_usable = (ecx & bit_AVX) != 0 && (ecx & bit_OSXSAVE) != 0;
	if (avx_usable && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) &&
		(ebx & bit_AVX2) != 0)
	{
		uint32		xcr0_lo;
		uint32		xcr0_hi;

		/* XCR0: the OS saves the SSE (bit 1) and AVX (bit 2) state */
		__asm__ volatile ("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
		if ((xcr0_lo & 0x6) == 0x6)
			return BTL_ISA_AVX2;
	}
	return BTL_ISA_SSE42;
}

#else

static BtlIsa
detect_isa(void)
{
	return BTL_ISA_PORTABLE;
}

#endif							/* BTL_X86 */

BtlBytesCmpFn btl_bytes_cmp_long = bytes_cmp_portable;
BtlBytesEqFn btl_bytes_eq_long = bytes_eq_portable;

static BtlIsa isa_current = BTL_ISA_PORTABLE;

BtlIsa
btl_isa_best(void)
{
	static int	best = -1;

	if (best < 0)
		best = (int) detect_isa();
	return (BtlIsa) best;
}

/*
 * Use the long path of this level; the caller has checked that it is not
 * above btl_isa_best().
 */
void
btl_isa_set(BtlIsa level)
{
	switch (level)
	{
#ifdef BTL_X86
		case BTL_ISA_AVX2:
			btl_bytes_cmp_long = bytes_cmp_avx2;
			btl_bytes_eq_long = bytes_eq_avx2;
			break;
		case BTL_ISA_SSE42:
			btl_bytes_cmp_long = bytes_cmp_sse42;
			btl_bytes_eq_long = bytes_eq_sse42;
			break;
#endif
		default:
			level = BTL_ISA_PORTABLE;
			btl_bytes_cmp_long = bytes_cmp_portable;
			btl_bytes_eq_long = bytes_eq_portable;
			break;
	}
	isa_current = level;
}

BtlIsa
btl_isa_current(void)
{
	return isa_current;
}

const char *
btl_isa_name(BtlIsa level)
{
	switch (level)
	{
		case BTL_ISA_AVX2:
			return "avx2";
		case BTL_ISA_SSE42:
			return "sse4.2";
		case BTL_ISA_PORTABLE:
			break;
	}
	return "portable";
}
