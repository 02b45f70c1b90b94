/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Index scans, what every version shares: positioning on the first
 *	  item with our own search (search.c), then nbtree's own code for
 *	  everything after.
 *
 * A scan's first call does what nbtree's _bt_first() does, with our
 * descent and in-page search: with the scan keys preprocessed by nbtree
 * (_bt_preprocess_keys), it chooses the keys that bound the start of the
 * scan and builds an insertion key from them by nbtree's rules, descends
 * to the leaf, finds the start offset, and has the version's page reader
 * (scan_pg15.c for 15 and 16, scan_pg18.c for 17-19) read the matching items
 * of that page into so->currPos exactly as nbtree's _bt_readpage() would,
 * through nbtree's _bt_checkkeys().  From there on the scan state is
 * nbtree's, so nbtree's _bt_next() steps through the items and pages, and
 * everything that works on that state works unchanged: mark and restore,
 * kill_prior_tuple, index-only scans (so->currTuples), backward scans.
 * A scan with array keys starts once for each primitive scan, positioned
 * by the arrays' current elements.  Which scans are ours and which are
 * handed to nbtree whole (parallel scans on every version; from 17 on also
 * scans with row comparisons) is for the version's file to say; so are the
 * amgettuple and amgetbitmap drivers, which run the primitive scans.
 *
 * Locking, as in nbtree: the leaf page is read-locked while its items are
 * read into currPos, then unlocked, and unpinned too when nbtree's rules
 * for the version allow it (an MVCC snapshot, a WAL-logged index, no index
 * tuples returned: VACUUM is not held up by an idle cursor).
 *
 * src/scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "scan.h"
#include "access/relscan.h"
#include "access/xact.h"
#include "compare.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/predicate.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/* A new leaf page is being read: nothing killed or marked on it yet */
void
btl_scan_start_page(BTScanOpaque so, ScanDirection dir)
{
	so->currPos.moreLeft = ScanDirectionIsBackward(dir);
	so->currPos.moreRight = ScanDirectionIsForward(dir);
	so->numKilled = 0;
	so->markItemIndex = -1;
}

/*
 * Save the heap TIDs of a posting list tuple, from itemIndex upwards
 * (forward) or from itemIndex - 1 downwards (backward), and return the next
 * itemIndex; btl_scan_save_tuple() (scan.h) for any tuple.  The TIDs go in
 * heap TID order in the direction the scan returns them, so a backward
 * scan returns them in ascending order too (as nbtree does; _bt_killitems
 * relies on it).  They share one copy of the posting list's base tuple,
 * whose size is set to the base's.
 */
int
btl_scan_save_posting(BTScanOpaque so, int itemIndex, OffsetNumber offnum,
					  IndexTuple itup, ScanDirection dir)
{
	int			ntids = BTreeTupleGetNPosting(itup);
	int			step = ScanDirectionIsForward(dir) ? 1 : -1;
	int			first = ScanDirectionIsForward(dir) ? itemIndex : itemIndex - 1;
	int			tupleOffset = 0;

	if (so->currTuples != NULL)
	{
		Size		size = MAXALIGN(BTreeTupleGetPostingOffset(itup));
		IndexTuple	copy = (IndexTuple) (so->currTuples + so->currPos.nextTupleOffset);

		memcpy(copy, itup, size);
		copy->t_info &= ~INDEX_SIZE_MASK;
		copy->t_info |= size;
		tupleOffset = so->currPos.nextTupleOffset;
		so->currPos.nextTupleOffset += size;
	}
	for (int i = 0; i < ntids; i++)
	{
		BTScanPosItem *item = &so->currPos.items[first + i * step];

		item->heapTid = *BTreeTupleGetPostingN(itup, i);
		item->indexOffset = offnum;
		item->tupleOffset = tupleOffset;
	}

	return itemIndex + ntids * step;
}

/* Publish the current item to the executor */
void
btl_scan_return_item(IndexScanDesc scan)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	BTScanPosItem *item = &so->currPos.items[so->currPos.itemIndex];

	scan->xs_heaptid = item->heapTid;
	if (scan->xs_want_itup)
		scan->xs_itup = (IndexTuple) (so->currTuples + item->tupleOffset);
}

/*
 * Step a positioned scan on, as btgettuple() does: remember the item the
 * executor found dead (for _bt_killitems(), when the scan leaves the page),
 * then _bt_next().  The same on every version.
 */
bool
btl_scan_next(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (scan->kill_prior_tuple)
	{
		if (so->killedItems == NULL)
			so->killedItems = (int *)
				palloc(MaxTIDsPerBTreePage * sizeof(int));
		if (so->numKilled < MaxTIDsPerBTreePage)
			so->killedItems[so->numKilled++] = so->currPos.itemIndex;
	}
	return _bt_next(scan, dir);
}

/*
 * A scan without keys that bound its start reads from one end of the
 * leaf level.
 */
static bool
first_at_endpoint(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	Buffer		buf;
	Page		page;

	btl_count_descent(scan);
	buf = btl_get_endpoint(rel, 0, ScanDirectionIsBackward(dir),
						   scan->xs_snapshot);
	if (!BufferIsValid(buf) && IsolationIsSerializable())
	{
		/*
		 * An empty index: nothing finer than the relation to lock.  An
		 * insertion may have made the first leaf since we looked, with no
		 * lock of ours for it to see: look again once the relation is
		 * locked (nbtree's _bt_endpoint() does the same since its fix of
		 * 2026, backpatched to 14).
		 */
		PredicateLockRelation(rel, scan->xs_snapshot);
		buf = btl_get_endpoint(rel, 0, ScanDirectionIsBackward(dir),
							   scan->xs_snapshot);
	}
	if (!BufferIsValid(buf))
	{
		BTScanPosInvalidate(so->currPos);
		return false;
	}
	page = BufferGetPage(buf);

	return btl_scan_read_first_page(scan, dir, buf,
						   ScanDirectionIsForward(dir) ?
						   P_FIRSTDATAKEY(BTPageGetOpaque(page)) :
						   PageGetMaxOffsetNumber(page));
}

/*
 * Choose, from the preprocessed keys, those that bound where the scan
 * starts, as nbtree does: for each attribute in order, an = key, or the
 * inequality facing the scan's direction; stop after the first attribute
 * without an = key.  An attribute with only an inequality facing the other
 * way still bounds the start away from its NULLs, so it gets a NOT NULL
 * key of its own (in notnullkeys).  Returns the number of keys chosen and
 * sets *strat_total to the strategy of the combined bound.
 *
 * The = key of an array is its current element, so each primitive scan of
 * a scan with arrays starts at the elements _bt_checkkeys() advanced the
 * arrays to; 18's skip arrays are = keys with marks of their own, read
 * here as _bt_first() reads them.  These rules must stay symmetric with
 * _bt_checkkeys()'s rule for ending a primitive scan, which decides when
 * to schedule the next one (nbtree's _bt_first() says why): that is why
 * they are nbtree's, rule for rule.
 */
static int
choose_start_keys(BTScanOpaque so, ScanDirection dir, ScanKey *startKeys,
				  ScanKeyData *notnullkeys, StrategyNumber *strat_total)
{
	int			nkeys = 0;
	AttrNumber	curattr = 1;
	ScanKey		chosen = NULL;
	ScanKey		impliesNN = NULL;
	int			i;

	*strat_total = BTEqualStrategyNumber;

	for (i = 0;; i++)
	{
		ScanKey		cur = (i < so->numberOfKeys) ? &so->keyData[i] : NULL;

		if (cur == NULL || cur->sk_attno != curattr)
		{
			/*
			 * A skip array (18) at its lowest element (backward: highest)
			 * bounds the start by the array's own bound on curattr, if it
			 * has one, and away from NULLs, if it has no NULL element.
			 */
			if (chosen != NULL && (chosen->sk_flags & BTL_SK_SKIP_END))
			{
				ScanKey		skipkey = chosen;
				bool		null_elem;

				chosen = btl_skip_array_bound(so, skipkey, dir, &null_elem);
				if (!null_elem)
					impliesNN = skipkey;
			}

			/* Done with curattr: did it give a start key? */
			if (chosen == NULL && impliesNN != NULL &&
				((impliesNN->sk_flags & SK_BT_NULLS_FIRST) ?
				 ScanDirectionIsForward(dir) : ScanDirectionIsBackward(dir)))
			{
				chosen = &notnullkeys[nkeys];
				ScanKeyEntryInitialize(chosen,
									   SK_SEARCHNOTNULL | SK_ISNULL |
									   (impliesNN->sk_flags & (SK_BT_DESC | SK_BT_NULLS_FIRST)),
									   curattr,
									   (impliesNN->sk_flags & SK_BT_NULLS_FIRST) ?
									   BTGreaterStrategyNumber : BTLessStrategyNumber,
									   InvalidOid, InvalidOid, InvalidOid, (Datum) 0);
			}
			if (chosen == NULL)
				break;
			startKeys[nkeys++] = chosen;

			if (chosen->sk_strategy != BTEqualStrategyNumber)
			{
				*strat_total = chosen->sk_strategy;
				if (chosen->sk_strategy == BTGreaterStrategyNumber ||
					chosen->sk_strategy == BTLessStrategyNumber)
					break;
			}

			/*
			 * A skip array's element marked as "just past the value" (an
			 * opclass without skip support) starts the scan after it, and
			 * no later attribute can narrow that.
			 */
			if (chosen->sk_flags & BTL_SK_SKIP_PAST)
			{
				*strat_total = ScanDirectionIsForward(dir) ?
					BTGreaterStrategyNumber : BTLessStrategyNumber;
				break;
			}
			/* Only a next attribute right after this one can continue */
			if (cur == NULL || cur->sk_attno != curattr + 1)
				break;
			if (BTL_START_KEYS_REQUIRED_ONLY &&
				!(cur->sk_flags & (SK_BT_REQFWD | SK_BT_REQBKWD)))
				break;
			curattr = cur->sk_attno;
			chosen = NULL;
			impliesNN = NULL;
		}

		switch (cur->sk_strategy)
		{
			case BTLessStrategyNumber:
			case BTLessEqualStrategyNumber:
				if (chosen == NULL)
				{
					if (ScanDirectionIsBackward(dir))
						chosen = cur;
					else
						impliesNN = cur;
				}
				break;
			case BTEqualStrategyNumber:
				chosen = cur;
				break;
			case BTGreaterEqualStrategyNumber:
			case BTGreaterStrategyNumber:
				if (chosen == NULL)
				{
					if (ScanDirectionIsForward(dir))
						chosen = cur;
					else
						impliesNN = cur;
				}
				break;
		}
	}
	return nkeys;
}

/*
 * Turn the chosen start keys into the insertion key's scan keys: the
 * comparison function of the index's operator family for the key's types.
 * A row comparison contributes its members as far as they go on in index
 * order and in the same direction.  Returns the number of attributes, and
 * may relax *strat_total (a row comparison not used in full makes < into
 * <=, > into >=); returns -1 if the scan can match nothing.
 */
static int
build_insertion_keys(Relation rel, ScanKey *startKeys, int nkeys,
					 StrategyNumber *strat_total, ScanKeyData *inskeys)
{
	int			i;

	for (i = 0; i < nkeys; i++)
	{
		ScanKey		cur = startKeys[i];

		if (cur->sk_flags & SK_ROW_HEADER)
		{
			ScanKey		subkey = (ScanKey) DatumGetPointer(cur->sk_argument);
			bool		used_all = false;

			/* A NULL first member makes the comparison false for all rows */
			if (subkey->sk_flags & SK_ISNULL)
				return -1;
			memcpy(&inskeys[i], subkey, sizeof(ScanKeyData));
			if (i < nkeys - 1)
				continue;

			/* The last start key: later members may extend the bound */
			for (;;)
			{
				subkey++;
				if (subkey->sk_attno != nkeys + 1 ||
					subkey->sk_strategy != cur->sk_strategy ||
					(subkey->sk_flags & SK_ISNULL))
					break;
				memcpy(&inskeys[nkeys], subkey, sizeof(ScanKeyData));
				nkeys++;
				if (subkey->sk_flags & SK_ROW_END)
				{
					used_all = true;
					break;
				}
			}
			if (!used_all)
			{
				if (*strat_total == BTLessStrategyNumber)
					*strat_total = BTLessEqualStrategyNumber;
				else if (*strat_total == BTGreaterStrategyNumber)
					*strat_total = BTGreaterEqualStrategyNumber;
			}
			break;
		}

		if (cur->sk_subtype == rel->rd_opcintype[i] || cur->sk_subtype == InvalidOid)
			ScanKeyEntryInitializeWithInfo(&inskeys[i], cur->sk_flags,
										   cur->sk_attno, InvalidStrategy,
										   cur->sk_subtype, cur->sk_collation,
										   index_getprocinfo(rel, cur->sk_attno, BTORDER_PROC),
										   cur->sk_argument);
		else
		{
			RegProcedure cmp_proc = get_opfamily_proc(rel->rd_opfamily[i],
													  rel->rd_opcintype[i],
													  cur->sk_subtype,
													  BTORDER_PROC);

			if (!RegProcedureIsValid(cmp_proc))
				elog(ERROR, "missing support function %d(%u,%u) for attribute %d of index \"%s\"",
					 BTORDER_PROC, rel->rd_opcintype[i], cur->sk_subtype,
					 cur->sk_attno, RelationGetRelationName(rel));
			ScanKeyEntryInitialize(&inskeys[i], cur->sk_flags, cur->sk_attno,
								   InvalidStrategy, cur->sk_subtype,
								   cur->sk_collation, cmp_proc, cur->sk_argument);
		}
	}
	return nkeys;
}

/*
 * The first item of a scan, or of a primitive scan of a scan with arrays,
 * that is not parallel: nbtree's _bt_first() with our search.  The
 * version's driver (scan_pg15.c, scan_pg18.c) has set the arrays' elements.
 */
bool
btl_scan_first(IndexScanDesc scan, ScanDirection dir)
{
	Relation	rel = scan->indexRelation;
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	ScanKey		startKeys[INDEX_MAX_KEYS];
	ScanKeyData notnullkeys[INDEX_MAX_KEYS];
	BTScanInsertData inskey;
	BtlSearchKey key;
	StrategyNumber strat_total;
	bool		goback;
	int			nkeys;
	Buffer		buf;
	OffsetNumber offnum;

	Assert(!BTScanPosIsValid(so->currPos));
	btl_count_scan_start(scan);

	_bt_preprocess_keys(scan);
	if (!so->qual_ok)
		return false;

	nkeys = choose_start_keys(so, dir, startKeys, notnullkeys, &strat_total);
	if (nkeys == 0)
		return first_at_endpoint(scan, dir);
	btl_count_descent(scan);
	nkeys = build_insertion_keys(rel, startKeys, nkeys, &strat_total,
								 inskey.scankeys);
	if (nkeys < 0)
		return false;

	/*
	 * Where the scan starts: the first item > or >= the key (nextkey), then,
	 * for bounds from above, one item back (goback).
	 */
	switch (strat_total)
	{
		case BTLessStrategyNumber:
			inskey.nextkey = false;
			goback = true;
			break;
		case BTLessEqualStrategyNumber:
			inskey.nextkey = true;
			goback = true;
			break;
		case BTEqualStrategyNumber:
			inskey.nextkey = ScanDirectionIsBackward(dir);
			goback = ScanDirectionIsBackward(dir);
			break;
		case BTGreaterEqualStrategyNumber:
			inskey.nextkey = false;
			goback = false;
			break;
		case BTGreaterStrategyNumber:
			inskey.nextkey = true;
			goback = false;
			break;
		default:
			elog(ERROR, "unrecognized strat_total: %d", (int) strat_total);
	}

	_bt_metaversion(rel, &inskey.heapkeyspace, &inskey.allequalimage);
	inskey.anynullkeys = false;
	btl_insertkey_set_scan_direction(&inskey, goback);
	inskey.scantid = NULL;
	inskey.keysz = nkeys;
	btl_prepare_search_key(rel, &inskey, &key);

	buf = btl_search(rel, &key, scan->xs_snapshot, &offnum);
	if (!BufferIsValid(buf) && IsolationIsSerializable())
	{
		/*
		 * An empty index: lock the relation, then look again, since an
		 * insertion may have come in between.
		 */
		PredicateLockRelation(rel, scan->xs_snapshot);
		buf = btl_search(rel, &key, scan->xs_snapshot, &offnum);
	}
	if (!BufferIsValid(buf))
	{
		BTScanPosInvalidate(so->currPos);
		return false;
	}
	if (goback)
		offnum = OffsetNumberPrev(offnum);

	return btl_scan_read_first_page(scan, dir, buf, offnum);
}

/*
 * amrescan and amendscan: nbtree's, then the relayout of pages this
 * backend's lookups found stale in the index (relayout.c), once the scan
 * holds no page.
 */
void
btlayout_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
				ScanKey orderbys, int norderbys)
{
	btrescan(scan, scankey, nscankeys, orderbys, norderbys);
	btl_relayout_noted(scan->indexRelation);
}

void
btlayout_endscan(IndexScanDesc scan)
{
	Relation	index = scan->indexRelation;

	btendscan(scan);
	btl_relayout_noted(index);
}
