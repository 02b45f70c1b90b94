/* btlayout--1.5--1.6.sql: nothing since 1.7 */

\echo Use "ALTER EXTENSION btlayout UPDATE TO '1.6'" to load this file. \quit

/*
 * 1.6 brought the operator families in line with the server's btree
 * families as the last step of every update path; 1.7 moved that step to
 * btlayout--1.6--1.7.sql, still the last step, so that there is one copy
 * of it.  An update to 1.6 alone changes nothing then: 1.6's library
 * serves 1.5's definitions.
 */
