
# Copyright (c) btlayout authors
#
# btlayout's own WAL record for relayouts (src/wal.c), written when the
# library is preloaded:
#   - a relayout right after the inserts that broke the pages logs about a
#     tenth of a full-page image per page, and, with btlayout.wal_records
#     off or without the preload, full-page images;
#   - a streaming standby that preloads btlayout replays the records of
#     relayouts by btlayout_relayout(), by VACUUM and by lookups, in every
#     layout, with wal_consistency_checking covering them (rm_mask), and
#     ends with the primary's pages;
#   - crash recovery replays them: an immediate stop after relayouts that
#     only the records describe leaves the same pages, clean for the checker.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use BtlayoutTest qw(btl_primary_and_standby btl_check_indexes btl_compare_with_heap
  btl_wait_replay);

# Digest of every block of an index, with what may legitimately differ
# between two copies of one page masked: LSN and checksum, and the free
# space between pd_lower and pd_upper
my $masked_pages_sql = q{
CREATE FUNCTION masked_pages(idx regclass) RETURNS text
LANGUAGE sql AS $$
  SELECT string_agg(b || ':' || md5(substr(p, 11, h.lower - 10) || substr(p, h.upper + 1)), ' ' ORDER BY b)
  FROM generate_series(0, pg_relation_size(idx) / 8192 - 1) b,
       LATERAL get_raw_page(idx::text, b) p,
       LATERAL page_header(p) h
$$;
};

# Tables whose indexes have lost their layout to inserts: int4 keys in
# each layout, duplicates (posting lists) and text keys
my $setup_sql = q{
CREATE TABLE t (k int4, k2 int4, k3 int4, d int4, v text);
INSERT INTO t SELECT g * 10, g * 10, g * 10, g % 50, md5(g::text) FROM generate_series(1, 60000) g;
CREATE INDEX t_k_eytzinger ON t USING btlayout (k) WITH (layout = eytzinger, lookup_relayout = off);
CREATE INDEX t_k_veb ON t USING btlayout (k2) WITH (layout = veb, lookup_relayout = off);
CREATE INDEX t_k_btorder ON t USING btlayout (k3 DESC) WITH (layout = btorder, lookup_relayout = off);
CREATE INDEX t_d_blocked ON t USING btlayout (d) WITH (layout = blocked, lookup_relayout = off);
CREATE INDEX t_v_blocked ON t USING btlayout (v COLLATE "C") WITH (layout = blocked, lookup_relayout = off);
};
my @indexes = qw(t_k_eytzinger t_k_veb t_k_btorder t_d_blocked t_v_blocked);

# Random inserts inside the key range
sub insert_some
{
	my ($node, $n, $seed) = @_;
	$node->safe_psql('postgres', qq{
SELECT setseed($seed);
INSERT INTO t SELECT r, r, r, (random() * 60)::int4, md5(random()::text)
  FROM (SELECT (random() * 600000)::int4 r FROM generate_series(1, $n)) s;});
	return;
}

# WAL bytes per page rewritten by btlayout_relayout() of the indexes, in
# one session with $settings; returns (pages, bytes per page)
sub relayout_wal
{
	my ($node, $settings) = @_;
	my $out = $node->safe_psql('postgres', qq{
$settings
SELECT pg_current_wal_insert_lsn() AS l0 \\gset
SELECT sum(btlayout_relayout(i)) AS pages FROM unnest('{@{[ join(',', @indexes) ]}}'::regclass[]) i \\gset
SELECT :pages, round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0') / greatest(:pages, 1));});
	return split /\|/, $out;
}

#
# 1. Record size, against full-page images
#
my $node = PostgreSQL::Test::Cluster->new('sizes');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'btlayout'\nautovacuum = off\n");
$node->start;
$node->safe_psql('postgres', "CREATE EXTENSION btlayout; $setup_sql");

insert_some($node, 600, 0.1);
my ($pages, $per_page) = relayout_wal($node, '');
ok($pages > 50, "relayout after inserts rewrote pages ($pages)");
ok($per_page < 2000,
	"with the preload, a relayout logs less than 2000 bytes per page ($per_page)");

insert_some($node, 600, 0.2);
($pages, $per_page) = relayout_wal($node, 'SET btlayout.wal_records = off;');
ok($pages > 50 && $per_page > 4000,
	"with btlayout.wal_records off, full-page images ($per_page bytes per page)");

# The first change of a page after a checkpoint carries its image anyway
insert_some($node, 600, 0.3);
$node->safe_psql('postgres', 'CHECKPOINT');
($pages, $per_page) = relayout_wal($node, '');
ok($pages > 50 && $per_page > 4000,
	"after a checkpoint, the record carries the page's image ($per_page bytes per page)");

# Without the preload: full-page images, whatever the setting says
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$node->restart;
insert_some($node, 600, 0.4);
($pages, $per_page) = relayout_wal($node, 'SET btlayout.wal_records = on;');
ok($pages > 50 && $per_page > 4000,
	"without the preload, full-page images ($per_page bytes per page)");
my ($n, @problems) = btl_compare_with_heap($node, 'postgres');
is_deeply(\@problems, [], "the $n indexes answer as the heap");
$node->stop;

#
# 2. A standby replaying the records, with consistency checking
#
my ($primary, $standby) = btl_primary_and_standby(
	"shared_preload_libraries = 'btlayout'\nautovacuum = off\n"
	  . "wal_consistency_checking = 'btree,btlayout'\n");
$primary->safe_psql('postgres',
	"CREATE EXTENSION btlayout; CREATE EXTENSION pageinspect; $masked_pages_sql $setup_sql");
insert_some($primary, 1000, 0.5);
$primary->safe_psql('postgres', 'CHECKPOINT');
insert_some($primary, 1000, 0.6);

# Relayouts by each route: on demand, by VACUUM after deletions, by lookups
$primary->safe_psql('postgres',
	"SELECT btlayout_relayout('t_k_eytzinger'), btlayout_relayout('t_v_blocked')");
$primary->safe_psql('postgres', q{
DELETE FROM t WHERE k % 7 = 0;
VACUUM t;
});
insert_some($primary, 20000, 0.7);
my $by_lookups = $primary->safe_psql('postgres', q{
ALTER INDEX t_k_veb SET (lookup_relayout = on);
ALTER INDEX t_d_blocked SET (lookup_relayout = on);
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM generate_series(0, 600000, 97) p, LATERAL (SELECT 1 FROM t WHERE k2 = p) s;
SELECT count(*) FROM generate_series(0, 60) p, LATERAL (SELECT 1 FROM t WHERE d = p LIMIT 1) s;
SELECT lookup_relayouts FROM btlayout_search_stats();
});
$by_lookups = (split /\n/, $by_lookups)[-1];
ok($by_lookups > 0, "lookups rewrote pages ($by_lookups)");
btl_wait_replay($primary, $standby);

foreach my $ix (@indexes)
{
	my $p = $primary->safe_psql('postgres', "SELECT masked_pages('$ix')");
	my $s = $standby->safe_psql('postgres', "SELECT masked_pages('$ix')");
	ok($p ne '' && $p eq $s, "standby's pages of $ix equal the primary's");
}
($n, @problems) = btl_compare_with_heap($standby, 'postgres');
is_deeply(\@problems, [], "the standby's $n indexes answer as its heap");
my $standby_log = slurp_file($standby->logfile);
unlike($standby_log, qr/inconsistent page found/,
	'no WAL consistency failure on the standby');
unlike($standby_log, qr/btlayout redo/, 'no redo error on the standby');
$standby->stop;

#
# 3. Crash recovery replays the records
#
$primary->safe_psql('postgres', 'CHECKPOINT');
insert_some($primary, 3000, 0.8);
my $rewritten = $primary->safe_psql('postgres',
	"SELECT sum(btlayout_relayout(i)) FROM unnest('{@{[ join(',', @indexes) ]}}'::regclass[]) i");
ok($rewritten > 0, "relayouts since the last checkpoint ($rewritten pages)");
my %before = map { $_ => $primary->safe_psql('postgres', "SELECT masked_pages('$_')") } @indexes;
$primary->stop('immediate');
$primary->start;
foreach my $ix (@indexes)
{
	is($primary->safe_psql('postgres', "SELECT masked_pages('$ix')"),
		$before{$ix}, "crash recovery leaves the pages of $ix as they were");
}
my ($checked, @failures) = btl_check_indexes($primary, 'postgres');
is_deeply(\@failures, [], "btlayout_check finds the $checked indexes clean");
foreach my $ix (@indexes)
{
	is($primary->safe_psql('postgres', "SELECT laid_out_percent FROM btlayout_stats('$ix')"),
		'100', "$ix is in its layout after recovery");
}
$primary->stop;

done_testing();
