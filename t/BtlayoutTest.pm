
# Copyright (c) btlayout authors
#
# What btlayout's TAP tests share: the settings that force each kind of scan,
# and a primary with a streaming standby.

package BtlayoutTest;

use strict;
use warnings;
use Exporter 'import';
use JSON::PP;
use PostgreSQL::Test::Cluster;

our @EXPORT = qw(%scan_settings @index_modes btl_primary_and_standby);

# Helpers for tests that check every btlayout index of a node (t/007-009);
# imported by name only, so that no test's own subroutines are shadowed
our @EXPORT_OK = qw(btl_databases btl_indexes btl_index_digest
  btl_leaf_digest btl_check_indexes btl_compare_with_heap btl_wait_replay);

# GUC settings forcing each kind of scan.  "seqscan" gives the reference
# answer from the heap; the others must read an index.
our %scan_settings = (
	seqscan => 'SET enable_indexscan = off; SET enable_indexonlyscan = off; '
	  . 'SET enable_bitmapscan = off;',
	indexscan => 'SET enable_seqscan = off; SET enable_bitmapscan = off; '
	  . 'SET enable_indexonlyscan = off;',
	indexonlyscan => 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
	bitmapscan => 'SET enable_seqscan = off; SET enable_indexscan = off; '
	  . 'SET enable_indexonlyscan = off;',);

# The index-reading kinds
our @index_modes = qw(indexscan indexonlyscan bitmapscan);

# A primary (streaming allowed, $conf added to its configuration, which the
# standby inherits) and a standby streaming from it through the physical
# replication slot standby_slot ($standby_conf added), both started;
# returns ($primary, $standby) once the standby uses its slot.  A server
# built without LZ4 (the wheel of 17) writes WAL uncompressed where $conf
# asks for lz4: pglz, the compression every server has, made
# t/007_replica_regress.pl, whose records all carry page images, take four
# times as long there (1,050 s against 260 s on the others).
sub btl_primary_and_standby
{
	my ($conf, $standby_conf) = @_;
	my $primary = PostgreSQL::Test::Cluster->new('primary');
	$conf =~ s/^(\s*wal_compression\s*=\s*)lz4\b/${1}off/m
	  if defined $conf && $primary->config_data('--configure') !~ /'--with-lz4'/;
	$primary->init(allows_streaming => 1);
	$primary->append_conf('postgresql.conf', $conf);
	$primary->start;
	$primary->safe_psql('postgres',
		q{SELECT pg_create_physical_replication_slot('standby_slot')});
	$primary->backup('base');

	my $standby = PostgreSQL::Test::Cluster->new('standby');
	$standby->init_from_backup($primary, 'base', has_streaming => 1);
	$standby->append_conf('postgresql.conf',
		"primary_slot_name = 'standby_slot'\n" . ($standby_conf // ''));
	$standby->start;
	$primary->poll_query_until('postgres',
		q{SELECT active FROM pg_replication_slots WHERE slot_name = 'standby_slot'})
	  or die 'the standby did not connect to its slot';
	return ($primary, $standby);
}

# Databases of a node that accept connections (template0 does not)
sub btl_databases
{
	my ($node) = @_;
	return split /\n/,
	  $node->safe_psql('postgres',
		'SELECT datname FROM pg_database WHERE datallowconn ORDER BY datname');
}

# The btlayout indexes (relkind 'i': not partitioned parents) of database
# $db, sorted by name, each a hash: name (regclass text), relname, table,
# valid, persistent (not unlogged or temporary), pred (partial index
# predicate or undef), and cols, one hash per column: expr (column name or
# expression), key (a key column, not INCLUDE), desc, nullsfirst, coll
# (regcollation text of the index column, or undef), lt and gt (the
# opclass's strategy 1 and 5 operators, as OPERATOR(schema.name)).
sub btl_indexes
{
	my ($node, $db) = @_;
	my $has_am = $node->safe_psql($db,
		q{SELECT count(*) FROM pg_am WHERE amname = 'btlayout'});
	return () unless $has_am;
	my $json = $node->safe_psql(
		$db, q{
SELECT json_build_object(
  'name', c.oid::regclass::text,
  'relname', c.relname,
  'table', i.indrelid::regclass::text,
  'valid', i.indisvalid AND i.indisready AND i.indislive,
  'persistent', c.relpersistence = 'p',
  'pred', pg_get_expr(i.indpred, i.indrelid, true),
  'cols', (SELECT json_agg(json_build_object(
             'expr', pg_get_indexdef(i.indexrelid, k, true),
             'key', k <= i.indnkeyatts,
             'desc', k <= i.indnkeyatts AND (i.indoption[k - 1] & 1) <> 0,
             'nullsfirst', k <= i.indnkeyatts AND (i.indoption[k - 1] & 2) <> 0,
             'coll', CASE WHEN k <= i.indnkeyatts AND i.indcollation[k - 1] <> 0
                          THEN i.indcollation[k - 1]::regcollation::text END,
             'lt', (SELECT format('OPERATOR(%I.%s)', n.nspname, o.oprname)
                    FROM pg_opclass oc
                    JOIN pg_amop ao ON ao.amopfamily = oc.opcfamily
                     AND ao.amoplefttype = oc.opcintype
                     AND ao.amoprighttype = oc.opcintype
                     AND ao.amopstrategy = 1
                    JOIN pg_operator o ON o.oid = ao.amopopr
                    JOIN pg_namespace n ON n.oid = o.oprnamespace
                    WHERE k <= i.indnkeyatts AND oc.oid = i.indclass[k - 1]),
             'gt', (SELECT format('OPERATOR(%I.%s)', n.nspname, o.oprname)
                    FROM pg_opclass oc
                    JOIN pg_amop ao ON ao.amopfamily = oc.opcfamily
                     AND ao.amoplefttype = oc.opcintype
                     AND ao.amoprighttype = oc.opcintype
                     AND ao.amopstrategy = 5
                    JOIN pg_operator o ON o.oid = ao.amopopr
                    JOIN pg_namespace n ON n.oid = o.oprnamespace
                    WHERE k <= i.indnkeyatts AND oc.oid = i.indclass[k - 1]))
           ORDER BY k)
           FROM generate_series(1, i.indnatts) k))
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam
WHERE am.amname = 'btlayout' AND c.relkind = 'i'
ORDER BY c.oid::regclass::text COLLATE "C"});
	return map { JSON::PP::decode_json($_) } grep { $_ ne '' } split /\n/,
	  $json;
}

# A digest of what index $ix (a hash from btl_indexes) holds, read in one
# of the ways of %scan_settings ($mode): the rows of its table that the
# index covers (its predicate), ordered by the index's keys (its
# operators, collations, directions and NULLS placement), so that an
# index scan returns them in index order without a sort.  Returns
# (digest, plan): the digest is "count:ordered:rows", where "ordered"
# digests the key values in the order delivered and "rows" (a sum of
# hashes) the multiset of key and INCLUDE values, and with $opts{ctid}
# ":rows" again with each row's heap TID (not for index-only scans); the
# plan is the EXPLAIN output.  "seqscan" sorts a heap scan: it gives the
# same digest as the index when ties in the keys have one text form, as
# in the tables of our tests.
sub btl_index_digest
{
	my ($node, $db, $ix, $mode, %opts) = @_;
	my (@order, @keys, @all);
	foreach my $c (@{ $ix->{cols} })
	{
		my $e = "($c->{expr})";
		push @all, $e;
		next unless $c->{key};
		push @keys, $e;
		my $op = $c->{desc} ? $c->{gt} : $c->{lt};
		push @order,
		  $e
		  . (defined $c->{coll} ? " COLLATE $c->{coll}" : '')
		  . (defined $op ? " USING $op" : ($c->{desc} ? ' DESC' : ''))
		  . ($c->{nullsfirst} ? ' NULLS FIRST' : ' NULLS LAST');
	}
	my $where = defined $ix->{pred} ? "WHERE $ix->{pred}" : '';
	my $inner = sprintf('SELECT ROW(%s)::text AS kt, ROW(%s)::text AS rt%s FROM ONLY %s %s ORDER BY %s',
		join(', ', @keys, 'NULL'), join(', ', @all, 'NULL'),
		$opts{ctid} ? ', ctid::text AS ct' : '',
		$ix->{table}, $where, join(', ', @order));
	my $query = "SELECT count(*) || ':' || coalesce(md5(string_agg(kt, E'\\n')), '-') || ':'"
	  . " || coalesce(sum(hashtextextended(rt, 0)), 0)"
	  . ($opts{ctid} ? " || ':' || coalesce(sum(hashtextextended(rt || ct, 0)), 0)" : '')
	  . " FROM ($inner) s";
	my $settings = 'SET max_parallel_workers_per_gather = 0; '
	  . $scan_settings{$mode}
	  . ($mode eq 'seqscan' ? '' : ' SET enable_sort = off;');
	my $out = $node->safe_psql($db,
		"$settings\nEXPLAIN (COSTS OFF) $inner;\nSELECT '#digest#'; $query;");
	my ($plan, $digest) = split /\n#digest#\n/, $out;
	return ($digest, $plan);
}

# A digest of the live leaf pages of index $ix (name) as pageinspect
# reads them, item by item in block and line pointer order, with every
# field but the LP_DEAD hint: equal on a standby that replayed the
# primary's WAL.  Needs the pageinspect extension in $db.
sub btl_leaf_digest
{
	my ($node, $db, $ix) = @_;
	my $lit = $ix;
	$lit =~ s/'/''/g;
	return $node->safe_psql(
		$db, qq{
WITH pages AS MATERIALIZED (
  SELECT b, p FROM generate_series(1,
           pg_relation_size('$lit'::regclass) / current_setting('block_size')::int - 1) b,
       LATERAL get_raw_page('$lit', b) p
  WHERE get_byte(p, 16) + 256 * get_byte(p, 17) = current_setting('block_size')::int - 16
    AND get_byte(p, current_setting('block_size')::int - 4) & 21 = 1)
SELECT count(DISTINCT b) || ':' || count(*) || ':' ||
       coalesce(md5(string_agg(concat_ws('/', b, i.itemoffset, i.ctid, i.itemlen,
                i.nulls, i.vars, i.data, i.htid, i.tids), E'\n'
                ORDER BY b, i.itemoffset)), '-')
FROM pages, LATERAL bt_page_items(p) i});
}

# btlayout_check(index, heapallindexed) on every valid btlayout index of
# $db: returns (number checked, list of "index: error" failures)
sub btl_check_indexes
{
	my ($node, $db, $heapallindexed) = @_;
	$heapallindexed = 1 unless defined $heapallindexed;
	my $hai = $heapallindexed ? 'true' : 'false';
	my ($ret, $stdout, $stderr) = $node->psql(
		$db, qq{
DO \$\$
DECLARE r record; n int := 0;
BEGIN
  IF NOT EXISTS (SELECT FROM pg_am WHERE amname = 'btlayout') THEN
    RAISE NOTICE 'btlcheck-count 0'; RETURN;
  END IF;
  FOR r IN SELECT c.oid, c.oid::regclass::text AS name
           FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           JOIN pg_am am ON am.oid = c.relam
           WHERE am.amname = 'btlayout' AND c.relkind = 'i' AND i.indisvalid
             AND c.relpersistence <> 't'
           ORDER BY 2
  LOOP
    BEGIN
      PERFORM btlayout_check(r.oid, $hai);
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'btlcheck-fail %: %', r.name, SQLERRM;
    END;
    n := n + 1;
  END LOOP;
  RAISE NOTICE 'btlcheck-count %', n;
END \$\$;});
	my @failures = $stderr =~ /btlcheck-fail (.*)/g;
	my ($count) = $stderr =~ /btlcheck-count (\d+)/;
	push @failures, "psql failed ($ret): $stderr" if $ret != 0 || !defined $count;
	return ($count // 0, @failures);
}

# Every valid btlayout index of $db read through the index (index scan
# with heap TIDs, and index-only scan) against a sorted heap scan.
# Returns (number of indexes, list of "index: what differs" problems); an
# index that the planner did not read for its own digest is a problem.
sub btl_compare_with_heap
{
	my ($node, $db) = @_;
	my ($n, @problems) = (0);
	foreach my $ix (grep { $_->{valid} } btl_indexes($node, $db))
	{
		$n++;
		my ($heap) = btl_index_digest($node, $db, $ix, 'seqscan', ctid => 1);
		(my $heap_noctid = $heap) =~ s/:[^:]*$//;
		foreach my $m ([ 'indexscan', 1 ], [ 'indexonlyscan', 0 ])
		{
			my ($mode, $ctid) = @$m;
			my ($got, $plan) = btl_index_digest($node, $db, $ix, $mode, ctid => $ctid);
			my $want = $ctid ? $heap : $heap_noctid;
			push @problems, "$ix->{name}: $mode plan does not read it: $plan"
			  unless $plan =~ /Index (Only )?Scan (Backward )?using \Q$ix->{relname}\E /
			  && $plan !~ /Sort/;
			push @problems, "$ix->{name}: $mode gives $got, the heap $want"
			  unless $got eq $want;
		}
	}
	return ($n, @problems);
}

# Wait until $standby has replayed everything $primary has inserted;
# returns the LSN it waited for (the primary may have inserted more since)
sub btl_wait_replay
{
	my ($primary, $standby) = @_;
	my $lsn = $primary->lsn('insert');
	$primary->wait_for_catchup($standby, 'replay', $lsn);
	return $lsn;
}

1;
