
# Copyright (c) btlayout authors
#
# PostgreSQL's own regression test of btree indexes, btree_index.sql of the
# server's version, run USING btlayout beside the same file run USING
# btree, in two databases of one node set up alike: the outputs must be
# equal once "btlayout" reads "btree".  The file's plans, its scans of
# multi-level trees with truncated high keys, its backward descents, its
# array and (on 18) skip-array scans, deduplication and LP_DEAD deletion,
# its errors: whatever btree shows there, btlayout must show.
#
# The rewrite: "USING btree" becomes "USING btlayout", and a CREATE INDEX
# that names no access method gets "USING btlayout"; the tenk1 indexes the
# file relies on (made by create_index.sql in core's suite) are made here,
# with the access method of the database.  Constraints (PRIMARY KEY,
# UNIQUE) stay btree in both: the server makes those btree only.
#
# The files come from the server's source: BTL_CORE_REGRESS names a
# directory holding its src/test/regress sql/ and data/ and regress.so
# (scripts/install-pg.sh keeps them in share/core-regress of the
# versions it builds; scripts/test.sh points here the one of the major
# version under test).

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $dir = $ENV{BTL_CORE_REGRESS};
plan skip_all => 'BTL_CORE_REGRESS names no copy of the server\'s regression files'
  unless defined $dir && -f "$dir/sql/btree_index.sql";

my $node = PostgreSQL::Test::Cluster->new('core');
$node->init;
$node->start;

# The settings pg_regress gives its tests
my %env = (
	PGTZ => 'America/Los_Angeles',
	PGDATESTYLE => 'Postgres, MDY',
	PG_ABS_SRCDIR => $dir,
	PG_LIBDIR => $dir,
	PG_DLSUFFIX => '.so');
local @ENV{ keys %env } = values %env;

# The rewrite to btlayout
sub to_btlayout
{
	my ($sql) = @_;
	$sql =~ s/\bUSING\s+btree\b/USING btlayout/gi;
	$sql =~ s/^(\s*create\s+(?:unique\s+)?index\b[^;(]*?\bon\s+(?:only\s+)?[\w.]+)\s*\(/$1 USING btlayout (/gim;
	return $sql;
}

my $core = slurp_file("$dir/sql/btree_index.sql");
my $ours = to_btlayout($core);
isnt($ours, $core, 'the rewrite changed the file');
my $unchanged = () = $ours =~ /^\s*create\s+(?:unique\s+)?index\b(?![^;]*USING btlayout)/gim;
is($unchanged, 0, 'every CREATE INDEX of the file is USING btlayout after the rewrite');

sub run_in
{
	my ($db, $am, $sql) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION btlayout') if $am eq 'btlayout';
	# test_setup.sql makes the tables; errors there (a missing helper
	# function) are the same in both databases and shown in both outputs
	my $setup = slurp_file("$dir/sql/test_setup.sql");
	$node->psql($db, $setup, on_error_stop => 0);
	$node->safe_psql($db, qq{
CREATE INDEX tenk1_unique1 ON tenk1 USING $am (unique1 int4_ops);
CREATE INDEX tenk1_unique2 ON tenk1 USING $am (unique2 int4_ops);
CREATE INDEX tenk1_hundred ON tenk1 USING $am (hundred int4_ops);
CREATE INDEX tenk1_thous_tenthous ON tenk1 USING $am (thousand, tenthous);
VACUUM ANALYZE tenk1;
});
	# Statements echoed, messages between them, as pg_regress shows them
	my $out = '';
	IPC::Run::run(
		[ 'psql', '-X', '-a', '-q', '-d', $node->connstr($db), '-f', '-' ],
		'<', \$sql, '>&', \$out);
	return $out;
}

# diff -u of the two outputs, for the log
sub output_diff
{
	my ($want, $got) = @_;
	my $tmp = PostgreSQL::Test::Utils::tempdir;
	PostgreSQL::Test::Utils::append_to_file("$tmp/btree.out", $want);
	PostgreSQL::Test::Utils::append_to_file("$tmp/btlayout.out", $got);
	my $diff = '';
	IPC::Run::run([ 'diff', '-u', "$tmp/btree.out", "$tmp/btlayout.out" ], '>', \$diff);
	return $diff;
}

# Compared: the outputs with the statements psql echoes rewritten alike
# and "btlayout" read as "btree".  One message differs by design: from 17
# on, CREATE INDEX looks up operator classes with search_path set to
# pg_catalog, where btlayout's are not, so the server names them
# schema-qualified ("operator class public.int4_ops has no options").
my $core_out = to_btlayout(run_in('core_btree', 'btree', $core));
my $our_out = run_in('core_btlayout', 'btlayout', $ours);
for ($core_out, $our_out)
{
	s/btlayout/btree/g;
	s/operator class public\./operator class /g;
}

ok(length($core_out) > 1000, 'btree_index.sql ran (' . length($core_out) . ' bytes of output)');
ok($our_out eq $core_out, 'btree_index.sql USING btlayout prints what it prints USING btree')
  or diag(output_diff($core_out, $our_out));

# The btlayout database did read btlayout indexes
is($node->safe_psql('core_btlayout',
		q{SELECT count(*) > 0 FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		  WHERE a.amname = 'btlayout' AND c.relname LIKE 'bt\_%'}),
	't', 'the btlayout database has btlayout indexes on the bt_ tables');
ok($node->poll_query_until('core_btlayout',
		q{SELECT sum(idx_scan) > 0 FROM pg_stat_user_indexes s JOIN pg_class c ON c.oid = s.indexrelid
		  JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'btlayout'}),
	'and scanned them');

$node->stop;
done_testing();
