/* test/sortsupport/btlayout_test_sortsupport--1.0.sql */

\echo Use "CREATE EXTENSION btlayout_test_sortsupport" to load this file. \quit

/*
 * btlayout_test_sort(opclass, coll, vals, abbreviate, abort_checks)
 *
 * Sorts the one-dimensional, NULL-free array vals with the sort support
 * (support function 2) of the btlayout operator class opclass, under
 * collation coll, the way tuplesort sorts datums: abbreviated keys when
 * abbreviate is true and the class offers them, with the class's
 * abbrev_abort consulted at 10, 20, 40, ... values unless abort_checks is
 * false, and the full comparator for ties of abbreviated keys.
 *
 * Returns the sorted array and what became of abbreviation:
 *   off       not requested
 *   declined  requested, but the class offers no abbreviated keys
 *   kept      used to the end
 *   aborted   given up when abbrev_abort said so
 */
CREATE FUNCTION btlayout_test_sort(opclass text, coll regcollation,
	vals anyarray, abbreviate bool, abort_checks bool DEFAULT true,
	OUT sorted anyarray, OUT abbrev text)
RETURNS record
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;
