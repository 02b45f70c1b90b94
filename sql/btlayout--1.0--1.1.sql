/* btlayout--1.0--1.1.sql */

\echo Use "ALTER EXTENSION btlayout UPDATE TO '1.1'" to load this file. \quit

/*
 * 1.1 was the step that brought the operator families in line with the
 * server's btree families after a pg_upgrade (18's skip support
 * functions).  That step is now btlayout--1.5--1.6.sql, the last of every
 * update path, so that an installation of any older version gets it; this
 * one changes nothing.
 */
