/*-------------------------------------------------------------------------
 *
 * validate.c
 *	  Operator class validator (amvalidate) for btlayout.
 *
 * A btlayout operator family must satisfy everything a btree family does
 * (btlayout's scans and writes are nbtree's, which read the same strategy
 * and support numbers), and one thing more: the "<" and ">" operators of
 * every type must also be ordering operators of some btree family.  Two
 * places rely on that: the CREATE INDEX sort in build.c orders tuples with
 * those operators, and the planner only knows an index that is not btree's
 * to be ordered if its "<" maps to a btree family (plancat.c).  Without it
 * an index would build and scan, but never deliver ORDER BY.
 *
 * Problems are reported as INFO messages, all of them, and the result is
 * false if there was any, as the server's own validators do.
 *
 * src/validate.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#define BTL_AMNAME "btlayout"

/* All five strategies: what every type pair of a family must have */
#define BTL_ALL_STRATEGIES \
	((1 << BTLessStrategyNumber) | (1 << BTLessEqualStrategyNumber) | \
	 (1 << BTEqualStrategyNumber) | (1 << BTGreaterEqualStrategyNumber) | \
	 (1 << BTGreaterStrategyNumber))

static bool check_support_function(const char *opfamilyname,
								   Form_pg_amproc procform);
static bool check_operator(const char *opfamilyname, Form_pg_amop oprform);
static bool check_btree_ordering(const char *opfamilyname, Oid opfamilyoid,
								 Oid type, int16 strategy);

/*
 * Check one support function: a known number and the signature nbtree
 * calls it with.
 */
static bool
check_support_function(const char *opfamilyname, Form_pg_amproc procform)
{
	bool		ok;

	switch (procform->amprocnum)
	{
		case BTORDER_PROC:
			ok = check_amproc_signature(procform->amproc, INT4OID, true,
										2, 2, procform->amproclefttype,
										procform->amprocrighttype);
			break;
		case BTSORTSUPPORT_PROC:
			ok = check_amproc_signature(procform->amproc, VOIDOID, true,
										1, 1, INTERNALOID);
			break;
		case BTINRANGE_PROC:
			ok = check_amproc_signature(procform->amproc, BOOLOID, true,
										5, 5,
										procform->amproclefttype,
										procform->amproclefttype,
										procform->amprocrighttype,
										BOOLOID, BOOLOID);
			break;
		case BTEQUALIMAGE_PROC:
			ok = check_amproc_signature(procform->amproc, BOOLOID, true,
										1, 1, OIDOID);
			break;
		case BTOPTIONS_PROC:
			ok = check_amoptsproc_signature(procform->amproc);
			break;
#ifdef BTSKIPSUPPORT_PROC
			/* 18: skip support, which nbtree's skip scans use */
		case BTSKIPSUPPORT_PROC:
			ok = check_amproc_signature(procform->amproc, VOIDOID, true,
										1, 1, INTERNALOID);
			break;
#endif
		default:
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s contains function %s with invalid support number %d",
							opfamilyname, BTL_AMNAME,
							format_procedure(procform->amproc),
							procform->amprocnum)));
			return false;
	}

	if (!ok)
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s contains function %s with wrong signature for support number %d",
						opfamilyname, BTL_AMNAME,
						format_procedure(procform->amproc),
						procform->amprocnum)));
	return ok;
}

/*
 * Check one operator: a btree strategy, a search (not ordering) operator,
 * and a boolean binary signature.
 */
static bool
check_operator(const char *opfamilyname, Form_pg_amop oprform)
{
	bool		ok = true;

	if (oprform->amopstrategy < 1 ||
		oprform->amopstrategy > BTMaxStrategyNumber)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s contains operator %s with invalid strategy number %d",
						opfamilyname, BTL_AMNAME,
						format_operator(oprform->amopopr),
						oprform->amopstrategy)));
		ok = false;
	}

	if (oprform->amoppurpose != AMOP_SEARCH ||
		OidIsValid(oprform->amopsortfamily))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s contains invalid ORDER BY specification for operator %s",
						opfamilyname, BTL_AMNAME,
						format_operator(oprform->amopopr))));
		ok = false;
	}

	if (!check_amop_signature(oprform->amopopr, BOOLOID,
							  oprform->amoplefttype,
							  oprform->amoprighttype))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s contains operator %s with wrong signature",
						opfamilyname, BTL_AMNAME,
						format_operator(oprform->amopopr))));
		ok = false;
	}

	return ok;
}

/*
 * Check that the family's operator of the given strategy for "type op type"
 * is also that strategy's ordering operator in some btree family with the
 * same input type (see the header comment for why).
 */
static bool
check_btree_ordering(const char *opfamilyname, Oid opfamilyoid, Oid type,
					 int16 strategy)
{
	Oid			opr = get_opfamily_member(opfamilyoid, type, type, strategy);
	Oid			btfamily;
	Oid			btintype;
	int16		btstrategy;

	if (OidIsValid(opr) &&
		btl_ordering_op_properties(opr, &btfamily, &btintype, &btstrategy) &&
		btintype == type && btstrategy == strategy)
		return true;

	ereport(INFO,
			(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
			 errmsg("operator family \"%s\" of access method %s has no btree ordering operator for type %s",
					opfamilyname, BTL_AMNAME, format_type_be(type)),
			 errdetail("Its operator of strategy %d must also be that strategy's operator in a btree operator family.",
					   strategy)));
	return false;
}

/*
 * amvalidate.  Like the server's validators, some checks cover the whole
 * family and are repeated for each of its classes; they are cheap.
 */
bool
btlayout_validate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	HeapTuple	familytup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	char	   *opfamilyname;
	CatCList   *proclist;
	CatCList   *oprlist;
	List	   *grouplist;
	List	   *familytypes = NIL;
	bool		found_opclass_group = false;
	int			usefulgroups = 0;
	ListCell   *lc;
	int			i;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = pstrdup(NameStr(classform->opcname));
	ReleaseSysCache(classtup);

	familytup = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamilyoid));
	if (!HeapTupleIsValid(familytup))
		elog(ERROR, "cache lookup failed for operator family %u", opfamilyoid);
	opfamilyname = pstrdup(NameStr(((Form_pg_opfamily) GETSTRUCT(familytup))->opfname));
	ReleaseSysCache(familytup);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));

	for (i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform =
		(Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		result &= check_support_function(opfamilyname, procform);
	}

	for (i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform =
		(Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);

		result &= check_operator(opfamilyname, oprform);
	}

	/* Every type pair needs all five operators and a comparison function */
	grouplist = identify_opfamily_groups(oprlist, proclist);
	foreach(lc, grouplist)
	{
		OpFamilyOpFuncGroup *group = (OpFamilyOpFuncGroup *) lfirst(lc);

		/*
		 * An in_range function may name an offset type that is otherwise
		 * foreign to the family (datetime_ops has interval offsets): a group
		 * with nothing else does not stand for a pair of supported types.
		 */
		if (group->operatorset == 0 &&
			group->functionset == (1 << BTINRANGE_PROC))
			continue;

		usefulgroups++;
		if (group->lefttype == opcintype && group->righttype == opcintype)
			found_opclass_group = true;
		familytypes = list_append_unique_oid(familytypes, group->lefttype);
		familytypes = list_append_unique_oid(familytypes, group->righttype);

		if (group->operatorset != BTL_ALL_STRATEGIES)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s is missing operator(s) for types %s and %s",
							opfamilyname, BTL_AMNAME,
							format_type_be(group->lefttype),
							format_type_be(group->righttype))));
			result = false;
		}
		if ((group->functionset & (1 << BTORDER_PROC)) == 0)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator family \"%s\" of access method %s is missing support function for types %s and %s",
							opfamilyname, BTL_AMNAME,
							format_type_be(group->lefttype),
							format_type_be(group->righttype))));
			result = false;
		}
	}

	if (!found_opclass_group)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator class \"%s\" of access method %s is missing operator(s)",
						opclassname, BTL_AMNAME)));
		result = false;
	}
	else
	{
		result &= check_btree_ordering(opfamilyname, opfamilyoid, opcintype,
									   BTLessStrategyNumber);
		result &= check_btree_ordering(opfamilyname, opfamilyoid, opcintype,
									   BTGreaterStrategyNumber);
	}

	/*
	 * Missing cross-type operators are not fatal, but they keep the planner
	 * from deriving quals through equivalence classes; like btree, insist
	 * on a complete family.
	 */
	if (usefulgroups != list_length(familytypes) * list_length(familytypes))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator family \"%s\" of access method %s is missing cross-type operator(s)",
						opfamilyname, BTL_AMNAME)));
		result = false;
	}

	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);

	return result;
}
