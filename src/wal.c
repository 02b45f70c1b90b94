/*-------------------------------------------------------------------------
 *
 * wal.c
 *	  How a relayout is WAL-logged: btlayout's own WAL record when the
 *	  library is preloaded, a full-page image otherwise.
 *
 * A relayout moves tuple bodies and changes nothing else (page.c), so what
 * a standby or crash recovery needs to redo it is where each body went: the
 * record carries the page's new pd_upper and one 2-byte offset per line
 * pointer, about a tenth of a full-page image on a leaf of int4 keys, and
 * the redo moves the bodies there.  It does not replan the page: the record
 * says where the bodies go, so replay does not depend on the layout code of
 * the version of btlayout that replays it.  The redo checks the offsets
 * against the page before moving anything (btl_page_plan_valid) and stops
 * recovery with an error rather than write outside a body's room.
 *
 * The block is registered as a standard page, so the first change of a
 * page after a checkpoint still carries a full-page image (torn-page
 * protection is the server's, as for any record); a relayout soon after
 * the insert that broke the page's layout, the usual case for lookups and
 * VACUUM, pays only the record.
 *
 * Records of a custom resource manager can only be written and replayed by
 * a server that loaded its library at startup: the resource manager is
 * registered only from shared_preload_libraries, and every server replaying
 * this WAL (standbys, a restored base backup, crash recovery) must preload
 * btlayout too.  Without the preload, and with btlayout.wal_records off,
 * relayouts log full-page images as nbtree's own records do, which any
 * server replays.  To stop preloading btlayout, turn btlayout.wal_records
 * off first and let a checkpoint pass (and standbys replay past it).
 *
 * The record uses RM_EXPERIMENTAL_ID, the ID PostgreSQL sets aside for
 * extensions whose ID is not registered; a server can preload only one
 * library using it.
 *
 * src/wal.c
 *
 *-------------------------------------------------------------------------
 */
#include "btlayout.h"

#include "access/nbtxlog.h"
#include "access/rmgr.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogutils.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

#define BTL_RMGR_ID			RM_EXPERIMENTAL_ID
#define XLOG_BTL_RELAYOUT	0x00

/*
 * The block data of a relayout record: the page's new pd_upper, its line
 * pointer count, then each line pointer's new offset in offset number order
 * (nitems of them).
 */
typedef struct xl_btl_relayout
{
	uint16		upper;
	uint16		nitems;
	/* uint16 offsets[nitems] follow */
} xl_btl_relayout;

#define SizeOfBtlRelayout	(offsetof(xl_btl_relayout, nitems) + sizeof(uint16))

/* GUC btlayout.wal_records */
bool		btl_wal_records = true;

/* Set in the postmaster (and so in every backend) by a preload */
static bool btl_rmgr_registered = false;

static void btl_rmgr_redo(XLogReaderState *record);
static void btl_rmgr_desc(StringInfo buf, XLogReaderState *record);
static const char *btl_rmgr_identify(uint8 info);

static RmgrData btl_rmgr = {
	.rm_name = "btlayout",
	.rm_redo = btl_rmgr_redo,
	.rm_desc = btl_rmgr_desc,
	.rm_identify = btl_rmgr_identify,
	/* a btlayout page is an nbtree page: mask it as nbtree does */
	.rm_mask = btree_mask,
};

/*
 * Register the resource manager; from _PG_init, when the library is
 * preloaded (the server refuses a registration at any other time).
 */
void
btl_wal_register(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	RegisterCustomRmgr(BTL_RMGR_ID, &btl_rmgr);
	btl_rmgr_registered = true;
}

/* Does this server write btlayout's own relayout records? */
bool
btl_wal_uses_records(void)
{
	return btl_rmgr_registered && btl_wal_records;
}

/*
 * Log the relayout just applied to the page in buf (exclusively locked,
 * dirtied, inside the caller's critical section) by plan.
 */
void
btl_wal_log_relayout(Buffer buf, const BtlPagePlan *plan)
{
	xl_btl_relayout xlrec;
	XLogRecPtr	recptr;

	if (!btl_wal_uses_records())
	{
		log_newpage_buffer(buf, true);
		return;
	}

	xlrec.upper = plan->upper;
	xlrec.nitems = plan->maxoff;
	XLogBeginInsert();
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, (char *) &xlrec, SizeOfBtlRelayout);
	XLogRegisterBufData(0, (char *) &plan->offset[FirstOffsetNumber],
						plan->maxoff * sizeof(uint16));
	recptr = XLogInsert(BTL_RMGR_ID, XLOG_BTL_RELAYOUT);
	PageSetLSN(BufferGetPage(buf), recptr);
}

/* Redo: move the bodies where the record says */
static void
btl_rmgr_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	Buffer		buf;

	if (info != XLOG_BTL_RELAYOUT)
		elog(PANIC, "btlayout redo: unknown op code %u", info);

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);
		Size		len;
		char	   *data = XLogRecGetBlockData(record, 0, &len);
		xl_btl_relayout xlrec;
		BtlPagePlan plan;

		if (len < SizeOfBtlRelayout)
			elog(ERROR, "btlayout redo: relayout record too short");
		memcpy(&xlrec, data, SizeOfBtlRelayout);
		if (xlrec.nitems > MaxIndexTuplesPerPage ||
			len != SizeOfBtlRelayout + xlrec.nitems * sizeof(uint16) ||
			xlrec.nitems != PageGetMaxOffsetNumber(page))
			elog(ERROR, "btlayout redo: relayout record of %u items for a page of %u",
				 xlrec.nitems, (unsigned) PageGetMaxOffsetNumber(page));
		plan.maxoff = xlrec.nitems;
		plan.upper = xlrec.upper;
		memcpy(&plan.offset[FirstOffsetNumber], data + SizeOfBtlRelayout,
			   xlrec.nitems * sizeof(uint16));
		if (!btl_page_plan_valid(page, &plan))
			elog(ERROR, "btlayout redo: relayout record does not fit block %u",
				 BufferGetBlockNumber(buf));

		btl_page_apply(page, &plan);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
btl_rmgr_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	Size		len;
	char	   *data;
	xl_btl_relayout xlrec;

	if (info != XLOG_BTL_RELAYOUT)
		return;
	data = XLogRecGetBlockData(record, 0, &len);
	if (data == NULL || len < SizeOfBtlRelayout)
		return;
	memcpy(&xlrec, data, SizeOfBtlRelayout);
	appendStringInfo(buf, "items %u; upper %u", xlrec.nitems, xlrec.upper);
}

static const char *
btl_rmgr_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_BTL_RELAYOUT)
		return "RELAYOUT";
	return NULL;
}
