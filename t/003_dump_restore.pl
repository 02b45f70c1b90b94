
# Copyright (c) btlayout authors

# pg_dump and pg_restore of btlayout indexes.
#
# A database with btlayout indexes of every shape (options, unique,
# partial, expression, multi-column DESC NULLS FIRST with INCLUDE,
# non-default operator class and collation, the BIN classes of text, bpchar
# and bytea) is dumped in custom format and
# restored into a new database, with two parallel jobs so that the indexes
# are rebuilt by concurrent CREATE INDEX commands on populated tables.  The
# restored indexes must be the same indexes (definition, options, access
# method), give the same answers, and keep enforcing uniqueness.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest;
use IPC::Run;

# No autovacuum: the restored table is never analyzed, so the plans read
# below come from its size alone, not from whether an auto-analyze got to
# it first, nor from the random sample one would take (ANALYZE reads 30,000
# of its 40,000 rows)
my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;

my $tempdir = PostgreSQL::Test::Utils::tempdir;
my $dumpfile = "$tempdir/src.dump";

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
CREATE EXTENSION btlayout;
CREATE TABLE t (id int NOT NULL, k int, v text NOT NULL, d int NOT NULL);
INSERT INTO t
  SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE (g * 7919) % 40000 END,
         md5(g::text) || CASE WHEN g % 3 = 0 THEN upper(md5(g::text)) ELSE '' END,
         g % 1000
  FROM generate_series(1, 40000) g;

CREATE INDEX t_k_opts ON t USING btlayout (k)
  WITH (fillfactor = 70, deduplicate_items = off);
CREATE UNIQUE INDEX t_id_uniq ON t USING btlayout (id);
CREATE INDEX t_k_partial ON t USING btlayout (k) WHERE d > 500;
CREATE INDEX t_v_lower ON t USING btlayout (lower(v));
CREATE INDEX t_kvd_multi ON t USING btlayout (k DESC NULLS FIRST, v) INCLUDE (d);
CREATE INDEX t_v_pattern ON t USING btlayout (v text_pattern_ops);
CREATE INDEX t_v_c ON t USING btlayout (v COLLATE "C" DESC);
CREATE INDEX t_dk_expr_opts ON t USING btlayout ((d % 10), k)
  WITH (fillfactor = 95);
CREATE INDEX t_v_bin ON t USING btlayout (upper(v) COLLATE "C" text_bin_ops)
  WITH (layout = blocked);
CREATE INDEX t_b_bin ON t USING btlayout ((left(v, 9)::bpchar) COLLATE "C" bpchar_bin_ops)
  WITH (layout = eytzinger);
CREATE INDEX t_y_bin ON t USING btlayout ((decode(md5(v), 'hex')) bytea_bin_ops)
  WITH (layout = veb);
ANALYZE t;
});
my @indexes = qw(t_k_opts t_id_uniq t_k_partial t_v_lower t_kvd_multi
  t_v_pattern t_v_c t_dk_expr_opts t_v_bin t_b_bin t_y_bin);

# Definition, options, access method and flags of every index on t
my $catalog_query = q{
SELECT c.relname, pg_get_indexdef(c.oid), coalesce(c.reloptions::text, '-'),
       am.amname, i.indisunique, i.indnatts, i.indnkeyatts
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam
WHERE i.indrelid = 't'::regclass
ORDER BY c.relname};

my $src_catalog = $node->safe_psql('src', $catalog_query);
is(scalar(() = $src_catalog =~ /\|btlayout\|/g),
	scalar(@indexes), 'source: every index on t is a btlayout index');
like(
	$src_catalog,
	qr/^t_k_opts\|.*\|\{fillfactor=70,deduplicate_items=off\}\|btlayout\|f\|/m,
	'source: options of t_k_opts are recorded');

#
# Dump and restore
#
command_ok(
	[ 'pg_dump', '--format=custom', '--file', $dumpfile, $node->connstr('src') ],
	'pg_dump in custom format');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
command_ok(
	[
		'pg_restore', '--exit-on-error', '--jobs=2',
		'--dbname', $node->connstr('dst'), $dumpfile
	],
	'pg_restore with two jobs');

#
# The same indexes
#
my $dst_catalog = $node->safe_psql('dst', $catalog_query);
is($dst_catalog, $src_catalog,
	'restored indexes: same definitions, options, access method and flags');

foreach my $index (@indexes)
{
	my $query = qq{SELECT pg_get_indexdef('$index'::regclass),
	  coalesce((SELECT reloptions::text FROM pg_class WHERE oid = '$index'::regclass), '-'),
	  (SELECT amname FROM pg_am am JOIN pg_class c ON c.relam = am.oid
	   WHERE c.oid = '$index'::regclass)};
	my $restored = $node->safe_psql('dst', $query);
	is($restored, $node->safe_psql('src', $query), "$index restored identically");
	like($restored, qr/\|btlayout$/, "$index is a btlayout index after restore");
}

# The whole schema, as pg_dump sees it, comes back unchanged
my ($src_schema, $dst_schema);
for my $db (qw(src dst))
{
	my ($stdout, $stderr);
	IPC::Run::run([ 'pg_dump', '--schema-only', $node->connstr($db) ],
		'>', \$stdout, '2>', \$stderr)
	  or die "pg_dump --schema-only $db failed: $stderr";
	# pg_dump 15.14 and later protect the script with a random key
	$stdout =~ s/^\\(un)?restrict \S+$//mg;
	$db eq 'src' ? ($src_schema = $stdout) : ($dst_schema = $stdout);
}
like($src_schema, qr/CREATE EXTENSION IF NOT EXISTS btlayout/,
	'schema dump creates the extension');
is($dst_schema, $src_schema, 'schema dumps of source and restored database are equal');

#
# The same answers, through the restored indexes
#

# [ name, query, index the query must use ]
my @queries = (
	[
		opts_range => 'SELECT count(*), sum(hashint4(id)) FROM t WHERE k BETWEEN 1000 AND 9000',
		'(t_k_opts|t_kvd_multi)'
	],
	[
		uniq_probe => q{SELECT count(*), sum(hashint4(k)), md5(string_agg(v, ',' ORDER BY id))
		  FROM t WHERE id = ANY ('{1,7,100,2500,39999,40000,40001}')},
		't_id_uniq'
	],
	[
		partial => 'SELECT count(*), sum(hashint4(id)) FROM t WHERE k < 5000 AND d > 500',
		't_k_partial'
	],
	[
		expr => q{SELECT count(*), sum(hashint4(id)) FROM t
		  WHERE lower(v) >= '1' AND lower(v) < '2'},
		't_v_lower'
	],
	[
		multi_desc => q{SELECT md5(string_agg(coalesce(k::text, 'null') || '/' || v || '/' || d, ','))
		  FROM (SELECT k, v, d FROM t WHERE k > 30000 OR k IS NULL
		        ORDER BY k DESC NULLS FIRST, v LIMIT 500) s},
		't_kvd_multi'
	],
	[
		pattern => q{SELECT count(*), sum(hashint4(id)) FROM t WHERE v ~>=~ 'ab' AND v ~<~ 'ac'},
		't_v_pattern'
	],
	[
		collate_c => q{SELECT md5(string_agg(v, ',')) FROM
		  (SELECT v FROM t WHERE v COLLATE "C" < 'B' ORDER BY v COLLATE "C" DESC LIMIT 200) s},
		't_v_c'
	],
	[
		expr_multi => q{SELECT count(*), sum(hashint4(id)) FROM t WHERE d % 10 = 3 AND k < 20000},
		't_dk_expr_opts'
	],
	[
		text_bin => q{SELECT md5(string_agg(u, ',')) FROM
		  (SELECT upper(v) AS u FROM t
		   WHERE upper(v) COLLATE "C" >= 'C' AND upper(v) COLLATE "C" < 'D'
		   ORDER BY upper(v) COLLATE "C" LIMIT 300) s},
		't_v_bin'
	],
	[
		bpchar_bin => q{SELECT count(*), sum(hashint4(id)) FROM t
		  WHERE (left(v, 9)::bpchar) COLLATE "C" BETWEEN 'a' AND 'b'},
		't_b_bin'
	],
	[
		bytea_bin => q{SELECT count(*), sum(hashint4(id)) FROM t
		  WHERE decode(md5(v), 'hex') > '\x65' AND decode(md5(v), 'hex') < '\x66'},
		't_y_bin'
	],);

foreach my $q (@queries)
{
	my ($name, $sql, $index) = @$q;
	my $reference = $node->safe_psql('src', "$scan_settings{seqscan} $sql");
	like(
		$node->safe_psql('dst', "$scan_settings{indexscan} EXPLAIN (COSTS OFF) $sql"),
		qr/(Index|Index Only|Bitmap Index) Scan (Backward )?(using|on) $index\b/,
		"$name: the restored database reads $index");
	foreach my $mode (qw(indexscan indexonlyscan bitmapscan))
	{
		is($node->safe_psql('dst', "$scan_settings{$mode} $sql"),
			$reference, "$name: $mode in the restored database equals the source's heap");
	}
}

#
# Uniqueness is still enforced by the restored index
#
my ($ret, $stdout, $stderr) =
  $node->psql('dst', q{INSERT INTO t VALUES (123, 1, 'dup', 1)});
like(
	$stderr,
	qr/duplicate key value violates unique constraint "t_id_uniq"/,
	'restored unique btlayout index rejects a duplicate');

$node->stop;
done_testing();
