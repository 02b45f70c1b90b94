/*-------------------------------------------------------------------------
 *
 * cmpbench.c
 *	  Microbenchmark of the compare core (src/bincmp.c) against glibc's
 *	  memcmp() and against the server's text comparison, in a backend.
 *
 * Each measurement compares PAIRS different pairs of strings of one length,
 * equal but for their last byte (so every byte is read), round robin, and
 * returns the mean time per comparison.  The pairs are reached through a
 * volatile table so that no comparison can be hoisted out of the loop, and
 * every result is summed into a volatile sink.
 *
 * bench/compare/cmpbench.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "bincmp.h"
#include "catalog/pg_collation_d.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(btl_cmpbench);

#define PAIRS	16

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

Datum
btl_cmpbench(PG_FUNCTION_ARGS)
{
	char	   *impl = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		len = PG_GETARG_INT32(1);
	int32		iterations = PG_GETARG_INT32(2);
	text	   *a[PAIRS];
	text	   *b[PAIRS];
	text	   *volatile va[PAIRS];
	text	   *volatile vb[PAIRS];
	volatile int64 sink = 0;
	BtlIsa		saved = btl_isa_current();
	int			level = -1;
	double		t0;
	double		t1;
	int			i;
	int			p;

	if (len < 1 || iterations < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("len and iterations must be positive")));
	if (strcmp(impl, "portable") == 0)
		level = BTL_ISA_PORTABLE;
	else if (strcmp(impl, "sse4.2") == 0)
		level = BTL_ISA_SSE42;
	else if (strcmp(impl, "avx2") == 0)
		level = BTL_ISA_AVX2;
	else if (strcmp(impl, "core") != 0 && strcmp(impl, "memcmp") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown implementation \"%s\"", impl)));
	if (level > (int) btl_isa_best())
		PG_RETURN_NULL();

	for (p = 0; p < PAIRS; p++)
	{
		a[p] = (text *) palloc(VARHDRSZ + len);
		b[p] = (text *) palloc(VARHDRSZ + len);
		SET_VARSIZE(a[p], VARHDRSZ + len);
		SET_VARSIZE(b[p], VARHDRSZ + len);
		for (i = 0; i < len; i++)
			VARDATA(a[p])[i] = VARDATA(b[p])[i] = 'a' + (i * 7 + p) % 26;
		VARDATA(b[p])[len - 1]++;
		va[p] = a[p];
		vb[p] = b[p];
	}

	if (level >= 0)
		btl_isa_set((BtlIsa) level);
	t0 = now_ns();
	if (level >= 0)
	{
		for (i = 0; i < iterations; i++)
		{
			text	   *x = va[i % PAIRS];
			text	   *y = vb[i % PAIRS];

			sink += btl_str_cmp(VARDATA(x), VARSIZE(x) - VARHDRSZ,
								VARDATA(y), VARSIZE(y) - VARHDRSZ);
		}
	}
	else if (strcmp(impl, "memcmp") == 0)
	{
		for (i = 0; i < iterations; i++)
		{
			text	   *x = va[i % PAIRS];
			text	   *y = vb[i % PAIRS];
			size_t		lx = VARSIZE(x) - VARHDRSZ;
			size_t		ly = VARSIZE(y) - VARHDRSZ;
			int			r = memcmp(VARDATA(x), VARDATA(y), Min(lx, ly));

			sink += r != 0 ? r : (lx > ly) - (lx < ly);
		}
	}
	else
	{
		for (i = 0; i < iterations; i++)
			sink += DatumGetInt32(DirectFunctionCall2Coll(bttextcmp, C_COLLATION_OID,
														  PointerGetDatum(va[i % PAIRS]),
														  PointerGetDatum(vb[i % PAIRS])));
	}
	t1 = now_ns();
	btl_isa_set(saved);

	PG_RETURN_FLOAT8((t1 - t0) / iterations);
}
