/*-------------------------------------------------------------------------
 *
 * bincmp_test.c
 *	  Unit test of the compare core (src/bincmp.c) against a plain byte
 *	  loop, at every instruction set this machine has.
 *
 * For every length 0-300 and some beyond 4 kB, and at every level:
 *   - equal strings, and a difference at every position, both ways, with
 *     the byte pairs that catch signed or word-order mistakes (0x7f/0x80,
 *     0x00/0xff, 0x20/0x21);
 *   - every pair of alignments 0-63 of the two inputs, equal and with a
 *     difference (its position and byte pair varying over the pairs);
 *   - strings with embedded zeros and spaces, and random bytes;
 *   - btl_str_cmp/btl_str_eq on strings of different lengths, one a prefix
 *     of the other or not.
 * Each input ends right before a PROT_NONE page or starts right after one
 * (at alignment 0 both, in turn; at alignment k that many bytes away), so
 * that a read outside it crashes the test.
 *
 * Prints "bincmp_test: N checks, M failed (levels ...)" and exits non-zero
 * on failure.
 *
 * test/bincmp_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "bincmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_LEN		10000
#define MAX_ALIGN	64

static long checks;
static long failures;
static BtlIsa level;

/* A region of data pages between two inaccessible pages */
typedef struct Guarded
{
	unsigned char *lo;			/* first byte after the leading guard */
	unsigned char *hi;			/* first byte of the trailing guard */
} Guarded;

static Guarded
guarded_alloc(size_t bytes)
{
	size_t		page = (size_t) sysconf(_SC_PAGESIZE);
	size_t		data = (bytes + page - 1) / page * page;
	unsigned char *base = mmap(NULL, data + 2 * page, PROT_READ | PROT_WRITE,
							   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	Guarded		g;

	if (base == MAP_FAILED ||
		mprotect(base, page, PROT_NONE) != 0 ||
		mprotect(base + page + data, page, PROT_NONE) != 0)
	{
		perror("bincmp_test: mmap");
		exit(2);
	}
	g.lo = base + page;
	g.hi = base + page + data;
	return g;
}

static Guarded ga;
static Guarded gb;

static int
ref_cmp(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t		i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int
sign(int v)
{
	return (v > 0) - (v < 0);
}

static void
check(bool ok, const char *what, size_t n, size_t pos)
{
	checks++;
	if (!ok)
	{
		failures++;
		if (failures <= 20)
			printf("FAILED: %s: level %s, length %zu, position %zu\n",
				   what, btl_isa_name(level), n, pos);
	}
}

/* Compare a and b (n bytes) with the core and the reference, both ways */
static void
compare_both(const unsigned char *a, const unsigned char *b, size_t n, size_t pos)
{
	int			expect = ref_cmp(a, b, n);

	check(sign(btl_bytes_cmp(a, b, n)) == expect, "btl_bytes_cmp", n, pos);
	check(sign(btl_bytes_cmp(b, a, n)) == -expect, "btl_bytes_cmp reversed", n, pos);
	check(btl_bytes_eq(a, b, n) == (expect == 0), "btl_bytes_eq", n, pos);
}

/*
 * Place copies of src (n bytes) in both regions, a at alignment ia and b at
 * ib from the start (after_guard) or ending at the trailing guard, differing
 * from b at pos (if pos < n) with bytes x in a and y in b.
 */
static void
run_case(const unsigned char *src, size_t n, size_t ia, size_t ib,
		 bool after_guard, size_t pos, unsigned char x, unsigned char y)
{
	unsigned char *a = after_guard ? ga.lo + ia : ga.hi - n - ia;
	unsigned char *b = after_guard ? gb.lo + ib : gb.hi - n - ib;

	memcpy(a, src, n);
	memcpy(b, src, n);
	if (pos < n)
	{
		a[pos] = x;
		b[pos] = y;
	}
	compare_both(a, b, n, pos);
}

static const unsigned char pairs[][2] = {
	{0x7f, 0x80}, {0x00, 0xff}, {0x20, 0x21}, {0x00, 0x01}, {0xfe, 0xff}
};

static void
test_length(size_t n, const unsigned char *src)
{
	size_t		pos;
	size_t		ia;
	size_t		ib;
	int			p;
	int			side;

	/* A difference at every position, each byte pair, aligned inputs */
	for (pos = 0; pos <= n; pos++)
		for (p = 0; p < (int) lengthof(pairs); p++)
			for (side = 0; side < 2; side++)
				run_case(src, n, 0, 0, side, pos, pairs[p][0], pairs[p][1]);

	/*
	 * Every pair of alignments, equal and with a difference at a position
	 * and byte pair that move on from one pair of alignments to the next
	 */
	for (ia = 0; ia < MAX_ALIGN; ia++)
		for (ib = 0; ib < MAX_ALIGN; ib++)
		{
			size_t		k = ia * MAX_ALIGN + ib;

			p = (int) (k % lengthof(pairs));
			side = (int) (k & 1);
			run_case(src, n, ia, ib, side, n, 0, 0);
			run_case(src, n, ia, ib, side, k % (n + 1), pairs[p][1], pairs[p][0]);
		}
}

/* Strings of different lengths through btl_str_cmp / btl_str_eq */
static void
test_strings(const unsigned char *src)
{
	size_t		la;
	size_t		lb;

	for (la = 0; la <= 70; la++)
		for (lb = 0; lb <= 70; lb++)
		{
			unsigned char *a = ga.hi - la;
			unsigned char *b = gb.hi - lb;
			size_t		m = Min(la, lb);
			int			expect;

			memcpy(a, src, la);
			memcpy(b, src, lb);
			if (la == 33 && lb > 20)
				b[20] ^= 0x80;	/* not a prefix */
			expect = ref_cmp(a, b, m);
			if (expect == 0)
				expect = (la > lb) - (la < lb);
			check(sign(btl_str_cmp(a, la, b, lb)) == expect, "btl_str_cmp", la, lb);
			check(btl_str_eq(a, la, b, lb) == (expect == 0), "btl_str_eq", la, lb);
		}
}

int
main(void)
{
	static unsigned char random_src[MAX_LEN + 1];
	static unsigned char text_src[MAX_LEN + 1];
	static const size_t long_lengths[] = {1000, 4095, 4096, 4097, 8191, MAX_LEN};
	char		levels[64] = "";
	int			l;
	size_t		i;

	srandom(20261122);
	for (i = 0; i <= MAX_LEN; i++)
	{
		random_src[i] = (unsigned char) random();
		/* text-like: letters, spaces, embedded zeros, bytes above 0x7f */
		text_src[i] = "ab c\0xyz\x80\xff  0"[random() % 15];
	}
	ga = guarded_alloc(MAX_LEN + MAX_ALIGN);
	gb = guarded_alloc(MAX_LEN + MAX_ALIGN);

	for (l = 0; l <= (int) btl_isa_best(); l++)
	{
		level = (BtlIsa) l;
		btl_isa_set(level);
		if (btl_isa_current() != level)
			check(false, "btl_isa_set did not take", 0, 0);
		strcat(levels, l ? " " : "");
		strcat(levels, btl_isa_name(level));

		for (i = 0; i <= 300; i++)
		{
			test_length(i, random_src);
			test_length(i, text_src);
		}
		for (i = 0; i < lengthof(long_lengths); i++)
		{
			size_t		n = long_lengths[i];
			size_t		pos;

			/* every alignment, and differences near both ends and strided */
			for (pos = 0; pos < n; pos += (pos < 80 || pos > n - 80) ? 1 : 97)
				run_case(random_src, n, pos % MAX_ALIGN, 0, pos & 1, pos, 0x7f, 0x80);
			run_case(text_src, n, 3, 5, true, n, 0, 0);
			run_case(text_src, n, 5, 3, false, n, 0, 0);
		}
		test_strings(text_src);
	}

	printf("bincmp_test: %ld checks, %ld failed (levels: %s)\n",
		   checks, failures, levels);
	return failures ? 1 : 0;
}
