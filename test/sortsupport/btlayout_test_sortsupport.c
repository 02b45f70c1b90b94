/*-------------------------------------------------------------------------
 *
 * btlayout_test_sortsupport.c
 *	  Test only: sort an array with the sort support of a btlayout operator
 *	  class, the way tuplesort sorts datums.
 *
 * PostgreSQL 15 asks an index access method's operator classes for sort
 * support only when the access method is btree, so the server never calls
 * btlayout's support function 2 (the BIN classes' sort support, with
 * abbreviated keys).  btlayout_test_sort() does what tuplesort would:
 * looks the function up in the class's family (get_opfamily_proc), lets
 * it fill a SortSupportData, converts each value to its abbreviated key,
 * consulting abbrev_abort at the same counts as tuplesort (10, 20, 40, ...
 * values) and going back to the original values if it says so, and sorts
 * with qsort_arg: ApplySortComparator on the keys, and for ties of
 * abbreviated keys ApplySortAbbrevFullComparator on the originals.
 *
 * It also checks what tuplesort relies on: a comparator is set, no
 * abbreviation is offered unless asked for, and an abbreviated key
 * converter comes with its full comparator and its abort function.
 *
 * test/sortsupport/btlayout_test_sortsupport.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/nbtree.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "funcapi.h"
#include "parser/parse_coerce.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/sortsupport.h"

#include "compat.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(btlayout_test_sort);

/* tuplesort's first abbrev_abort check, at this many values; then doubled */
#define TEST_ABBREV_FIRST_CHECK	10

/* A value to sort: its key (abbreviated or not) and the original */
typedef struct TestSortItem
{
	Datum		key;
	Datum		orig;
} TestSortItem;

/* As tuplesort's comparetup_datum, without NULLs */
static int
test_sort_cmp(const void *a, const void *b, void *arg)
{
	const TestSortItem *x = (const TestSortItem *) a;
	const TestSortItem *y = (const TestSortItem *) b;
	SortSupport ssup = (SortSupport) arg;
	int			result;

	result = ApplySortComparator(x->key, false, y->key, false, ssup);
	if (result == 0 && ssup->abbrev_converter != NULL)
		result = ApplySortAbbrevFullComparator(x->orig, false, y->orig, false,
											   ssup);
	return result;
}

/*
 * Give up abbreviation, as tuplesort's consider_abort_common does, and put
 * the originals back as keys of the values converted so far.
 */
static void
test_abort_abbrev(SortSupport ssup, TestSortItem *items, int n)
{
	int			i;

	ssup->comparator = ssup->abbrev_full_comparator;
	ssup->abbrev_converter = NULL;
	ssup->abbrev_abort = NULL;
	ssup->abbrev_full_comparator = NULL;
	for (i = 0; i < n; i++)
		items[i].key = items[i].orig;
}

Datum
btlayout_test_sort(PG_FUNCTION_ARGS)
{
	char	   *opclassname = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			collid = PG_GETARG_OID(1);
	ArrayType  *vals = PG_GETARG_ARRAYTYPE_P(2);
	bool		abbreviate = PG_GETARG_BOOL(3);
	bool		abort_checks = PG_GETARG_BOOL(4);
	Oid			elemtype = ARR_ELEMTYPE(vals);
	Oid			opclass;
	Oid			opfamily;
	Oid			opcintype;
	Oid			sortsupport;
	SortSupportData ssup;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;
	int64		abbrev_next = TEST_ABBREV_FIRST_CHECK;
	const char *abbrev_state;
	TestSortItem *items;
	TupleDesc	tupdesc;
	Datum		result[2];
	bool		result_nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	/* The operator class, its family and its sort support function */
	opclass = get_opclass_oid(get_index_am_oid("btlayout", false),
							  btl_qualified_name_list(opclassname), false);
	opfamily = get_opclass_family(opclass);
	opcintype = get_opclass_input_type(opclass);
	if (elemtype != opcintype && !IsBinaryCoercible(elemtype, opcintype))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("operator class \"%s\" of access method btlayout sorts type %s, not %s",
						opclassname, format_type_be(opcintype),
						format_type_be(elemtype))));
	sortsupport = get_opfamily_proc(opfamily, opcintype, opcintype,
									BTSORTSUPPORT_PROC);
	if (!OidIsValid(sortsupport))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("operator class \"%s\" of access method btlayout has no sort support function",
						opclassname)));

	if (ARR_NDIM(vals) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("only one-dimensional arrays can be sorted")));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(vals, elemtype, typlen, typbyval, typalign,
					  &elems, &nulls, &n);
	for (i = 0; i < n; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("array to sort must not contain NULLs")));

	/* Sort support, set up as tuplesort_begin_datum does */
	memset(&ssup, 0, sizeof(ssup));
	ssup.ssup_cxt = CurrentMemoryContext;
	ssup.ssup_collation = collid;
	ssup.ssup_reverse = false;
	ssup.ssup_nulls_first = false;
	ssup.abbreviate = abbreviate;
	OidFunctionCall1(sortsupport, PointerGetDatum(&ssup));

	if (ssup.comparator == NULL)
		elog(ERROR, "sort support function %u set no comparator", sortsupport);
	if (ssup.abbrev_converter != NULL &&
		(!abbreviate || ssup.abbrev_full_comparator == NULL ||
		 ssup.abbrev_abort == NULL))
		elog(ERROR, "sort support function %u set an abbreviated key converter %s",
			 sortsupport,
			 !abbreviate ? "though abbreviation was not requested" :
			 "without a full comparator or an abort function");

	if (!abbreviate)
		abbrev_state = "off";
	else if (ssup.abbrev_converter == NULL)
		abbrev_state = "declined";
	else
		abbrev_state = "kept";

	/* The keys, as tuplesort_putdatum makes them */
	items = palloc(sizeof(TestSortItem) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		items[i].orig = elems[i];
		items[i].key = elems[i];
		if (ssup.abbrev_converter == NULL)
			continue;
		if (abort_checks && i >= abbrev_next)
		{
			abbrev_next *= 2;
			if (ssup.abbrev_abort(i, &ssup))
			{
				test_abort_abbrev(&ssup, items, i);
				abbrev_state = "aborted";
				continue;
			}
		}
		items[i].key = ssup.abbrev_converter(elems[i], &ssup);
	}

	qsort_arg(items, n, sizeof(TestSortItem), test_sort_cmp, &ssup);

	for (i = 0; i < n; i++)
		elems[i] = items[i].orig;
	result[0] = PointerGetDatum(construct_array(elems, n, elemtype, typlen,
												typbyval, typalign));
	result[1] = CStringGetTextDatum(abbrev_state);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, result,
													  result_nulls)));
}
