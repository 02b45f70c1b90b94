/*-------------------------------------------------------------------------
 *
 * cmpbench.c
 *	  Microbenchmark of the compare core (src/bincmp.c) against glibc's
 *	  memcmp() and against the server's text comparison, in a backend.
 *
 * btl_cmpbench(impl, len, iterations, contents) times iterations
 * comparisons of pairs of text values of len bytes, taken round robin from
 * a set of pairs, and returns the mean time per comparison in nanoseconds.
 * The pairs are either equal but for their last byte ('lastbyte': every
 * byte is read; 16 pairs, which stay in cache) or random bytes ('random':
 * the first byte differs almost always, either way; 1024 pairs, so that
 * the branch predictor cannot learn the signs).  The pairs are reached
 * through a volatile table so that no comparison can be hoisted out of the
 * loop, and every result is summed into a volatile sink.
 *
 * The implementations:
 *	core		bttextcmp through DirectFunctionCall2Coll under "C", as core
 *				btree calls it for every comparison
 *	varstr_cmp	varstr_cmp() under "C", the comparison without the function
 *				call
 *	memcmp		glibc's memcmp() over the shorter length, then the lengths
 *	portable, sse4.2, avx2
 *				btl_str_cmp() at that level of the compare core (NULL if
 *				this machine lacks it)
 *
 * bench/compare/cmpbench.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "bincmp.h"
#include "catalog/pg_collation_d.h"
#include "common/pg_prng.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/varlena.h"

#include "compat.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(btl_cmpbench);

/* Pairs of strings per measurement (powers of two) */
#define PAIRS_LASTBYTE	16
#define PAIRS_RANDOM	1024

typedef enum CmpImpl
{
	IMPL_CORE,
	IMPL_VARSTR_CMP,
	IMPL_MEMCMP,
	IMPL_CORE_LEVEL				/* btl_str_cmp at the level asked for */
} CmpImpl;

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static text *
new_text(int32 len)
{
	text	   *t = (text *) palloc(VARHDRSZ + len);

	SET_VARSIZE(t, VARHDRSZ + len);
	return t;
}

Datum
btl_cmpbench(PG_FUNCTION_ARGS)
{
	char	   *impl_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		len = PG_GETARG_INT32(1);
	int32		iterations = PG_GETARG_INT32(2);
	char	   *contents = text_to_cstring(PG_GETARG_TEXT_PP(3));
	bool		random_contents;
	CmpImpl		impl;
	BtlIsa		level = BTL_ISA_PORTABLE;
	BtlIsa		saved = btl_isa_current();
	int			npairs;
	text	   *volatile *va;
	text	   *volatile *vb;
	volatile int64 sink = 0;
	pg_prng_state prng;
	double		t0;
	double		t1;
	int			i;
	int			p;

	if (len < 1 || iterations < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("len and iterations must be positive")));
	if (strcmp(contents, "lastbyte") == 0)
		random_contents = false;
	else if (strcmp(contents, "random") == 0)
		random_contents = true;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown contents \"%s\"", contents),
				 errhint("Use \"lastbyte\" or \"random\".")));

	if (strcmp(impl_name, "core") == 0)
		impl = IMPL_CORE;
	else if (strcmp(impl_name, "varstr_cmp") == 0)
		impl = IMPL_VARSTR_CMP;
	else if (strcmp(impl_name, "memcmp") == 0)
		impl = IMPL_MEMCMP;
	else
	{
		int			l;

		impl = IMPL_CORE_LEVEL;
		for (l = BTL_ISA_PORTABLE; l <= BTL_ISA_AVX2; l++)
			if (strcmp(impl_name, btl_isa_name((BtlIsa) l)) == 0)
				break;
		if (l > BTL_ISA_AVX2)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown implementation \"%s\"", impl_name)));
		if (l > (int) btl_isa_best())
			PG_RETURN_NULL();
		level = (BtlIsa) l;
	}

	npairs = random_contents ? PAIRS_RANDOM : PAIRS_LASTBYTE;
	va = palloc(npairs * sizeof(text *));
	vb = palloc(npairs * sizeof(text *));
	pg_prng_seed(&prng, 20261122);
	for (p = 0; p < npairs; p++)
	{
		text	   *a = new_text(len);
		text	   *b = new_text(len);

		for (i = 0; i < len; i++)
		{
			if (random_contents)
			{
				VARDATA(a)[i] = (char) pg_prng_uint32(&prng);
				VARDATA(b)[i] = (char) pg_prng_uint32(&prng);
			}
			else
				VARDATA(a)[i] = VARDATA(b)[i] = 'a' + (i * 7 + p) % 26;
		}
		if (!random_contents)
			VARDATA(b)[len - 1]++;
		va[p] = a;
		vb[p] = b;
	}

	if (impl == IMPL_CORE_LEVEL)
		btl_isa_set(level);
	t0 = now_ns();
	switch (impl)
	{
		case IMPL_CORE:
			for (i = 0; i < iterations; i++)
				sink += DatumGetInt32(DirectFunctionCall2Coll(bttextcmp, C_COLLATION_OID,
															  PointerGetDatum(va[i & (npairs - 1)]),
															  PointerGetDatum(vb[i & (npairs - 1)])));
			break;
		case IMPL_VARSTR_CMP:
			for (i = 0; i < iterations; i++)
			{
				text	   *x = va[i & (npairs - 1)];
				text	   *y = vb[i & (npairs - 1)];

				sink += varstr_cmp(VARDATA_ANY(x), VARSIZE_ANY_EXHDR(x),
								   VARDATA_ANY(y), VARSIZE_ANY_EXHDR(y),
								   C_COLLATION_OID);
			}
			break;
		case IMPL_MEMCMP:
			for (i = 0; i < iterations; i++)
			{
				text	   *x = va[i & (npairs - 1)];
				text	   *y = vb[i & (npairs - 1)];
				size_t		lx = VARSIZE_ANY_EXHDR(x);
				size_t		ly = VARSIZE_ANY_EXHDR(y);
				int			r = memcmp(VARDATA_ANY(x), VARDATA_ANY(y), Min(lx, ly));

				sink += r != 0 ? r : (lx > ly) - (lx < ly);
			}
			break;
		case IMPL_CORE_LEVEL:
			for (i = 0; i < iterations; i++)
			{
				text	   *x = va[i & (npairs - 1)];
				text	   *y = vb[i & (npairs - 1)];

				sink += btl_str_cmp(VARDATA_ANY(x), VARSIZE_ANY_EXHDR(x),
									VARDATA_ANY(y), VARSIZE_ANY_EXHDR(y));
			}
			break;
	}
	t1 = now_ns();
	btl_isa_set(saved);

	PG_RETURN_FLOAT8((t1 - t0) / iterations);
}
