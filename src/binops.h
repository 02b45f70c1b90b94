/*-------------------------------------------------------------------------
 *
 * binops.h
 *	  The BIN-collation operator classes (binops.c): what the build and
 *	  the search path need to know of them.
 *
 * src/binops.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTLAYOUT_BINOPS_H
#define BTLAYOUT_BINOPS_H

#include "fmgr.h"
#include "utils/relcache.h"

/* The comparison a BIN class's support function 1 makes */
typedef enum BtlBinKind
{
	BTL_BIN_NONE,				/* not one of ours */
	BTL_BIN_TEXT,				/* text_bin_ops: bytes, then length */
	BTL_BIN_BPCHAR,				/* bpchar_bin_ops: the same, without trailing spaces */
	BTL_BIN_BYTEA				/* bytea_bin_ops: bytes, then length */
} BtlBinKind;

extern BtlBinKind btl_bin_kind(PGFunction fn);
extern void btl_check_bin_collations(Relation index);

#endif							/* BTLAYOUT_BINOPS_H */
