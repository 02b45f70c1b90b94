/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Index scans: positioning on the first item with our own search
 *	  (search.c), then nbtree's own code for everything after.
 *
 * A scan's first call does what nbtree's _bt_first() does, with our
 * descent and in-page search: it has nbtree preprocess the scan keys
 * (_bt_preprocess_keys), chooses the keys that bound the start of the scan
 * and builds an insertion key from them by nbtree's rules, descends to the
 * leaf, finds the start offset, and reads the matching items of that page
 * into so->currPos exactly as nbtree's _bt_readpage() would (through
 * nbtree's _bt_checkkeys).  From there on the scan state is nbtree's, so
 * nbtree's _bt_next() steps through the items and pages, and everything that
 * works on that state works unchanged: mark and restore, kill_prior_tuple,
 * index-only scans (so->currTuples), backward scans, array keys
 * (_bt_start_array_keys / _bt_advance_array_keys).
 *
 * Parallel scans are left entirely to nbtree (btgettuple/btgetbitmap): the
 * first page of a parallel scan is chosen through the shared scan state by
 * functions of nbtree's we cannot call, and parallel scans are range scans,
 * where the descent is a small part of the work.
 *
 * Locking, as in nbtree: the leaf page is read-locked while its items are
 * read into currPos, then unlocked, and unpinned too when the scan's
 * snapshot is an MVCC snapshot, the index is WAL-logged and no index tuples
 * are returned (so VACUUM is not held up by an idle cursor).
 *
 * src/scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/relscan.h"
#include "compare.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/predicate.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/* A new leaf page is being read: nothing killed or marked on it yet */
static void
start_page_state(BTScanOpaque so, ScanDirection dir)
{
	so->currPos.moreLeft = ScanDirectionIsBackward(dir);
	so->currPos.moreRight = ScanDirectionIsForward(dir);
	so->numKilled = 0;
	so->markItemIndex = -1;
}

/* Remember one heap TID of the page, and its index tuple if wanted */
static void
save_item(BTScanOpaque so, int itemIndex, OffsetNumber offnum,
		  ItemPointer heapTid, IndexTuple itup, int *tupleOffset)
{
	BTScanPosItem *item = &so->currPos.items[itemIndex];

	item->heapTid = *heapTid;
	item->indexOffset = offnum;
	if (so->currTuples == NULL)
		return;

	/* The TIDs of one posting list share its base tuple */
	if (*tupleOffset < 0)
	{
		Size		size = BTreeTupleIsPosting(itup) ?
		MAXALIGN(BTreeTupleGetPostingOffset(itup)) :
		MAXALIGN(IndexTupleSize(itup));
		IndexTuple	copy = (IndexTuple) (so->currTuples + so->currPos.nextTupleOffset);

		memcpy(copy, itup, size);
		if (BTreeTupleIsPosting(itup))
		{
			copy->t_info &= ~INDEX_SIZE_MASK;
			copy->t_info |= size;
		}
		*tupleOffset = so->currPos.nextTupleOffset;
		so->currPos.nextTupleOffset += size;
	}
	item->tupleOffset = *tupleOffset;
}

/*
 * Save the matching heap TIDs of one tuple, from itemIndex upwards
 * (forward) or from itemIndex - 1 downwards (backward), and return the next
 * itemIndex.  The TIDs of a posting list go in heap TID order in the
 * direction the scan returns them, so a backward scan returns them in
 * ascending order too (as nbtree does; _bt_killitems relies on it).
 */
static int
save_tuple(BTScanOpaque so, int itemIndex, OffsetNumber offnum,
		   IndexTuple itup, ScanDirection dir)
{
	int			ntids = BTreeTupleIsPosting(itup) ? BTreeTupleGetNPosting(itup) : 1;
	int			step = ScanDirectionIsForward(dir) ? 1 : -1;
	int			first = ScanDirectionIsForward(dir) ? itemIndex : itemIndex - 1;
	int			tupleOffset = -1;
	int			i;

	for (i = 0; i < ntids; i++)
		save_item(so, first + i * step, offnum,
				  BTreeTupleIsPosting(itup) ? BTreeTupleGetPostingN(itup, i) : &itup->t_tid,
				  itup, &tupleOffset);

	return itemIndex + ntids * step;
}

/*
 * Read the items of the locked leaf page in so->currPos.buf that pass the
 * scan's keys, from offnum in the scan's direction, into so->currPos.
 * Returns whether there is at least one.  This is nbtree's _bt_readpage()
 * for scans that are not parallel.
 */
static bool
read_leaf_page(IndexScanDesc scan, ScanDirection dir, OffsetNumber offnum)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	Page		page = BufferGetPage(so->currPos.buf);
	BTPageOpaque opaque = BTPageGetOpaque(page);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			indnatts = IndexRelationGetNumberOfAttributes(rel);
	bool		continuescan = true;
	int			itemIndex;

	so->currPos.currPage = BufferGetBlockNumber(so->currPos.buf);
	so->currPos.lsn = BufferGetLSNAtomic(so->currPos.buf);
	so->currPos.nextPage = opaque->btpo_next;
	so->currPos.nextTupleOffset = 0;

	if (ScanDirectionIsForward(dir))
	{
		itemIndex = 0;
		for (offnum = Max(offnum, minoff); offnum <= maxoff; offnum++)
		{
			ItemId		iid = PageGetItemId(page, offnum);
			IndexTuple	itup;

			if (scan->ignore_killed_tuples && ItemIdIsDead(iid))
				continue;
			itup = (IndexTuple) PageGetItem(page, iid);
			if (_bt_checkkeys(scan, itup, indnatts, dir, &continuescan))
				itemIndex = save_tuple(so, itemIndex, offnum, itup, dir);
			if (!continuescan)
				break;
		}

		/* The high key can tell that the page to the right has no matches */
		if (continuescan && !P_RIGHTMOST(opaque))
		{
			IndexTuple	hikey = (IndexTuple) PageGetItem(page, PageGetItemId(page, P_HIKEY));

			_bt_checkkeys(scan, hikey, BTreeTupleGetNAtts(hikey, rel), dir,
						  &continuescan);
		}
		if (!continuescan)
			so->currPos.moreRight = false;

		so->currPos.firstItem = 0;
		so->currPos.lastItem = itemIndex - 1;
		so->currPos.itemIndex = 0;
	}
	else
	{
		itemIndex = MaxTIDsPerBTreePage;
		for (offnum = Min(offnum, maxoff); offnum >= minoff; offnum--)
		{
			ItemId		iid = PageGetItemId(page, offnum);
			IndexTuple	itup;
			bool		alive = true;

			/*
			 * A killed tuple is skipped, except the page's first, whose keys
			 * can still tell that the page to the left has no matches.
			 */
			if (scan->ignore_killed_tuples && ItemIdIsDead(iid))
			{
				if (offnum > minoff)
					continue;
				alive = false;
			}
			itup = (IndexTuple) PageGetItem(page, iid);
			if (_bt_checkkeys(scan, itup, indnatts, dir, &continuescan) && alive)
				itemIndex = save_tuple(so, itemIndex, offnum, itup, dir);
			if (!continuescan)
			{
				so->currPos.moreLeft = false;
				break;
			}
		}

		so->currPos.firstItem = itemIndex;
		so->currPos.lastItem = MaxTIDsPerBTreePage - 1;
		so->currPos.itemIndex = MaxTIDsPerBTreePage - 1;
	}

	return so->currPos.firstItem <= so->currPos.lastItem;
}

/* Publish the current item to the executor */
static void
return_current_item(IndexScanDesc scan)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	BTScanPosItem *item = &so->currPos.items[so->currPos.itemIndex];

	scan->xs_heaptid = item->heapTid;
	if (scan->xs_want_itup)
		scan->xs_itup = (IndexTuple) (so->currTuples + item->tupleOffset);
}

/*
 * The scan is on the locked leaf page in buf: read it from offnum, or step
 * on to the next page with matches if it has none.
 */
static bool
read_first_page(IndexScanDesc scan, ScanDirection dir, Buffer buf,
				OffsetNumber offnum)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;

	so->currPos.buf = buf;
	start_page_state(so, dir);

	if (!read_leaf_page(scan, dir, offnum))
	{
		/*
		 * The state says the page's items are used up, so nbtree's
		 * _bt_next() steps to the next page (the buffer must be pinned and
		 * unlocked for that) and returns its first item.
		 */
		_bt_unlockbuf(rel, buf);
		return _bt_next(scan, dir);
	}

	_bt_unlockbuf(rel, buf);
	if (IsMVCCSnapshot(scan->xs_snapshot) && RelationNeedsWAL(rel) &&
		!scan->xs_want_itup)
	{
		ReleaseBuffer(buf);
		so->currPos.buf = InvalidBuffer;
	}
	return_current_item(scan);
	return true;
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

	buf = btl_get_endpoint(rel, 0, ScanDirectionIsBackward(dir),
						   scan->xs_snapshot);
	if (!BufferIsValid(buf))
	{
		/* An empty index: nothing finer than the relation to lock */
		PredicateLockRelation(rel, scan->xs_snapshot);
		BTScanPosInvalidate(so->currPos);
		return false;
	}
	PredicateLockPage(rel, BufferGetBlockNumber(buf), scan->xs_snapshot);
	page = BufferGetPage(buf);

	return read_first_page(scan, dir, buf,
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
			/* Only a next attribute right after this one can continue */
			if (cur == NULL || cur->sk_attno != curattr + 1)
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
 * The first item of a scan that is not parallel: nbtree's _bt_first()
 * with our search.
 */
static bool
scan_first(IndexScanDesc scan, ScanDirection dir)
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
	pgstat_count_index_scan(rel);

	_bt_preprocess_keys(scan);
	if (!so->qual_ok)
		return false;

	nkeys = choose_start_keys(so, dir, startKeys, notnullkeys, &strat_total);
	if (nkeys == 0)
		return first_at_endpoint(scan, dir);
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
	inskey.pivotsearch = false;
	inskey.scantid = NULL;
	inskey.keysz = nkeys;
	btl_prepare_search_key(rel, &inskey, &key);

	buf = btl_search(rel, &key, scan->xs_snapshot);
	if (!BufferIsValid(buf) && IsolationIsSerializable())
	{
		/*
		 * An empty index: lock the relation, then look again, since an
		 * insertion may have come in between.
		 */
		PredicateLockRelation(rel, scan->xs_snapshot);
		buf = btl_search(rel, &key, scan->xs_snapshot);
	}
	if (!BufferIsValid(buf))
	{
		BTScanPosInvalidate(so->currPos);
		return false;
	}
	PredicateLockPage(rel, BufferGetBlockNumber(buf), scan->xs_snapshot);

	offnum = btl_binsrch(rel, &key, buf);
	if (goback)
		offnum = OffsetNumberPrev(offnum);

	return read_first_page(scan, dir, buf, offnum);
}

/*
 * amgettuple
 */
bool
btlayout_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	bool		res;

	if (scan->parallel_scan != NULL)
		return btgettuple(scan, dir);

	scan->xs_recheck = false;

	/* Array keys start on the first call, when the direction is known */
	if (so->numArrayKeys && !BTScanPosIsValid(so->currPos))
	{
		if (so->numArrayKeys < 0)
			return false;		/* an array key can match nothing */
		_bt_start_array_keys(scan, dir);
	}

	do
	{
		if (!BTScanPosIsValid(so->currPos))
			res = scan_first(scan, dir);
		else
		{
			/* Remember the tuple the executor found dead, for _bt_killitems */
			if (scan->kill_prior_tuple)
			{
				if (so->killedItems == NULL)
					so->killedItems = (int *)
						palloc(MaxTIDsPerBTreePage * sizeof(int));
				if (so->numKilled < MaxTIDsPerBTreePage)
					so->killedItems[so->numKilled++] = so->currPos.itemIndex;
			}
			res = _bt_next(scan, dir);
		}
	} while (!res && so->numArrayKeys && _bt_advance_array_keys(scan, dir));

	return res;
}

/*
 * amgetbitmap
 */
int64
btlayout_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	int64		ntids = 0;

	if (scan->parallel_scan != NULL)
		return btgetbitmap(scan, tbm);

	if (so->numArrayKeys)
	{
		if (so->numArrayKeys < 0)
			return 0;
		_bt_start_array_keys(scan, ForwardScanDirection);
	}

	do
	{
		if (scan_first(scan, ForwardScanDirection))
		{
			tbm_add_tuples(tbm, &scan->xs_heaptid, 1, false);
			ntids++;

			/* The rest of this page's items, then the next pages' */
			for (;;)
			{
				if (++so->currPos.itemIndex > so->currPos.lastItem)
				{
					if (!_bt_next(scan, ForwardScanDirection))
						break;
				}
				tbm_add_tuples(tbm, &so->currPos.items[so->currPos.itemIndex].heapTid,
							   1, false);
				ntids++;
			}
		}
	} while (so->numArrayKeys && _bt_advance_array_keys(scan, ForwardScanDirection));

	return ntids;
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
