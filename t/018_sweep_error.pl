
# Copyright (c) btlayout authors

# A check of stale entries cut short by an error (src/indexstate.c,
# sweep()).
#
# A relcache invalidation of an index makes this backend's entry for it
# stale: its copy of the upper levels is freed and no lookup makes it a new
# one until the entry has been checked against pg_class, which the next
# lookup to begin does (sweep_pending).  That check can fail: here a lock
# timeout while another session holds pg_class in ACCESS EXCLUSIVE mode.
# The check must then still be pending, so that once the lock is gone a
# later lookup makes it, and the index gets a copy again.  Before the fix
# the flag was lowered before the check and the error left it down: the
# entry stayed stale, and the index without a copy, until some other
# invalidation of it.
#
# Session A looks up ia (on a, two levels: it has a copy) and, through a
# generic plan prepared beforehand, ib (on b), whose statement reads no
# catalog once A's caches are warm.  With pg_class locked by session B:
# first, with no stale entry, A's lookup of ib runs (the control: nothing
# but a check reads pg_class); then ia is renamed (its pg_class row
# updated: a relcache invalidation of ia and its syscache entry gone), and
# A's lookup of ib begins with the check of ia's entry, which waits for
# pg_class and fails on lock_timeout.  After B's ROLLBACK, A's lookups of
# ia must make it a copy again and search it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('sweep');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION btlayout;
CREATE TABLE a (k int4) WITH (autovacuum_enabled = off);
INSERT INTO a SELECT g FROM generate_series(1, 100000) g;
CREATE INDEX ia ON a USING btlayout (k);
CREATE TABLE b (k int4) WITH (autovacuum_enabled = off);
INSERT INTO b SELECT g FROM generate_series(1, 10000) g;
CREATE INDEX ib ON b USING btlayout (k);
VACUUM ANALYZE a, b;
});
is( $node->safe_psql(
		'postgres', q{SELECT leaf_pages > 1 FROM btlayout_stats('ia')}),
	't', 'ia has two levels: a root to copy');

my $A = $node->background_psql('postgres', on_error_stop => 0);
my $B = $node->background_psql('postgres');

# The pages of A's copy of index $name
sub copy_pages
{
	my ($name) = @_;
	return $A->query_safe("SELECT btlayout_upper_copy_pages('$name')");
}

# A's lookups so far that a copy served, all indexes together
sub copy_hits
{
	return $A->query_safe('SELECT upper_copy_hits FROM btlayout_search_stats()');
}

# A runs q (a lookup of ib) while B holds pg_class; returns A's stderr
sub lookup_with_pg_class_locked
{
	$B->query_safe('BEGIN; LOCK TABLE pg_class IN ACCESS EXCLUSIVE MODE;');
	$A->query('EXECUTE q(4242);');
	my $err = $A->{stderr};
	$A->{stderr} = '';
	$B->query_safe('ROLLBACK;');
	return $err;
}

$A->query_safe(
	q{SET enable_seqscan = off; SET enable_bitmapscan = off;
SET plan_cache_mode = force_generic_plan;
SET btlayout.upper_copy = '4MB';
SET lock_timeout = '200ms';
PREPARE q(int4) AS SELECT count(*) FROM b WHERE k = $1;});
for my $k (1 .. 3)
{
	$A->query_safe("SELECT count(*) FROM a WHERE k = $k; EXECUTE q($k);");
}
my $pages = copy_pages('ia');
ok($pages > 0, "A holds a copy of ia ($pages pages)");

# The control: with no stale entry, the lookup of ib reads no catalog
is(lookup_with_pg_class_locked(), '',
	'with pg_class locked, a lookup of ib runs when no entry waits for its check');

# ia invalidated: A's next lookup checks its entry first, and fails
$node->safe_psql('postgres', 'ALTER INDEX ia RENAME TO ia_renamed');
like(lookup_with_pg_class_locked(), qr/canceling statement due to lock timeout/,
	"with pg_class locked, a lookup of ib fails in the check of ia's entry");

# pg_class free: the next lookup checks the entry, and ia gets a copy again
# (the functions that report on copies are called after the lookups: that
# of the pages checks stale entries too)
my $hits = copy_hits();
for my $k (4 .. 6)
{
	$A->query_safe("SELECT count(*) FROM a WHERE k = $k;");
}
my $hits_after = copy_hits();
my $pages_after = copy_pages('ia_renamed');
ok($pages_after > 0,
	"after the error, A's lookups of ia made it a copy again ($pages_after pages)");
ok($hits_after > $hits,
	'and searched it (' . ($hits_after - $hits) . ' of its 3 lookups)');
is($A->query_safe('SELECT count(*) FROM a WHERE k = 77777; EXECUTE q(7777);'),
	"1\n1", 'answers right');

$A->quit;
$B->quit;
$node->stop;
done_testing();
