
# Copyright (c) btlayout authors
#
# btlayout_check() finds corruption and never crashes on it.
#
# One table, a fresh btlayout index for each kind of damage (layouts none
# and eytzinger).  Every index is checked clean first; then the node is
# stopped, bytes of each index's file are patched (checksums are off, the
# default of PostgreSQL::Test::Cluster), the node is started, and
# btlayout_check() must raise an error naming the damaged block.  Kinds:
#
#   - two line pointers swapped: keys out of order (both layouts);
#   - a line pointer beyond the tuple area;
#   - two line pointers sharing one tuple body (overlap);
#   - two heap TIDs of a posting list swapped;
#   - a right sibling link and a left sibling link changed;
#   - a leaf's level changed in its special space;
#   - a downlink pointing past the end of the index;
#   - the metapage's magic number zeroed;
#   - a text value's length header pointing past its tuple;
#   - a key changed to a value that keeps the order: the structure is
#     sound, but heapallindexed finds the heap row without index tuple;
#   - more line pointers than a page holds: 679 tuples of 8 bytes in a
#     leaf (which a layout's plan must refuse, not overrun), and a pd_lower
#     raised to claim 1000 (which the search must refuse, not index its
#     tables with); on these, btlayout_relayout(), btlayout_stats() and
#     btlayout_page() must not fail, and a lookup through the index must
#     fail with a corruption error;
#   - random bytes (seeded) over a leaf's line pointers, its tuple area, or
#     the whole page body;
#   - a few random bytes (seeded) flipped in a random page of indexes of
#     several shapes, compressed text values included: some flips hit
#     padding or free space and are harmless, so each check must either
#     pass or fail with an index or data corruption error (SQLSTATE XX002
#     or XX001), never an internal error.
#
# The damaged node is first started in standby mode (standby.signal, no
# primary), so that btlayout_check() runs during recovery, where it checks
# each page on its own: the damage inside one page (cases marked "local")
# and to the metapage must be found there too, damage between pages (links,
# levels, downlinks, a key the heap disagrees with) is left to the check on
# the primary, and heapallindexed is refused.  Then the node is promoted
# and everything is checked in full.
#
# Afterwards the server must still be up, with no backend killed by a
# signal in its log.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $BLCKSZ = 8192;
my $SPECIAL = $BLCKSZ - 16;    # pd_special of every nbtree page

#
# Pages of a relation file
#
sub read_block
{
	my ($file, $blkno) = @_;
	open(my $fh, '<:raw', $file) or die "open $file: $!";
	sysseek($fh, $blkno * $BLCKSZ, 0) or die "seek $file: $!";
	my $page;
	sysread($fh, $page, $BLCKSZ) == $BLCKSZ or die "short read of $file";
	close($fh);
	return $page;
}

sub write_block
{
	my ($file, $blkno, $page) = @_;
	open(my $fh, '+<:raw', $file) or die "open $file: $!";
	sysseek($fh, $blkno * $BLCKSZ, 0) or die "seek $file: $!";
	syswrite($fh, $page) == $BLCKSZ or die "short write of $file";
	close($fh);
	return;
}

# Rewrite block $blkno of $file with $patch, called with a reference to it
sub patch_block
{
	my ($file, $blkno, $patch) = @_;
	my $page = read_block($file, $blkno);
	$patch->(\$page);
	write_block($file, $blkno, $page);
	return;
}

# Line pointer $off (1-based): (lp_off, lp_flags, lp_len)
sub lp_get
{
	my ($page, $off) = @_;
	my $w = unpack('V', substr($$page, 24 + 4 * ($off - 1), 4));
	return ($w & 0x7fff, ($w >> 15) & 3, $w >> 17);
}

sub lp_set
{
	my ($page, $off, $lp_off, $flags, $len) = @_;
	substr($$page, 24 + 4 * ($off - 1), 4,
		pack('V', $lp_off | ($flags << 15) | ($len << 17)));
	return;
}

sub maxoff
{
	my ($page) = @_;
	return (unpack('v', substr($$page, 12, 2)) - 24) / 4;
}

# Fields of the special space: btpo_prev, btpo_next, btpo_level
sub set_prev  { substr(${ $_[0] }, $SPECIAL,     4, pack('V', $_[1])); return; }
sub set_next  { substr(${ $_[0] }, $SPECIAL + 4, 4, pack('V', $_[1])); return; }
sub set_level { substr(${ $_[0] }, $SPECIAL + 8, 4, pack('V', $_[1])); return; }

sub set_lower_upper
{
	my ($page, $lower, $upper) = @_;
	substr($$page, 12, 4, pack('vv', $lower, $upper));
	return;
}

# The page's items replaced by as many 8-byte tuples as fit: more line
# pointers than a page of real index tuples can have
sub many_small_items
{
	my ($page) = @_;
	my $n = int(($SPECIAL - 24) / 12);
	my $upper = $SPECIAL - 8 * $n;
	set_lower_upper($page, 24 + 4 * $n, $upper);
	for my $i (1 .. $n)
	{
		lp_set($page, $i, $upper + 8 * ($i - 1), 1, 8);
		substr($$page, $upper + 8 * ($i - 1), 8, pack('vvvv', 0, 1, 1, 8));
	}
	return;
}

sub swap_lps
{
	my ($page, $a, $b) = @_;
	my @la = lp_get($page, $a);
	my @lb = lp_get($page, $b);
	lp_set($page, $a, @lb);
	lp_set($page, $b, @la);
	return;
}

# Overwrite bytes [$from, $to) with random bytes
sub garble
{
	my ($page, $from, $to) = @_;
	substr($$page, $_, 1, chr(int(rand(256)))) for $from .. $to - 1;
	return;
}

#
# The cases.  Each has its own index; patch gets the index's file and its
# root block.
#
my @cases = (
	{
		name => 'line pointers swapped (layout none)',
		local => 1,
		def => '(id)',
		patch => sub { patch_block($_[0], 1, sub { swap_lps($_[0], 5, 6) }) },
		expect => qr/index "c_\d+" has corrupted key order at block 1, offset 6/,
	},
	{
		name => 'line pointers swapped (layout eytzinger)',
		local => 1,
		def => '(id) WITH (layout = eytzinger)',
		patch => sub { patch_block($_[0], 1, sub { swap_lps($_[0], 10, 11) }) },
		expect => qr/index "c_\d+" has corrupted key order at block 1, offset 11/,
	},
	{
		name => 'line pointer beyond the tuple area',
		local => 1,
		def => '(id) WITH (layout = eytzinger)',
		patch => sub {
			patch_block($_[0], 1,
				sub { my @lp = lp_get($_[0], 3); lp_set($_[0], 3, $SPECIAL - 8, $lp[1], $lp[2]) });
		},
		expect => qr/has corrupted item at block 1, offset 3\n.*outside the tuple area/,
	},
	{
		name => 'line pointers overlapping',
		local => 1,
		def => '(id)',
		patch => sub { patch_block($_[0], 2, sub { lp_set($_[0], 4, lp_get($_[0], 3)) }) },
		expect => qr/has corrupted item at block 2, offset [34]\n.*overlaps the tuple of offset [34]/,
	},
	{
		name => 'posting list TIDs out of order',
		local => 1,
		def => '(d)',
		patch => sub {
			patch_block(
				$_[0], 1,
				sub {
					my ($page) = @_;
					for my $off (2 .. maxoff($page))
					{
						my ($start) = lp_get($page, $off);
						my ($bi_hi, $bi_lo, $posid, $info) =
						  unpack('vvvv', substr($$page, $start, 8));
						next unless ($info & 0x2000) && ($posid & 0x2000);
						my $at = $start + (($bi_hi << 16) | $bi_lo);
						my $t0 = substr($$page, $at, 6);
						substr($$page, $at, 6, substr($$page, $at + 6, 6));
						substr($$page, $at + 6, 6, $t0);
						return;
					}
					die "no posting list on block 1";
				});
		},
		expect => qr/has corrupted posting list at block 1, offset \d+\n.*does not follow/,
	},
	{
		name => 'right sibling link changed',
		def => '(id)',
		# leaves are blocks 1, 2, 4, 5, ...: nbtree's load puts the root at 3
		patch => sub { patch_block($_[0], 1, sub { set_next($_[0], 5) }) },
		expect => qr/has corrupted sibling link at block 5\n.*left sibling link is 4, but it is the right sibling of block 1/,
	},
	{
		name => 'left sibling link changed',
		def => '(id) WITH (layout = eytzinger)',
		patch => sub { patch_block($_[0], 2, sub { set_prev($_[0], 7) }) },
		expect => qr/has corrupted sibling link at block 2\n.*left sibling link is 7/,
	},
	{
		name => 'wrong level in a leaf',
		def => '(id)',
		patch => sub { patch_block($_[0], 2, sub { set_level($_[0], 1) }) },
		expect => qr/has corrupted downlink at block \d+, offset \d+\n.*block 2, a leaf page at level 1/,
	},
	{
		name => 'downlink past the end of the index',
		def => '(id) WITH (layout = eytzinger)',
		patch => sub {
			my ($file, $root) = @_;
			patch_block(
				$file, $root,
				sub {
					my ($start) = lp_get($_[0], 2);
					substr(${ $_[0] }, $start, 4, pack('vv', 0, 54321));
				});
		},
		expect => qr/has corrupted downlink at block \d+, offset 2\n.*points to block 54321/,
	},
	{
		name => 'metapage magic zeroed',
		local => 1,
		def => '(id)',
		patch => sub { patch_block($_[0], 0, sub { substr(${ $_[0] }, 24, 4, pack('V', 0)) }) },
		expect => qr/has corrupted metapage\n.*Magic number 00000000/,
		# From 18 on the planner reads the metapage of every index of a
		# table it plans a scan of (amgettreeheight), btree's too: once
		# checked, this index goes, so the later cases' lookups on t
		# reach their own damage
		drop_after_check => 1,
	},
	{
		name => 'text length past its tuple',
		local => 1,
		def => '(v) WITH (layout = eytzinger)',
		patch => sub {
			patch_block($_[0], 1,
				sub { my ($start) = lp_get($_[0], 2); substr(${ $_[0] }, $start + 8, 1, chr(0xff)) });
		},
		expect => qr/has corrupted item at block 1, offset 2\n.*runs past the end of the tuple/,
	},
	{
		name => 'key changed, order kept: heapallindexed',
		def => '(e)',
		patch => sub {
			patch_block(
				$_[0], 1,
				sub {
					my ($start) = lp_get($_[0], 5);
					my $v = unpack('l<', substr(${ $_[0] }, $start + 8, 4));
					substr(${ $_[0] }, $start + 8, 4, pack('l<', $v + 1));
				});
		},
		structure_ok => 1,
		expect => qr/heap tuple \(\d+,\d+\) from table "t" lacks matching index tuple within index "c_\d+"/,
	},
	{
		name => 'more line pointers than a page holds (small tuples)',
		local => 1,
		def => '((id + 1)) WITH (layout = eytzinger)',
		patch => sub { patch_block($_[0], 1, \&many_small_items) },
		lookup => 'SELECT count(*) FROM t WHERE id + 1 = 6',
		expect => qr/has corrupted page at block 1\n.*The page has 679 line pointers; a page holds at most 408/,
	},
	{
		name => 'pd_lower claiming more line pointers than a page holds',
		local => 1,
		def => '((id + 2)) WITH (layout = eytzinger)',
		patch => sub {
			patch_block($_[0], 1, sub { set_lower_upper($_[0], 24 + 4 * 1000, 24 + 4 * 1000) });
		},
		lookup => 'SELECT count(*) FROM t WHERE id + 2 = 7',
		expect => qr/has corrupted page at block 1\n.*The page has 1000 line pointers; a page holds at most 408/,
	},);

# Random bytes: seeded, over three regions of block 1, on both layouts
my @regions = (
	[ 'line pointers', 24, 24 + 4 * 60 ],
	[ 'tuple area', 2048, 6144 ],
	[ 'page body', 24, $SPECIAL ],);
for my $seed (1 .. 6)
{
	my ($what, $from, $to) = @{ $regions[ $seed % 3 ] };
	my $def = ($seed % 2 ? '(v)' : '(id)')
	  . ($seed % 4 < 2 ? '' : ' WITH (layout = eytzinger)');
	push @cases,
	  {
		name => "random bytes over the $what (seed $seed, $def)",
		local => 1,
		def => $def,
		patch => sub {
			srand($seed);
			patch_block($_[0], 1, sub { garble($_[0], $from, $to) });
		},
		expect => qr/ERROR:  .*corrupt/,
	  };
}

# Byte flips: index definitions on table f, cycled over
my @flip_defs = (
	'(id)', '(d)', '(v)', '(w)',
	'(d DESC NULLS FIRST, v) INCLUDE (id)',
	'(w) WITH (layout = eytzinger)',
	'(v) WITH (layout = veb)',
	'(id) WITH (layout = btorder)',
	'(d, id) WITH (layout = blocked)');
my @flips = map { { index => "f_$_", def => $flip_defs[ $_ % @flip_defs ] } } 0 .. 26;

#
# Build and check clean
#
my $node = PostgreSQL::Test::Cluster->new('check');
# wal_level replica: a standby later; no data checksums (initdb's default
# from 18 on), which would refuse the damaged pages before the checker sees
# them
$node->init(
	allows_streaming => 1,
	extra => $node->pg_version >= 18 ? ['--no-data-checksums'] : []);
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION btlayout;
CREATE TABLE t (id int, d int, e int, v text);
INSERT INTO t SELECT i, i % 50, 2 * i, md5(i::text) || repeat('x', i % 20)
FROM generate_series(1, 20000) i;
CREATE TABLE f (id int, d int, v text, w text);
INSERT INTO f SELECT i, i % 37, md5(i::text) || repeat('y', i % 30),
  CASE WHEN i % 10 = 0 THEN repeat(md5(i::text), 30) ELSE md5(i::text) END
FROM generate_series(1, 3000) i;
});

my $i = 0;
for my $case (@cases)
{
	$case->{index} = 'c_' . $i++;
	$node->safe_psql('postgres',
		"CREATE INDEX $case->{index} ON t USING btlayout $case->{def}");
	$case->{file} = $node->data_dir . '/'
	  . $node->safe_psql('postgres',
		"SELECT pg_relation_filepath('$case->{index}')");
	is($node->safe_psql('postgres',
			"SELECT btlayout_check('$case->{index}', true)"),
		'', "$case->{index} is clean before: $case->{name}");
}

for my $flip (@flips)
{
	$node->safe_psql('postgres',
		"CREATE INDEX $flip->{index} ON f USING btlayout $flip->{def}");
	($flip->{file}, $flip->{blocks}) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT pg_relation_filepath('$flip->{index}'), pg_relation_size('$flip->{index}') / $BLCKSZ"
	  );
	$flip->{file} = $node->data_dir . '/' . $flip->{file};
}
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM (SELECT btlayout_check(indexrelid, true) FROM pg_index"
		  . " WHERE indrelid = 'f'::regclass) s"),
	scalar(@flips),
	'the indexes to flip bytes in are clean before');

#
# Damage every index, then check each
#
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop;
for my $case (@cases)
{
	# btm_root, after the page header, btm_magic and btm_version
	my $root = unpack('V', substr(read_block($case->{file}, 0), 32, 4));
	$case->{patch}->($case->{file}, $root);
}
srand(20261122);
for my $flip (@flips)
{
	my $blkno = 1 + int(rand($flip->{blocks} - 1));
	my @at;
	patch_block(
		$flip->{file},
		$blkno,
		sub {
			for (0 .. int(rand(6)))
			{
				# half of them among the tuples at the end of the page
				my $pos =
				  rand() < 0.5
				  ? $SPECIAL - 1 - int(rand(3000))
				  : 24 + int(rand($SPECIAL - 24));
				substr(${ $_[0] }, $pos, 1, chr(int(rand(256))));
				push @at, $pos;
			}
		});
	$flip->{what} = "$flip->{index} $flip->{def}, block $blkno, bytes @at";
}

# In recovery: each page on its own
$node->set_standby_mode;
$node->start;
is($node->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the damaged node is in recovery');
for my $case (@cases)
{
	my ($stdout, $stderr);
	my $rc = $node->psql(
		'postgres',
		"SELECT btlayout_check('$case->{index}')",
		stdout => \$stdout,
		stderr => \$stderr);
	if ($case->{local})
	{
		isnt($rc, 0, "$case->{name}: btlayout_check fails in recovery");
		like($stderr, $case->{expect},
			"$case->{name}: in recovery, the error names the damage");
	}
	else
	{
		is($rc, 0,
			"$case->{name}: in recovery, damage between pages is left to the primary"
		) or diag($stderr);
	}
}
{
	my ($stdout, $stderr);
	$node->psql(
		'postgres',
		"\\set VERBOSITY verbose\nSELECT btlayout_check('$cases[0]{index}', true)",
		stdout => \$stdout,
		stderr => \$stderr);
	like($stderr, qr/ERROR:  55000: heapallindexed cannot be checked during recovery/,
		'heapallindexed is refused in recovery');
}

# Each index with flipped bytes: clean or a corruption error; returns a
# count of the outcomes
sub check_flips
{
	my ($heapallindexed, $when) = @_;
	my %outcomes;
	for my $flip (@flips)
	{
		my ($stdout, $stderr);
		$node->psql(
			'postgres',
			"\\set VERBOSITY verbose\nSELECT btlayout_check('$flip->{index}', $heapallindexed)",
			stdout => \$stdout,
			stderr => \$stderr);
		ok($stderr eq '' || $stderr =~ /ERROR:  XX00[12]: /,
			"${when}bytes flipped in $flip->{what}: clean or a corruption error")
		  or diag($stderr);
		my ($outcome) = $stderr =~ /ERROR:  XX00[12]: (index "[^"]+" has corrupted \S+ \S+|[^\n]+)/;
		$outcome //= 'clean';
		$outcome =~ s/"f_\d+"/"f_N"/;
		$outcome =~ s/\(\d+,\d+\)/(b,o)/;
		$outcomes{$outcome}++;
	}
	note("${when}byte flips: $outcomes{$_} $_") for sort keys %outcomes;
	return;
}
check_flips('false', 'in recovery, ');

# Promoted: everything
$node->promote;
$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the node was not promoted';
for my $case (@cases)
{
	my ($stdout, $stderr);
	if ($case->{structure_ok})
	{
		is($node->safe_psql('postgres', "SELECT btlayout_check('$case->{index}')"),
			'', "$case->{name}: the structure is still sound");
	}
	my $rc = $node->psql(
		'postgres',
		"SELECT btlayout_check('$case->{index}', true)",
		stdout => \$stdout,
		stderr => \$stderr);
	isnt($rc, 0, "$case->{name}: btlayout_check fails");
	like($stderr, $case->{expect}, "$case->{name}: error names the damage");
	$node->safe_psql('postgres', "DROP INDEX $case->{index}")
	  if $case->{drop_after_check};

	next unless $case->{lookup};
	# The functions that plan pages leave the damaged page alone
	for my $sql (
		"SELECT btlayout_relayout('$case->{index}') >= 0",
		"SELECT pages > 0 FROM btlayout_stats('$case->{index}')",
		"SELECT count(*) > 0 FROM btlayout_page('$case->{index}', 1)")
	{
		$rc = $node->psql('postgres', $sql, stdout => \$stdout, stderr => \$stderr);
		is($rc . $stdout, '0t', "$case->{name}: $sql") or diag($stderr);
	}
	# A lookup through the index that reaches the page fails cleanly
	$rc = $node->psql(
		'postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off;\n"
		  . "\\set VERBOSITY verbose\n$case->{lookup}",
		stdout => \$stdout,
		stderr => \$stderr);
	like(
		$stderr,
		qr/ERROR:  XX002: index "c_\d+" contains corrupted page at block 1/,
		"$case->{name}: a lookup through the index fails with a corruption error");
}

check_flips('true', '');

# Still up, nothing crashed
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server is still up');
$node->stop;
my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal/, 'no backend was terminated by a signal');

done_testing();
