
# Copyright (c) btlayout authors
#
# Differential fuzz test: btlayout against core btree.
#
# A seeded schedule builds a few random table shapes, each twice: X_bt with
# a "USING btree" index and X_bl with the same definition "USING btlayout
# ... WITH (layout = L)".  Every write goes to both tables; queries, forced
# onto the index, run on both and must answer the same, row for row where
# the order is defined, as a multiset (digest) where it is not.
#
#   shapes:   1-3 key columns of int2/int4/int8, text ("C", "und-x-icu" and
#             the database default), numeric, float8 (NaN, +-Infinity),
#             timestamp (+-infinity, BC), uuid; random ASC/DESC and NULLS
#             FIRST/LAST; INCLUDE columns; small key domains (duplicates)
#             and NULLs; sometimes UNIQUE (also NULLS NOT DISTINCT), then
#             writes that conflict must fail identically on both sides;
#             random layout, deduplicate_items, fillfactor
#   writes:   INSERT batches (1-2000 rows), DELETE by key range, UPDATE of
#             keys, VACUUM (DEBUG2 output parsed for pages rewritten), VACUUM
#             FULL, btlayout_relayout(), ALTER INDEX SET (layout) + relayout,
#             ALTER INDEX SET (layout) alone (no relayout: the new layout's
#             walk meets the old placement),
#             REINDEX [CONCURRENTLY], ANALYZE, btlayout_check()
#   queries:  equality on prefixes, ranges (<, <=, >, >=, BETWEEN, redundant
#             and contradictory bounds), = ANY / < ANY (arrays with
#             duplicates and NULLs, empty arrays), IN lists, IS [NOT] NULL,
#             quals on later columns only, skip-scan shapes (arrays or an
#             equality on a later column, none or a range on the first:
#             skip scans on 18 and later), cross-type constants (int2/int4/
#             int8, float4, date, timestamptz), ORDER BY the index (forward
#             and backward) with LIMIT/OFFSET, under index, index-only,
#             bitmap and parallel scans, with btlayout.prefetch on and off,
#             lookup relayouts on and off (btlayout.lookup_relayout),
#             the copies' integer keys searched or not
#             (btlayout.upper_copy_keys), in stretches with the copy of the upper levels capped at
#             8kB (btlayout.upper_copy; the btlayout side runs
#             twice, the second time from the copy the first made: walks
#             through internal pages read from their buffers,
#             search_copy() at the cap);
#             SCROLL cursors moved with NEXT/PRIOR/FIRST/LAST/ABSOLUTE/
#             RELATIVE/FORWARD/BACKWARD and MOVE, compared step by step,
#             sometimes with inserts, deletes and relayouts between steps,
#             over every kind of query (those with arrays, forward and
#             backward, and skip-scan shapes counted in the summary);
#             a query that raises the same data exception (SQLSTATE class
#             22) on both sides answers alike and is counted as such, any
#             other error is a finding
#   many:     a table of 40 partitions, each with its own btlayout index
#             (mp_bl), against the same rows under one btree index (mp_bt),
#             with the session's recent buffers capped at 16 chunks for all
#             indexes (btlayout.recent_buffers = 8192): lookups (equality,
#             and the next three keys both ways) of 300 keys in windows of
#             5 partitions moving over 3 windows, with the copies capped at
#             16kB (btlayout.upper_copy), compared with mp_bt; between them,
#             a partition's index reindexed, dropped and made again (in
#             another layout), the partition truncated and refilled (mp_bt
#             loses and gets the same rows), detached and attached, rows
#             inserted into a window
#   plans:    EXPLAIN of the first query of each (shape, kind, scan mode) and
#             of every BTL_FUZZ_EXPLAIN_EVERY-th query: the btlayout side
#             must name its index
#   end:      both tables' contents in index order (forward and backward) and
#             as multisets, before and after a final relayout;
#             btlayout_check(heapallindexed) of every btlayout index; the
#             session's btlayout_backend_state() must show images evicted
#             at the cap, chunks of cold recent-buffer maps given up, and
#             entries invalidated and freed
#
# Environment:
#   BTL_FUZZ_SEED=N           schedule seed (default 20240611); printed
#   BTL_FUZZ_OPS=N            operations (default 3000: 20-30 s on this
#                             2-core machine when idle, about 50 s with both
#                             cores busy).  BTL_FUZZ_OPS=1000000 is the long
#                             mode; progress is printed every 10% and the
#                             rate at the end
#   BTL_FUZZ_MAXROWS=N        rows per table before inserts turn into
#                             deletes (default 20000).  The tables' size
#                             sets the rate: 75-80 operations/s at 20000
#                             (a million operations take 3.5-3.7 hours
#                             here), 207/s at 5000 (80 minutes)
#   BTL_FUZZ_EXPLAIN_EVERY=N  EXPLAIN every N-th query (default 25)
#   BTL_FUZZ_SQLLOG=PATH      write every statement sent, in order, to PATH
#                             (or tmp_check/log/006_fuzz_replay.sql if "1"):
#                             "psql -X -f PATH" on a fresh database with the
#                             extension replays the run
#
# A mismatch prints the seed, the operation number, the shape, the
# statements of both sides and both results.  The schedule depends only on
# the seed (and on row counts, which both sides must agree on), not on the
# machine or on timing, so BTL_FUZZ_SEED=S BTL_FUZZ_OPS=<operation number>
# replays a run up to the failing operation.
#
# All statements go through one long-lived psql session, several queries
# per round trip; each statement is followed by "\echo" and "\warn" markers
# carrying :SQLSTATE and :ROW_COUNT, which split psql's output per statement.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use File::Spec;

my $seed = $ENV{BTL_FUZZ_SEED} // 20240611;
my $nops = $ENV{BTL_FUZZ_OPS} // 3000;
my $maxrows = $ENV{BTL_FUZZ_MAXROWS} // 20000;
my $explain_every = $ENV{BTL_FUZZ_EXPLAIN_EVERY} // 25;
die "BTL_FUZZ_SEED must be a non-negative integer" unless $seed =~ /^\d+$/;
die "BTL_FUZZ_OPS must be a positive integer" unless $nops =~ /^\d+$/ && $nops > 0;
die "BTL_FUZZ_MAXROWS must be a positive integer" unless $maxrows =~ /^\d+$/ && $maxrows > 0;
die "BTL_FUZZ_EXPLAIN_EVERY must be a positive integer"
  unless $explain_every =~ /^\d+$/ && $explain_every > 0;

#
# Random numbers: our own generator (xoshiro128**), because the test
# framework draws from Perl's rand() too (ports, temporary names).
#
my @S;

sub rng_seed
{
	my $x = $_[0] % 4294967296;
	for my $i (0 .. 3)
	{
		# splitmix32
		$x = ($x + 0x9e3779b9) & 0xffffffff;
		my $z = $x;
		$z = (($z ^ ($z >> 16)) * 0x85ebca6b) & 0xffffffff;
		$z = (($z ^ ($z >> 13)) * 0xc2b2ae35) & 0xffffffff;
		$S[$i] = $z ^ ($z >> 16);
	}
	@S = (1, 2, 3, 4) unless $S[0] | $S[1] | $S[2] | $S[3];
}

sub rotl { (($_[0] << $_[1]) | ($_[0] >> (32 - $_[1]))) & 0xffffffff }

sub next32
{
	my $r = (rotl(($S[1] * 5) & 0xffffffff, 7) * 9) & 0xffffffff;
	my $t = ($S[1] << 9) & 0xffffffff;
	$S[2] ^= $S[0];
	$S[3] ^= $S[1];
	$S[1] ^= $S[2];
	$S[0] ^= $S[3];
	$S[2] ^= $t;
	$S[3] = rotl($S[3], 11);
	return $r;
}

sub rnd { return next32() % $_[0]; }    # 0 .. n-1
sub rfloat { return next32() / 4294967296; }    # [0, 1)
sub chance { return rfloat() < $_[0]; }
sub pick { return $_[ rnd(scalar @_) ]; }

# pick from (name => weight, ...) pairs, in the order given
sub wpick
{
	my @pairs = @_;
	my $total = 0;
	for (my $i = 1; $i < @pairs; $i += 2) { $total += $pairs[$i]; }
	my $x = rfloat() * $total;
	for (my $i = 0; $i < @pairs; $i += 2)
	{
		$x -= $pairs[ $i + 1 ];
		return $pairs[$i] if $x < 0;
	}
	return $pairs[-2];
}

# log-uniform integer in 1 .. $max
sub logsize { my $n = int(exp(rfloat() * log($_[0] + 1))); return $n < 1 ? 1 : ($n > $_[0] ? $_[0] : $n); }

#
# Types and value generators.  Values are kept as their text form (undef:
# NULL), chosen so that equal values always print alike (fixed numeric
# scale, no float -0), because ties in ORDER BY may come back in either
# heap order.
#
my %TYPES = (
	int2 => { sql => 'int2', kind => 'int', max => 32767, cross => [ 'int4', 'int8' ] },
	int4 => { sql => 'int4', kind => 'int', max => 2147483647, cross => [ 'int2', 'int8' ] },
	int8 => {
		sql => 'int8', kind => 'int', max => 9223372036854775807,
		cross => [ 'int2', 'int4' ] },
	numeric => { sql => 'numeric', kind => 'numeric', cross => [] },
	float8 => { sql => 'float8', kind => 'float', cross => ['float4'] },
	timestamp => { sql => 'timestamp', kind => 'timestamp', cross => [ 'date', 'timestamptz' ] },
	uuid => { sql => 'uuid', kind => 'uuid', cross => [] },
	text_c => { sql => 'text', kind => 'text', collate => '"C"', cross => [] },
	text_icu => { sql => 'text', kind => 'text', collate => '"und-x-icu"', cross => [] },
	text_default => { sql => 'text', kind => 'text', cross => [] },);
my @TYPE_NAMES = sort keys %TYPES;
my @FIXED_TYPES = qw(float8 int2 int4 int8 timestamp uuid);
my %INT_MAX = (int2 => 32767, int4 => 2147483647, int8 => 9223372036854775807);

sub gen_int
{
	my ($max, $domain) = @_;
	if ($domain ne 'xlarge' && chance(0.05))
	{
		return pick(-$max - 1, $max, 0, -1, 1, $max - 1, -$max);
	}
	return rnd(11) - 3 if $domain eq 'small';
	return rnd(2001) - 1000 if $domain eq 'medium';
	return rnd(65536) - 32768 if $max == 32767;
	return next32() - 2147483648 if $max == 2147483647;
	my $v = (rnd(2147483648) << 31) | rnd(2147483648);    # < 2^62
	$v = $v << 1 if chance(0.5);
	return chance(0.5) ? -$v : $v;
}

my @FLOAT_SPECIAL = (
	'NaN', 'Infinity', '-Infinity', '1.7976931348623157e+308',
	'-1.7976931348623157e+308', '5e-324', '2.2250738585072014e-308', '-1e-300');

sub gen_float
{
	my ($domain, $float4) = @_;
	if ($domain ne 'xlarge' && chance(0.07))
	{
		return pick('NaN', 'Infinity', '-Infinity', '3.4e+38', '1e-45') if $float4;
		return pick(@FLOAT_SPECIAL);
	}
	return pick(0, 0.5, 1, 1.5, 2, 3, -1, 10, 0.1) if $domain eq 'small' || $float4;
	if ($domain eq 'medium')
	{
		my $v = sprintf('%.2f', rnd(200001) / 100 - 1000);
		return $v =~ /^-0\.00$/ ? '0' : $v;
	}
	return sprintf('%s%d.%06de%d', chance(0.5) ? '-' : '', 1 + rnd(9), rnd(1000000), rnd(601) - 300);
}

sub gen_numeric
{
	my ($domain) = @_;
	return pick('NaN', 'Infinity', '-Infinity', '0.000') if $domain ne 'xlarge' && chance(0.06);
	return sprintf('%d.000', rnd(11) - 3) if $domain eq 'small';
	my $sign = chance(0.5) ? '-' : '';
	return sprintf('%s%d.%03d', $sign, rnd(1001), rnd(1000)) if $domain eq 'medium';
	my $int = 1 + rnd(9);
	$int .= rnd(10) for 1 .. rnd(30);
	return sprintf('%s%s.%03d', $sign, $int, rnd(1000));
}

sub gen_timestamp
{
	my ($domain) = @_;
	return pick('infinity', '-infinity') if $domain ne 'xlarge' && chance(0.05);
	return pick('2000-01-01 00:00:00', '2024-02-29 12:30:00', '1999-12-31 23:59:59',
		'2038-01-19 03:14:08')
	  if $domain eq 'small';
	my $bc = $domain =~ /large/ && chance(0.1);
	# timestamps go from 4713 BC to 294276 AD
	my $year = $domain eq 'medium' ? 2000 + rnd(31) : $bc ? 1 + rnd(4712) : 1 + rnd(9999);
	my $ts = sprintf('%04d-%02d-%02d %02d:%02d:%02d',
		$year, 1 + rnd(12), 1 + rnd(28), rnd(24), rnd(60), rnd(60));
	$ts .= sprintf('.%06d', 1 + rnd(999999)) if $domain =~ /large/ && chance(0.3);
	$ts .= ' BC' if $bc;
	return $ts;
}

my @UUID_SMALL = map { sprintf('%08x-0000-4000-8000-%012x', $_ * 0x1111111, $_) } 1 .. 6;

sub gen_uuid
{
	my ($domain) = @_;
	return pick('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff')
	  if $domain ne 'xlarge' && chance(0.05);
	return pick(@UUID_SMALL) if $domain eq 'small';
	my $h = sprintf('%08x%08x%08x%08x', next32(), next32(), next32(), next32());
	$h = '0000' . substr($h, 4) if $domain eq 'medium';   # a common prefix
	return join('-', substr($h, 0, 8), substr($h, 8, 4), substr($h, 12, 4),
		substr($h, 16, 4), substr($h, 20, 12));
}

# Text: ASCII of both cases, digits, punctuation, and UTF-8 (as bytes:
# e-acute, A-umlaut, sharp s, o-slash, a 4-byte emoji), which C, ICU and
# libc collations order differently.  No '%' (used by our templates), no
# newlines, no backslashes.
my @ALPHA = (
	'a' .. 'e', 'A' .. 'E', 'x', 'Z', '0' .. '3', ' ', '-', '_', '.',
	"\xc3\xa9", "\xc3\x89", "\xc3\x84", "\xc3\x9f", "\xc3\xb8", "\xf0\x9f\x98\x80");
my @TEXT_SMALL = (
	'', 'a', 'A', 'b', 'B', 'ab', 'a b', "\xc3\xa9", 'e', 'E', "\xc3\x84",
	'z', "\xc3\x9f", 'ss', '1', '10', '9', ' ', "o'k");
my @TEXT_PREFIX = ('', 'common prefix ', 'x' x 60, 'aaaaaaaaaaaaaaaaaaaa', 'Aa');

sub gen_text
{
	my ($domain, $wide) = @_;
	return pick(@TEXT_SMALL) if $domain eq 'small';
	my $s = '';
	if ($domain eq 'medium')
	{
		$s .= pick(@ALPHA) for 1 .. rnd(11);
		return $s;
	}
	# wide: long common prefixes make long pivots too, hence deep trees
	$s = $wide && chance(0.6) ? pick('y' x 500, 'common ' x 40) : pick(@TEXT_PREFIX);
	my $len = chance($wide ? 0.5 : 0.03) ? 100 + rnd(300) : ($domain eq 'xlarge' ? 8 : 1) + rnd(40);
	$s .= pick(@ALPHA) for 1 .. $len;
	return $s;
}

sub gen_value
{
	my ($tname, $domain, $wide) = @_;
	my $t = $TYPES{$tname};
	my $k = $t->{kind};
	return gen_int($t->{max}, $domain) if $k eq 'int';
	return gen_float($domain) if $k eq 'float';
	return gen_numeric($domain) if $k eq 'numeric';
	return gen_timestamp($domain) if $k eq 'timestamp';
	return gen_uuid($domain) if $k eq 'uuid';
	return gen_text($domain, $wide);
}

sub quote { my $v = shift; $v =~ s/'/''/g; return "'$v'"; }

# A typed constant
sub lit
{
	my ($v, $type) = @_;
	return "NULL::$type" unless defined $v;
	return quote($v) . "::$type";
}

#
# Shapes
#
my @shapes;
my @LAYOUTS = qw(none eytzinger veb btorder blocked);

sub make_shape
{
	my ($i) = @_;
	my $sh = { name => "s$i", rows => 0, next_id => 1, reservoir => [], keys => [], incl => [] };
	my $nkeys = $i == 0 ? 1 : $i == 1 ? 2 + rnd(2) : 1 + rnd(3);
	# A "walkable" shape has pages the layout-directed search can walk:
	# fixed-width keys, one item width (few posting lists), mostly no NULLs
	my $walkable = $i == 2 || chance(0.3);
	$sh->{walkable} = $walkable;
	$sh->{unique} = chance(0.25);
	$sh->{nulls_not_distinct} = $sh->{unique} && chance(0.3);
	# half the time the first shape's one column is an integer, ascending:
	# its copy of the upper levels keeps its pivots' keys
	my $intkey = $i == 0 && chance(0.5);
	for my $j (1 .. $nkeys)
	{
		my @types = $walkable ? @FIXED_TYPES : @TYPE_NAMES;
		my $tname = $intkey ? pick(qw(int2 int4 int8 timestamp)) : pick(@types);
		my $domain = wpick(small => 4, medium => 4, large => 3);
		$domain = wpick(small => 6, medium => 3, large => 1) if $j == 1 && $nkeys > 1;
		$domain = wpick(small => 1, medium => 4, large => 4) if $walkable;
		# a unique index gets a wide last column without special values, so
		# that inserts mostly succeed
		if ($sh->{unique} && $j == $nkeys)
		{
			$tname = pick(grep { $_ ne 'int2' } @types);
			$domain = 'xlarge';
		}
		my $dir = $intkey || chance(0.6) ? 'ASC' : 'DESC';
		my $nulls = chance(0.5) ? ($dir eq 'ASC' ? 'LAST' : 'FIRST') : ($dir eq 'ASC' ? 'FIRST' : 'LAST');
		push @{ $sh->{keys} }, {
			name => "k$j", type => $tname, domain => $domain, dir => $dir, nulls => $nulls,
			# text: long keys and pivots, deeper trees (one column at most)
			wide => !(grep { $_->{wide} } @{ $sh->{keys} }) && $TYPES{$tname}{kind} eq 'text' && chance(0.35),
			nullfrac => $sh->{nulls_not_distinct} ? 0.01
			: $walkable ? wpick(0 => 3, 0.01 => 1)
			: wpick(0.05 => 6, 0 => 1, 0.2 => 1) };
	}
	if (chance(0.3))
	{
		for my $j (1 .. 1 + rnd(2))
		{
			push @{ $sh->{incl} }, {
				name => "i$j", type => pick(@TYPE_NAMES), domain => 'medium', nullfrac => 0.05 };
		}
	}
	$sh->{layout} = pick(@LAYOUTS);
	my @opts;
	# fillfactor 10-30: CREATE INDEX and REINDEX build 3-level trees of
	# fixed-width keys from 20000 rows
	if ($walkable && chance(0.3)) { push @opts, 'fillfactor = ' . (10 + rnd(21)); }
	elsif (chance(0.5)) { push @opts, 'fillfactor = ' . (50 + rnd(51)); }
	push @opts, 'deduplicate_items = off' if chance($walkable ? 0.6 : 0.25);
	$sh->{opts} = [@opts];
	return $sh;
}

sub finish_shape
{
	my ($sh) = @_;
	my @cols = ('id int8');
	for my $c (@{ $sh->{keys} }, @{ $sh->{incl} })
	{
		my $t = $TYPES{ $c->{type} };
		push @cols, "$c->{name} $t->{sql}" . ($t->{collate} ? " COLLATE $t->{collate}" : '');
	}
	push @cols, 'pad text';
	$sh->{colnames} = [ 'id', (map { $_->{name} } @{ $sh->{keys} }, @{ $sh->{incl} }), 'pad' ];
	$sh->{table_ddl} = 'CREATE TABLE %T (' . join(', ', @cols) . ')';
	my $idx = 'CREATE ' . ($sh->{unique} ? 'UNIQUE ' : '') . 'INDEX %I ON %T USING %AM ('
	  . join(', ', map { "$_->{name} $_->{dir} NULLS $_->{nulls}" } @{ $sh->{keys} }) . ')';
	$idx .= ' INCLUDE (' . join(', ', map { $_->{name} } @{ $sh->{incl} }) . ')' if @{ $sh->{incl} };
	$idx .= ' NULLS NOT DISTINCT' if $sh->{nulls_not_distinct};
	$sh->{index_ddl} = $idx;
}

# Statement for one side: %T table, %I index, %AM access method, %W the
# WITH clause
sub side_sql
{
	my ($sql, $sh, $side) = @_;
	my $t = "$sh->{name}_$side";
	$sql =~ s/%I/${t}_idx/g;
	$sql =~ s/%T/$t/g;
	if ($sql =~ /%AM|%W/)
	{
		my @opts = @{ $sh->{opts} };
		push @opts, "layout = $sh->{layout}" if $side eq 'bl';
		my $with = @opts ? ' WITH (' . join(', ', @opts) . ')' : '';
		my $am = $side eq 'bl' ? 'btlayout' : 'btree';
		$sql =~ s/%AM/$am/g;
		$sql =~ s/%W/$with/g;
	}
	return $sql;
}

sub shape_desc
{
	my ($sh) = @_;
	return side_sql($sh->{table_ddl}, $sh, 'bl') . '; ' . side_sql($sh->{index_ddl} . '%W', $sh, 'bl')
	  . " (current layout $sh->{layout}; NULLs "
	  . join('/', map { $_->{nullfrac} } @{ $sh->{keys} }) . '; domains '
	  . join('/', map { $_->{domain} . ($_->{wide} && $TYPES{ $_->{type} }{kind} eq 'text' ? ' wide' : '') } @{ $sh->{keys} })
	  . ')';
}

#
# Rows
#
sub gen_key_value
{
	my ($c) = @_;
	return undef if chance($c->{nullfrac});
	return gen_value($c->{type}, $c->{domain}, $c->{wide});
}

# a key value for a query or an update: mostly one that is in the table
sub key_const
{
	my ($sh, $j) = @_;
	return undef if chance(0.005);    # "= NULL" makes the plan a constant false
	my $res = $sh->{reservoir};
	if (@$res && chance(0.6))
	{
		my $v = $res->[ rnd(scalar @$res) ][$j];
		return $v if defined $v || chance(0.3);
	}
	my $c = $sh->{keys}[$j];
	return gen_value($c->{type}, chance(0.8) && $c->{domain} ne 'xlarge' ? $c->{domain} : pick('small', 'medium', 'large'));
}

sub remember
{
	my ($sh, $keys) = @_;
	my $res = $sh->{reservoir};
	if (@$res < 400) { push @$res, $keys; }
	elsif (chance(0.1)) { $res->[ rnd(400) ] = $keys; }
}

sub insert_sql
{
	my ($sh, $n) = @_;
	my @rows;
	my $prev;
	# a unique index: rare duplicates, whose batch must fail alike
	my ($dup_prev, $dup_res) = $sh->{unique} ? (0.002, 0.001) : (0.1, 0.1);
	for (1 .. $n)
	{
		my @k;
		if ($prev && chance($dup_prev)) { @k = @$prev; }    # duplicate of the previous row
		elsif (@{ $sh->{reservoir} } && chance($dup_res))
		{
			@k = @{ $sh->{reservoir}[ rnd(scalar @{ $sh->{reservoir} }) ] };
		}
		else { @k = map { gen_key_value($_) } @{ $sh->{keys} }; }
		$prev = [@k];
		remember($sh, [@k]) if chance(0.2);
		my @v = ($sh->{next_id}++, @k, (map { gen_key_value($_) } @{ $sh->{incl} }),
			chance(0.02) ? 'p' x (200 + rnd(1500)) : 'p' x rnd(40));
		push @rows, '(' . join(', ', map { defined $_ ? quote($_) : 'NULL' } @v) . ')';
	}
	return 'INSERT INTO %T (' . join(', ', @{ $sh->{colnames} }) . ') VALUES ' . join(",\n", @rows);
}

#
# Predicates
#
my @CMP = ('<', '<=', '>', '>=');

# a constant for column $j, of its own type or (if $cross) a cross type
sub col_const
{
	my ($sh, $j, $cross) = @_;
	my $cross_types = $TYPES{ $sh->{keys}[$j]{type} }{cross};
	return const_of($sh, $j, $cross && @$cross_types ? pick(@$cross_types) : undef);
}

# a constant for column $j of type $ct (undef: the column's)
sub const_of
{
	my ($sh, $j, $ct) = @_;
	my $c = $sh->{keys}[$j];
	my $t = $TYPES{ $c->{type} };
	my $v = key_const($sh, $j);
	return lit($v, $t->{sql}) unless defined $ct;
	if ($t->{kind} eq 'int')
	{
		my ($cmax, $max) = ($INT_MAX{$ct}, $t->{max});
		if ($cmax > $max && chance(0.2))
		{
			$v = pick($max + 1, -$max - 2, gen_int($cmax, 'large'));
		}
		elsif (defined $v && ($v > $cmax || $v < -$cmax - 1))
		{
			$v = gen_int($cmax, pick('small', 'medium', 'large'));
		}
	}
	elsif ($ct eq 'float4')
	{
		$v = gen_float($c->{domain}, 1) if defined $v;
	}
	elsif ($ct eq 'date')
	{
		$v =~ s/ \d\d:\d\d:\d\d(\.\d+)?// if defined $v;
	}
	elsif ($ct eq 'timestamptz')
	{
		$v = 'infinity' if defined $v && $v =~ /BC/;
		$v .= '+0' . rnd(10) if defined $v && $v =~ /^\d/;
	}
	return lit($v, $ct);
}

sub qual
{
	my ($sh, $j, $what, $cross) = @_;
	my $c = $sh->{keys}[$j]{name};
	my $type = $TYPES{ $sh->{keys}[$j]{type} }{sql};
	my $k = sub { col_const($sh, $j, $cross && chance(0.7)) };
	return "$c = " . $k->() if $what eq 'eq';
	return "$c IS NULL" if $what eq 'null';
	return "$c IS NOT NULL" if $what eq 'notnull';
	if ($what eq 'range')
	{
		my $form = wpick(one => 5, two => 5, between => 2, redundant => 1, contradictory => 1);
		return "$c " . pick(@CMP) . ' ' . $k->() if $form eq 'one';
		return "$c " . pick('>', '>=') . ' ' . $k->() . " AND $c " . pick('<', '<=') . ' ' . $k->()
		  if $form eq 'two';
		return "$c BETWEEN " . $k->() . ' AND ' . $k->() if $form eq 'between';
		if ($form eq 'redundant')
		{
			my $op = pick(@CMP);
			return "$c $op " . $k->() . " AND $c $op " . $k->();
		}
		my $v = $k->();
		return "$c " . pick('>', '>=') . " $v AND $c " . pick('<', '<=') . " $v";
	}
	# arrays: duplicates, NULLs, sometimes empty; an IN list may mix
	# types, an array is of the column's type or of one cross type
	my $n = rnd(8);
	my $cross_types = $TYPES{ $sh->{keys}[$j]{type} }{cross};
	my $arrtype = $cross && @$cross_types && chance(0.7) ? pick(@$cross_types) : undef;
	my $in_list = $n && chance(0.3);
	my @el = map { $in_list ? $k->() : const_of($sh, $j, $arrtype) } 1 .. $n;
	$arrtype //= $type;
	push @el, $el[ rnd(scalar @el) ] if @el && chance(0.4);
	push @el, "NULL::$arrtype" if chance(0.2);
	return "$c IN (" . join(', ', @el) . ')' if $in_list;
	my $op = chance(0.8) ? '=' : pick(@CMP);
	return "$c $op ANY (ARRAY[" . join(', ', @el) . "]::${arrtype}[])";
}

# Column j's ORDER BY item, in the index's direction or reversed
sub order_item
{
	my ($c, $reverse) = @_;
	my ($dir, $nulls) = ($c->{dir}, $c->{nulls});
	if ($reverse)
	{
		$dir = $dir eq 'ASC' ? 'DESC' : 'ASC';
		$nulls = $nulls eq 'FIRST' ? 'LAST' : 'FIRST';
	}
	return "$c->{name} $dir NULLS $nulls";
}

my @QUERY_KINDS = (
	eq_prefix => 14, range_lead => 14, range_later => 6, saop => 12, skip => 6, nulls => 8,
	cross_type => 8, mixed => 10, full => 3);

# Quals of a query of kind $kind; returns (kind, [quals], number of leading
# columns with an equality)
sub gen_quals
{
	my ($sh, $kind) = @_;
	my $n = scalar @{ $sh->{keys} };
	my @w = map { 'none' } 1 .. $n;
	my $cross = 0;
	$kind = 'range_lead' if $kind eq 'range_later' && $n == 1;
	$kind = 'saop' if $kind eq 'skip' && $n == 1;
	if ($kind eq 'cross_type')
	{
		my @cols = grep { @{ $TYPES{ $sh->{keys}[$_]{type} }{cross} } } 0 .. $n - 1;
		if (@cols)
		{
			$cross = 1;
			my $j = pick(@cols);
			$w[$_] = 'eq' for 0 .. $j - 1;
			$w[$j] = pick('eq', 'range', 'range', 'in');
		}
		else { $kind = 'eq_prefix'; }
	}
	if ($kind eq 'eq_prefix')
	{
		my $p = 1 + rnd($n);
		$w[$_] = 'eq' for 0 .. $p - 1;
		$w[$p] = pick('range', 'in', 'null', 'notnull') if $p < $n && chance(0.4);
	}
	elsif ($kind eq 'range_lead')
	{
		$w[0] = 'range';
		$w[1] = pick('range', 'range', 'in', 'eq', 'notnull') if $n > 1 && chance(0.4);
		$w[2] = pick('range', 'eq') if $n > 2 && chance(0.3);
	}
	elsif ($kind eq 'range_later')
	{
		$w[0] = pick('none', 'eq', 'in');
		my $j = 1 + rnd($n - 1);
		$w[$j] = 'range';
	}
	elsif ($kind eq 'saop')
	{
		$w[0] = 'in';
		$w[1] = pick('in', 'eq', 'range') if $n > 1 && chance(0.5);
	}
	elsif ($kind eq 'skip')
	{
		# Skip-scan shapes: no equality on the first column, an array (or an
		# equality) on a later one; 18 and later skip through the first
		# column's values, earlier versions scan the whole index (or the
		# first column's range)
		$w[0] = pick('none', 'none', 'range', 'notnull');
		my $j = 1 + rnd($n - 1);
		$w[$j] = pick('in', 'in', 'eq');
		$w[ $j == 1 ? 2 : 1 ] = pick('in', 'range', 'eq') if $n > 2 && chance(0.4);
	}
	elsif ($kind eq 'nulls')
	{
		my $j = rnd($n);
		if (chance(0.5)) { $w[$_] = 'eq' for 0 .. $j - 1; }
		$w[$j] = pick('null', 'notnull');
	}
	elsif ($kind eq 'mixed')
	{
		$w[$_] = wpick(none => 3, eq => 3, range => 3, in => 2, null => 1, notnull => 1) for 0 .. $n - 1;
	}
	# full: no qual
	my @quals;
	for my $j (0 .. $n - 1)
	{
		next if $w[$j] eq 'none';
		push @quals, qual($sh, $j, $w[$j], $cross || chance(0.05));
	}
	my $eq = 0;
	$eq++ while $eq < $n && $w[$eq] eq 'eq';
	return ($kind, \@quals, $eq);
}

#
# The session
#
my $node = PostgreSQL::Test::Cluster->new('fuzz');
$node->init;
$node->append_conf('postgresql.conf', qq{
autovacuum = off
max_worker_processes = 8
max_parallel_workers = 4
log_min_messages = warning
log_statement = none
log_min_error_statement = panic
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION btlayout; CREATE EXTENSION pageinspect');

# BackgroundPsql notes every query and its output, which would fill the
# log: silence Test::More's output (not its failure output, diag) until
# the assertions
my $tb = Test::More->builder;
my $saved_output = $tb->output;
open(my $devnull, '>', File::Spec->devnull) or die;
$tb->output($devnull);

my $psql = $node->background_psql('postgres', on_error_stop => 0);
# each query gets the whole timeout, not the session
$psql->set_query_timer_restart();

my $sqllog;
if ($ENV{BTL_FUZZ_SQLLOG})
{
	my $path = $ENV{BTL_FUZZ_SQLLOG} eq '1'
	  ? "$PostgreSQL::Test::Utils::log_path/006_fuzz_replay.sql" : $ENV{BTL_FUZZ_SQLLOG};
	open($sqllog, '>', $path) or die "could not open $path: $!";
	print $sqllog "-- btlayout fuzz replay, seed $seed\n"
	  . "CREATE EXTENSION IF NOT EXISTS btlayout;\nCREATE EXTENSION IF NOT EXISTS pageinspect;\n";
	diag("SQL log: $path");
}

my %count;           # operations by kind
my %qkinds;          # query kinds compared
my @problems;        # mismatches and unexpected errors, in order
my $comparisons = 0;
my $mismatches = 0;
my $unexpected = 0;
my $failed_alike = 0;    # queries raising the same data exception on both sides
my $first_failed_alike;
my $stop = 0;
my ($relayouts, $relayout_pages, $vacuum_pages) = (0, 0, 0);
my ($explained, $explained_used, %plan_nodes, %explain_seen);
my @unused_plans;
my $queries = 0;
our $current_op = 0;    # for the report of a lost session

# Run statements in one round trip; returns one hash per statement:
# out (its rows), state (SQLSTATE), rows (ROW_COUNT), err (its stderr)
#
# Round trips are kept below 32 kB, half a pipe's buffer: a larger one made
# IPC::Run fail a write with EAGAIN ("ack Resource temporarily unavailable")
# after 202,996 operations of a long run, once psql's output had filled the
# other pipe.
sub run
{
	my @res;
	my @chunk;
	my $size = 0;
	for my $stmt (@_)
	{
		if (@chunk && $size + length($stmt) > 32768)
		{
			push @res, run_batch(@chunk);
			@chunk = ();
			$size = 0;
		}
		push @chunk, $stmt;
		$size += length($stmt);
	}
	push @res, run_batch(@chunk) if @chunk;
	return @res;
}

sub run_batch
{
	my @stmts = @_;
	my $batch = join('', map { "$_;\n\\echo '\@\@E' :SQLSTATE :ROW_COUNT\n\\warn '\@\@W'\n" } @stmts);
	print $sqllog $batch if $sqllog;
	my $out = eval { $psql->query($batch) };
	my $err = $psql->{stderr};
	if (!defined $out || $err =~ /connection to server was lost|server closed the connection/)
	{
		# most likely a backend crash: say what was running, then stop
		diag("psql session lost at operation #$current_op (seed $seed): " . ($@ || 'connection lost')
			  . "\n  stderr: " . clip($err, 3000) . "\n  statements of the round trip:\n    "
			  . join("\n    ", map { clip($_, 2000) } @stmts)
			  . "\n  replay: BTL_FUZZ_SEED=$seed BTL_FUZZ_OPS=$current_op scripts/test.sh --quick --tap t/006_fuzz.pl"
			  . ' (server log: tmp_check/log/006_fuzz_fuzz.log)');
		$tb->output($saved_output);
		fail("psql session lost at operation #$current_op (seed $seed)");
		done_testing();
		exit 1;
	}
	# query() leaves stderr to its caller: clear it, or it accumulates
	$psql->{stderr} = '';
	my @res;
	my @acc;
	for my $line (split /\n/, $out, -1)
	{
		if ($line =~ /^\@\@E (\S*) (\S*)$/)
		{
			push @res, { out => join("\n", @acc), state => $1, rows => $2 };
			@acc = ();
		}
		else { push @acc, $line; }
	}
	# (query() removed the last marker's newline with its own banner)
	my @errs = split /^\@\@W(?:\n|\z)/m, $err, -1;
	die "psql protocol: " . scalar(@stmts) . " statements, " . scalar(@res)
	  . " results\nstdout: $out\nstderr: $err"
	  unless @res == @stmts;
	$res[$_]{err} = $errs[$_] // '' for 0 .. $#res;
	return @res;
}

sub clip
{
	my ($s, $n) = @_;
	$n //= 1500;
	$s //= '';
	return length($s) > $n ? substr($s, 0, $n) . '... (' . length($s) . ' bytes)' : $s;
}

# an error as the other side would have printed it
sub norm_err
{
	my ($e) = @_;
	$e =~ s/^psql:[^:\n]*:\d+: //mg;
	$e =~ s/\b(s\d+)_b[tl](_idx)?\b/$1 . '_X' . ($2 \/\/ '')/ge;
	$e =~ s/^(DEBUG|NOTICE|LOG|INFO):.*\n?//mg;
	return $e;
}

sub report
{
	my ($what, $opno, $sh, @lines) = @_;
	my $msg = "$what at operation #$opno (seed $seed)\n"
	  . ($sh ? "  shape $sh->{name}: " . shape_desc($sh) . "\n" : '')
	  . join('', map { "  $_\n" } @lines)
	  . "  replay: BTL_FUZZ_SEED=$seed BTL_FUZZ_OPS=$opno scripts/test.sh --quick --tap t/006_fuzz.pl"
	  . " (add BTL_FUZZ_SQLLOG=/tmp/replay.sql for the statements)\n";
	push @problems, $msg;
	diag($msg) if @problems <= 10;
}

# Compare the results of one statement on both sides
sub same_result
{
	my ($a, $b) = @_;
	return 0 unless $a->{state} eq $b->{state};
	return norm_err($a->{err}) eq norm_err($b->{err}) if $a->{state} ne '00000';
	return $a->{out} eq $b->{out} && $a->{rows} eq $b->{rows};
}

# Both sides of a query raised the same data exception (SQLSTATE class
# 22): the server's answer to the query, whichever index serves it.  The
# case met so far is nbtree's own: on PostgreSQL 18 a skip scan over a
# timestamp column steps from -infinity to the next int64, which is no
# valid timestamp, and comparing that with a timestamptz bound raises
# "timestamp out of range" (rows (-infinity, -infinity) under an index on
# (k1, k2 DESC), "k1 < <timestamptz> AND k2 >= <timestamp>"; a sequential
# scan answers).  btlayout scans with nbtree's array keys and answers
# alike.  Any other error, or errors that differ, is a finding.
sub data_error_alike
{
	my ($a, $b) = @_;
	return $a->{state} =~ /^22/ && same_result($a, $b);
}

sub show_result
{
	my ($r) = @_;
	return $r->{state} eq '00000'
	  ? "rows=$r->{rows}: " . clip($r->{out})
	  : "ERROR $r->{state}: " . clip(norm_err($r->{err}));
}

# Multiset difference of two row lists, for a mismatch report
sub row_diff
{
	my ($a, $b) = @_;
	my %n;
	$n{$_}++ for split /\n/, $a;
	$n{$_}-- for split /\n/, $b;
	my @only_a = grep { $n{$_} > 0 } sort keys %n;
	my @only_b = grep { $n{$_} < 0 } sort keys %n;
	return (
		'rows only in btree (' . scalar(@only_a) . '): ' . clip(join(' | ', @only_a), 1000),
		'rows only in btlayout (' . scalar(@only_b) . '): ' . clip(join(' | ', @only_b), 1000));
}

#
# Scan modes
#
my %MODE_GUCS = (
	indexscan => { enable_indexscan => 'on', enable_indexonlyscan => 'off', enable_bitmapscan => 'off' },
	indexonly => { enable_indexscan => 'on', enable_indexonlyscan => 'on', enable_bitmapscan => 'off' },
	bitmap => { enable_indexscan => 'off', enable_indexonlyscan => 'off', enable_bitmapscan => 'on' },);
my %current_gucs;

# Stretches of queries with the copy capped at 8kB: how many queries
# met an index of three levels or more (judged by its btree twin), how
# many lookups went from the capped copy to their leaf there (each read
# an internal page from its buffer where the copy had no image), and the
# most images a copy held
my $capped = 0;
my %capped = (queries => 0, deep => 0, hits => 0, pages => 0);

sub capped_count
{
	my ($before, $after) = @_;
	$capped{queries}++;
	return unless $before->{state} eq '00000' && $after->{state} eq '00000';
	my ($hits, $level, $pages) = split /\|/, $after->{out};
	$capped{pages} = $pages if $pages > $capped{pages};
	return unless $level >= 2;
	$capped{deep}++;
	$capped{hits} += $hits - $before->{out};
}

# SET statements (one string, or none) that switch to a scan mode
sub mode_sql
{
	my ($mode, $prefetch, $capped, $nokeys, $norelayout) = @_;
	my %want = %{ $MODE_GUCS{ $mode eq 'parallel' ? 'indexonly' : $mode } };
	$want{max_parallel_workers_per_gather} = $mode eq 'parallel' ? 2 : 0;
	$want{parallel_setup_cost} = $mode eq 'parallel' ? 0 : 1000;
	$want{parallel_tuple_cost} = $mode eq 'parallel' ? 0 : 0.1;
	$want{'btlayout.prefetch'} = $prefetch ? 'on' : 'off';
	$want{'btlayout.upper_copy'} = $capped ? "'8kB'" : "'4MB'";
	$want{'btlayout.upper_copy_keys'} = $nokeys ? 'off' : 'on';
	$want{'btlayout.lookup_relayout'} = $norelayout ? 'off' : 'on';
	my @set;
	for my $g (sort keys %want)
	{
		next if defined $current_gucs{$g} && $current_gucs{$g} eq $want{$g};
		push @set, "SET $g = $want{$g}";
		$current_gucs{$g} = $want{$g};
	}
	return @set ? (join('; ', @set)) : ();
}

#
# Operations
#
sub check_write
{
	my ($opno, $sh, $what, $tmpl, $rbt, $rbl) = @_;
	$comparisons++;
	if (!same_result($rbt, $rbl))
	{
		$mismatches++;
		$stop = 1;    # the tables differ from here on
		report("MISMATCH ($what)", $opno, $sh, 'btree:    ' . clip(side_sql($tmpl, $sh, 'bt'), 2000),
			'result:   ' . show_result($rbt), 'btlayout: ' . clip(side_sql($tmpl, $sh, 'bl'), 2000),
			'result:   ' . show_result($rbl));
		return 0;
	}
	if ($rbt->{state} eq '00000') { $count{"$what ok"}++; }
	else { $count{"$what failed alike ($rbt->{state})"}++; }
	return 1;
}

# The same write on both sides
sub write_both
{
	my ($opno, $sh, $what, $tmpl) = @_;
	my ($rbt, $rbl) = run(side_sql($tmpl, $sh, 'bt'), side_sql($tmpl, $sh, 'bl'));
	if (check_write($opno, $sh, $what, $tmpl, $rbt, $rbl) && $rbt->{state} eq '00000')
	{
		$sh->{rows} += $rbt->{rows} if $what eq 'insert';
		$sh->{max_rows} = $sh->{rows} if $sh->{rows} > ($sh->{max_rows} // 0);
		$sh->{rows} -= $rbt->{rows} if $what eq 'delete';
	}
	return ($rbt, $rbl);
}

# Maintenance that must succeed
sub must_succeed
{
	my ($opno, $sh, $what, $stmts, $res) = @_;
	for my $i (0 .. $#$res)
	{
		next if $res->[$i]{state} eq '00000';
		$unexpected++;
		$stop = 1;
		report("UNEXPECTED ERROR ($what)", $opno, $sh, 'statement: ' . clip($stmts->[$i], 2000),
			'error: ' . clip($res->[$i]{err}));
		return 0;
	}
	return 1;
}

sub op_insert
{
	my ($opno, $sh) = @_;
	my $n = logsize($sh->{unique} ? 300 : 2000);
	write_both($opno, $sh, 'insert', insert_sql($sh, $n));
}

sub delete_pred
{
	my ($sh) = @_;
	my $pred = delete_pred1($sh);
	# mostly thinned, so that the tables grow into trees of some height
	$pred .= ' AND id % ' . (2 + rnd(8)) . ' = 0' if chance(0.7);
	return $pred;
}

sub delete_pred1
{
	my ($sh) = @_;
	my $n = scalar @{ $sh->{keys} };
	my $form = wpick(range => 5, eq => 2, null => 1, prefix_range => 2, modulo => 1);
	my $j = chance(0.7) ? 0 : rnd($n);
	return 'id % ' . (3 + rnd(20)) . ' = ' . rnd(3) if $form eq 'modulo';
	return qual($sh, $j, 'eq', chance(0.2)) if $form eq 'eq';
	return qual($sh, $j, pick('null', 'null', 'notnull')) . ' AND id % 3 = ' . rnd(3) if $form eq 'null';
	if ($form eq 'prefix_range' && $n > 1)
	{
		return qual($sh, 0, 'eq') . ' AND ' . qual($sh, 1, 'range');
	}
	return qual($sh, $j, 'range', chance(0.2));
}

sub op_delete
{
	my ($opno, $sh) = @_;
	my $pred = $sh->{rows} > $maxrows
	  ? 'id % ' . (2 + rnd(3)) . ' = ' . rnd(2)    # trim a full table
	  : delete_pred($sh);
	write_both($opno, $sh, 'delete', "DELETE FROM %T WHERE $pred");
}

sub op_update
{
	my ($opno, $sh) = @_;
	my $n = scalar @{ $sh->{keys} };
	my $j = chance(0.6) ? 0 : rnd($n);
	my $c = $sh->{keys}[$j];
	my $t = $TYPES{ $c->{type} };
	my $form = $sh->{unique} ? wpick(by_id => 5, include => 1) : wpick(by_id => 3, delta => 4, to_null => 1, include => 1);
	my $sql;
	if ($form eq 'by_id')
	{
		# unique: one row, so whether it conflicts does not depend on the order of rows
		my @ids = map { 1 + rnd($sh->{next_id}) } 1 .. ($sh->{unique} ? 1 : 1 + rnd(30));
		my $v = key_const($sh, $j);
		$sql = "UPDATE %T SET $c->{name} = " . lit($v, $t->{sql}) . ' WHERE id IN (' . join(', ', @ids) . ')';
	}
	elsif ($form eq 'delta')
	{
		my $k = $t->{kind};
		my $expr = $k eq 'int' ? "$c->{name} + " . (rnd(7) - 3)
		  : $k eq 'numeric' ? "$c->{name} + 1.500"
		  : $k eq 'float' ? pick("$c->{name} * 2", "$c->{name} + 0.5")
		  : $k eq 'timestamp' ? pick("$c->{name} + interval '7 hours'", "$c->{name} - interval '3 days'")
		  : $k eq 'text' ? pick("$c->{name} || 'x'", "upper($c->{name})", "substr($c->{name}, 2)", "'p' || $c->{name}")
		  : lit(key_const($sh, $j), $t->{sql});
		$sql = "UPDATE %T SET $c->{name} = $expr WHERE " . qual($sh, $j, pick('range', 'eq', 'in'));
	}
	elsif ($form eq 'to_null')
	{
		$sql = "UPDATE %T SET $c->{name} = NULL WHERE " . qual($sh, $j, 'eq');
	}
	else
	{
		my $set = @{ $sh->{incl} }
		  ? "$sh->{incl}[0]{name} = " . lit(gen_value($sh->{incl}[0]{type}, 'medium'), $TYPES{ $sh->{incl}[0]{type} }{sql})
		  : "pad = pad || 'u'";
		$sql = "UPDATE %T SET $set WHERE " . qual($sh, 0, pick('range', 'eq'));
	}
	write_both($opno, $sh, 'update', $sql);
}

sub op_vacuum
{
	my ($opno, $sh) = @_;
	my $v = wpick('VACUUM' => 6, 'VACUUM (FREEZE)' => 1, 'VACUUM (INDEX_CLEANUP ON)' => 1,
		'VACUUM ANALYZE' => 1, 'VACUUM FULL' => 0.5);
	my @stmts = (side_sql("$v %T", $sh, 'bt'), 'SET client_min_messages = debug2',
		side_sql("$v %T", $sh, 'bl'), 'SET client_min_messages = warning', level_sql($sh));
	my @res = run(@stmts);
	return unless must_succeed($opno, $sh, 'vacuum', \@stmts, \@res);
	note_level($sh, $res[-1]);
	while ($res[2]{err} =~ /index "\w+": (\d+) pages rewritten in layout/g) { $vacuum_pages += $1; }
	$count{$v eq 'VACUUM FULL' ? 'vacuum full' : 'vacuum'}++;
}

sub relayout
{
	my ($opno, $sh, $what, @pre) = @_;
	my @stmts = (@pre, side_sql("SELECT btlayout_relayout('%I')", $sh, 'bl'));
	my @res = run(@stmts);
	return unless must_succeed($opno, $sh, $what, \@stmts, \@res);
	$relayouts++;
	$relayout_pages += $res[-1]{out};
	$count{$what}++;
}

sub op_relayout { relayout($_[0], $_[1], 'relayout'); }

sub op_set_layout
{
	my ($opno, $sh) = @_;
	$sh->{layout} = pick(@LAYOUTS);
	relayout($opno, $sh, 'set layout + relayout',
		side_sql("ALTER INDEX %I SET (layout = $sh->{layout})", $sh, 'bl'));
}

# The layout switched with no relayout: the pages keep their bodies where
# the old layout (or nbtree, or an earlier switch) put them, and the new
# layout's walk meets those placements until lookups or VACUUM rewrite them
sub op_switch_layout
{
	my ($opno, $sh) = @_;
	$sh->{layout} = pick(@LAYOUTS);
	my @stmts = (side_sql("ALTER INDEX %I SET (layout = $sh->{layout})", $sh, 'bl'));
	my @res = run(@stmts);
	return unless must_succeed($opno, $sh, 'switch layout', \@stmts, \@res);
	$sh->{switched} = 1;
	$count{'switch layout, no relayout'}++;
}

sub op_set_options
{
	my ($opno, $sh) = @_;
	my @opts = grep { !/^(fillfactor|deduplicate_items)/ } @{ $sh->{opts} };
	push @opts, 'fillfactor = ' . ($sh->{walkable} && chance(0.3) ? 10 + rnd(21) : 50 + rnd(51)) if chance(0.7);
	push @opts, 'deduplicate_items = ' . pick('on', 'off') if chance(0.7);
	return unless @opts;
	$sh->{opts} = [@opts];
	my $set = 'ALTER INDEX %I SET (' . join(', ', @opts) . ')';
	my @stmts = (side_sql($set, $sh, 'bt'), side_sql($set, $sh, 'bl'));
	my @res = run(@stmts);
	$count{'alter options'}++ if must_succeed($opno, $sh, 'alter options', \@stmts, \@res);
}

sub op_reindex
{
	my ($opno, $sh) = @_;
	my $r = chance(0.3) ? 'REINDEX INDEX CONCURRENTLY %I' : 'REINDEX INDEX %I';
	my @stmts;
	if ($sh->{walkable} && chance(0.5))
	{
		# leaves filled to 10-30%: a 3-level tree of fixed-width keys
		$sh->{opts} = [ (grep { !/^fillfactor/ } @{ $sh->{opts} }), 'fillfactor = ' . (10 + rnd(21)) ];
		my $alter = 'ALTER INDEX %I SET (' . join(', ', @{ $sh->{opts} }) . ')';
		push @stmts, side_sql($alter, $sh, 'bt'), side_sql($alter, $sh, 'bl');
	}
	push @stmts, side_sql($r, $sh, 'bt'), side_sql($r, $sh, 'bl'), level_sql($sh);
	my @res = run(@stmts);
	$count{reindex}++ if must_succeed($opno, $sh, 'reindex', \@stmts, \@res);
	note_level($sh, $res[-1]);
}

# The root's level, read from the btree side (pageinspect refuses btlayout
# indexes; both have the same data and options)
sub level_sql { return side_sql("SELECT level FROM bt_metap('%I')", $_[0], 'bt'); }

sub note_level
{
	my ($sh, $r) = @_;
	$sh->{max_level} = $r->{out} if $r->{out} =~ /^\d+$/ && $r->{out} > ($sh->{max_level} // 0);
}

sub op_analyze
{
	my ($opno, $sh) = @_;
	my @stmts = (side_sql('ANALYZE %T', $sh, 'bt'), side_sql('ANALYZE %T', $sh, 'bl'));
	my @res = run(@stmts);
	$count{analyze}++ if must_succeed($opno, $sh, 'analyze', \@stmts, \@res);
}

sub op_check
{
	my ($opno, $sh) = @_;
	my @stmts = (side_sql("SELECT btlayout_check('%I', true)", $sh, 'bl'));
	my @res = run(@stmts);
	$count{'btlayout_check'}++ if must_succeed($opno, $sh, 'btlayout_check', \@stmts, \@res);
}

# A query: returns an item for the batch of queries
sub gen_query
{
	my ($opno, $sh) = @_;
	my ($kind, $quals, $eq) = gen_quals($sh, wpick(@QUERY_KINDS));
	my $where = @$quals ? ' WHERE ' . join(' AND ', @$quals) : '';
	my @keys = map { $_->{name} } @{ $sh->{keys} };
	my $n = scalar @keys;
	my $form = chance(0.4) ? 'ordered' : 'digest';
	my $mode;
	my ($sql, $detail);
	if ($form eq 'ordered')
	{
		$mode = pick('indexscan', 'indexonly');
		my $reverse = chance(0.5);
		my $from = $eq > 0 && $eq < $n && chance(0.4) ? $eq : 0;    # WHERE k1 = c ORDER BY k2
		my $to = chance(0.7) ? $n - 1 : $from + rnd($n - $from);
		my $ob = join(', ', map { order_item($sh->{keys}[$_], $reverse) } $from .. $to);
		# Output only what the ORDER BY decides (and leading columns fixed by
		# equality), so that tied rows print alike: the two sides may get
		# different plans (a Sort over an unordered scan returns ties in any
		# order), and LIMIT may cut between ties
		my $cols = join(', ', @keys[ 0 .. $to ]);
		if (chance(0.3))
		{
			# the whole ordered result, as a digest
			my $lim = chance(0.5) ? ' LIMIT ' . logsize(5000) : '';
			$sql = "SELECT count(*) || ':' || coalesce(md5(string_agg(r, E'\\n')), '-') FROM "
			  . "(SELECT ROW($cols)::text AS r FROM %T$where ORDER BY $ob$lim) s";
			$detail = "SELECT ROW($cols)::text FROM %T$where ORDER BY $ob$lim";
			$form = 'ordered digest';
		}
		else
		{
			my $lim = ' LIMIT ' . logsize(300);
			$lim .= ' OFFSET ' . rnd(50) if chance(0.2);
			$sql = "SELECT $cols FROM %T$where ORDER BY $ob$lim";
		}
		$kind .= $reverse ? ' backward' : ' forward';
	}
	else
	{
		$mode = wpick(indexscan => 35, indexonly => 35, bitmap => 25, parallel => 5);
		# without quals only an index-only scan reads the index
		$mode = 'indexonly' if !@$quals && $mode ne 'parallel';
		my $sel = $mode =~ /indexonly|parallel/ || !@$quals ? wpick(count => 2, keys => 3, keys_incl => 2)
		  : wpick(count => 1, keys => 2, keys_incl => 1, row => 3);
		my @cols = $sel eq 'keys' ? @keys
		  : $sel eq 'keys_incl' ? (@keys, map { $_->{name} } @{ $sh->{incl} })
		  : @{ $sh->{colnames} };
		if ($sel eq 'count')
		{
			$sql = "SELECT count(*) FROM %T$where";
		}
		else
		{
			my $cols = join(', ', @cols);
			$sql = "SELECT count(*) || ':' || coalesce(md5(string_agg(r, ',' ORDER BY r COLLATE \"C\")), '-')"
			  . " FROM (SELECT ROW($cols)::text AS r FROM %T$where) s";
			$detail = "SELECT ROW($cols)::text FROM %T$where";
		}
	}
	my $prefetch = !chance(0.15);
	my $nokeys = chance(0.15);
	# lookups that leave the pages they meet as they are: a layout switched
	# without a relayout is then walked over other placements for good
	my $norelayout = chance(0.4);
	$capped = !$capped if chance(0.03);
	my @pre = mode_sql($mode, $prefetch, $capped, $nokeys, $norelayout);
	$count{'queries, lookup relayouts off'}++ if $norelayout;
	$count{'queries, lookup relayouts off, layout switched without a relayout'}++
	  if $norelayout && $sh->{switched};
	my $item = {
		opno => $opno, sh => $sh, kind => $kind, form => $form, mode => $mode,
		prefetch => $prefetch, capped => $capped, nokeys => $nokeys,
		norelayout => $norelayout, sql => $sql,
		detail => $detail, pre => [@pre] };
	$queries++;
	my $key = "$sh->{name} $kind $mode";
	if ($queries % $explain_every == 0 || !$explain_seen{$key}++)
	{
		$item->{explain} = 1;
	}
	return $item;
}

sub item_stmts
{
	my ($it) = @_;
	$it->{bt} = side_sql($it->{sql}, $it->{sh}, 'bt');
	$it->{bl} = side_sql($it->{sql}, $it->{sh}, 'bl');
	my @s = (@{ $it->{pre} }, $it->{bt});
	# at the cap: the btlayout side twice (the second run starts from the
	# copy the first made), the lookups that went from the capped copy
	# to their leaf, and the index's height
	push @s, 'SELECT upper_copy_hits FROM btlayout_search_stats()' if $it->{capped};
	push @s, $it->{bl};
	push @s, $it->{bl} if $it->{capped};
	push @s, "SELECT s.upper_copy_hits, m.level, btlayout_upper_copy_pages('$it->{sh}{name}_bl_idx')"
	  . " FROM btlayout_search_stats() s, bt_metap('$it->{sh}{name}_bt_idx') m"
	  if $it->{capped};
	push @s, side_sql("EXPLAIN (COSTS OFF) $it->{sql}", $it->{sh}, 'bl') if $it->{explain};
	return @s;
}

# Run a batch of queries and compare
sub run_queries
{
	my @items = @_;
	return unless @items;
	my @stmts = map { item_stmts($_) } @items;
	my @res = run(@stmts);
	for my $it (@items)
	{
		my @pre = splice(@res, 0, scalar @{ $it->{pre} });
		my $rbt = shift(@res);
		my $before = $it->{capped} ? shift(@res) : undef;
		my $rbl = shift(@res);
		my $again = $it->{capped} ? shift(@res) : undef;
		my $after = $it->{capped} ? shift(@res) : undef;
		my $plan = $it->{explain} ? shift(@res) : undef;
		capped_count($before, $after) if $it->{capped};
		# the second run must answer as the first
		$rbl = $again if $it->{capped} && same_result($rbt, $rbl);
		my $sh = $it->{sh};
		$comparisons++;
		$qkinds{"$it->{kind} ($it->{form})"}++;
		my $settings = join('; ', @{ $it->{pre} });
		if (data_error_alike($rbt, $rbl))
		{
			$count{"query failed alike ($rbt->{state})"}++;
			$failed_alike++;
			$first_failed_alike //= "operation #$it->{opno}: $it->{bl}: " . show_result($rbl);
			next;
		}
		if ($rbt->{state} ne '00000' || $rbl->{state} ne '00000')
		{
			$unexpected++;
			report('QUERY ERROR', $it->{opno}, $sh, "scan mode $it->{mode}, prefetch "
				  . ($it->{prefetch} ? 'on' : 'off'), "btree:    $it->{bt}",
				'result:   ' . show_result($rbt), "btlayout: $it->{bl}",
				'result:   ' . show_result($rbl));
			next;
		}
		if (!same_result($rbt, $rbl))
		{
			$mismatches++;
			my @lines = (
				"query kind $it->{kind}, $it->{form}, scan mode $it->{mode}, btlayout.prefetch "
				  . ($it->{prefetch} ? 'on' : 'off') . ', btlayout.upper_copy '
				  . ($it->{capped} ? '8kB' : '4MB') . ', btlayout.upper_copy_keys '
				  . ($it->{nokeys} ? 'off' : 'on') . ', btlayout.lookup_relayout '
				  . ($it->{norelayout} ? 'off' : 'on'),
				'settings: ' . join('; ', map { "$_ = $MODE_GUCS{$it->{mode} eq 'parallel' ? 'indexonly' : $it->{mode}}{$_}" }
					  sort keys %{ $MODE_GUCS{ $it->{mode} eq 'parallel' ? 'indexonly' : $it->{mode} } })
				  . ($it->{mode} eq 'parallel' ? '; max_parallel_workers_per_gather = 2; parallel_setup_cost = 0; parallel_tuple_cost = 0' : '')
				  . '; enable_seqscan = off',
				"btree:    $it->{bt}", 'result:   ' . show_result($rbt),
				"btlayout: $it->{bl}", 'result:   ' . show_result($rbl));
			if ($it->{detail})
			{
				my ($dbt, $dbl) = run(side_sql($it->{detail}, $sh, 'bt'), side_sql($it->{detail}, $sh, 'bl'));
				push @lines, row_diff($dbt->{out}, $dbl->{out});
			}
			elsif ($it->{form} eq 'ordered')
			{
				my @a = split /\n/, $rbt->{out};
				my @b = split /\n/, $rbl->{out};
				my $i = 0;
				$i++ while $i < @a && $i < @b && $a[$i] eq $b[$i];
				push @lines, "first difference at row " . ($i + 1) . ': btree ['
				  . ($a[$i] // 'end') . '] btlayout [' . ($b[$i] // 'end') . ']';
			}
			# both sides' plans, under the query's settings
			%current_gucs = ();
			my @pre = mode_sql($it->{mode}, $it->{prefetch}, $it->{capped}, $it->{nokeys}, $it->{norelayout});
			my @plans = run(@pre, "EXPLAIN $it->{bt}", "EXPLAIN $it->{bl}");
			push @lines, "btree plan:\n$plans[-2]{out}", "btlayout plan:\n$plans[-1]{out}";
			report('MISMATCH (query)', $it->{opno}, $sh, @lines);
			$stop = 1 if $mismatches >= 10;
		}
		if ($plan)
		{
			$explained++;
			my $idx = "$sh->{name}_bl_idx";
			my $p = $plan->{out};
			if ($p =~ /One-Time Filter: false/ && $p !~ /\b\Q$idx\E\b/)
			{
				# "k = NULL": the planner proves the result empty
				$explained--;
				$plan_nodes{'constant false'}++;
			}
			elsif ($p =~ /\b\Q$idx\E\b/)
			{
				$explained_used++;
				my $node = $p =~ /Parallel Index Only Scan/ ? 'parallel index only scan'
				  : $p =~ /Parallel Index Scan/ ? 'parallel index scan'
				  : $p =~ /Index Only Scan/ ? 'index only scan'
				  : $p =~ /Bitmap Index Scan/ ? 'bitmap index scan'
				  : 'index scan';
				$plan_nodes{$node}++;
			}
			else
			{
				push @unused_plans, "op #$it->{opno} ($it->{kind}, $it->{mode}): $it->{bl}\n    plan: "
				  . join(' / ', split /\n/, $p);
			}
		}
	}
}

#
# Many indexes (see the top): mp_bl, 40 partitions of 2,000 keys each with
# an index of its own, and mp_bt
#
my $MANY_PARTS = 40;
my $MANY_SPAN = 2000;
my %many = (lookups => 0, keys => 0);

sub many_setup
{
	my @stmts = (
		'CREATE TABLE mp_bt (k int4, v int4)',
		"INSERT INTO mp_bt SELECT g, g % 97 FROM generate_series(0, @{[ $MANY_PARTS * $MANY_SPAN - 1 ]}) g",
		'CREATE INDEX mp_bt_idx ON mp_bt USING btree (k)',
		'CREATE TABLE mp_bl (k int4, v int4) PARTITION BY RANGE (k)');
	for my $p (0 .. $MANY_PARTS - 1)
	{
		push @stmts,
		  sprintf('CREATE TABLE mp_bl_p%d PARTITION OF mp_bl FOR VALUES FROM (%d) TO (%d)',
			$p, $p * $MANY_SPAN, ($p + 1) * $MANY_SPAN);
	}
	push @stmts, 'INSERT INTO mp_bl SELECT * FROM mp_bt';
	for my $p (0 .. $MANY_PARTS - 1)
	{
		push @stmts, sprintf('CREATE INDEX mp_bl_p%d_idx ON mp_bl_p%d USING btlayout (k) WITH (fillfactor = 10, layout = %s)',
			$p, $p, pick(@LAYOUTS));
	}
	push @stmts, 'ANALYZE mp_bt', 'ANALYZE mp_bl';
	my @res = run(@stmts);
	must_succeed(0, undef, 'many indexes: set up', \@stmts, \@res) or BAIL_OUT('could not create the partitions');
}

sub op_many
{
	my ($opno) = @_;
	my $what = wpick(lookups => 6, reindex => 1, truncate => 1, recreate => 1, detach => 1, insert => 1);
	my $p = rnd($MANY_PARTS);
	my ($lo, $hi) = ($p * $MANY_SPAN, ($p + 1) * $MANY_SPAN);
	my @stmts;
	if ($what eq 'lookups')
	{
		# 300 keys, in windows of 5 partitions, 3 windows one after the
		# other: the images of the windows left go cold and are evicted;
		# the partitions of no window go unused, and their recent-buffer
		# maps go cold over a few operations
		my @keys;
		for my $w (0 .. 2)
		{
			my $first = ($p + 5 * $w) % $MANY_PARTS;
			for (1 .. 100)
			{
				push @keys, $first * $MANY_SPAN - 10 + rnd(5 * $MANY_SPAN + 20);
			}
		}
		my $q = "SELECT string_agg(concat_ws(':', x, (SELECT count(*) FROM %T WHERE k = x),"
		  . " (SELECT string_agg(k::text, ',') FROM (SELECT k FROM %T WHERE k >= x ORDER BY k LIMIT 3) s),"
		  . " (SELECT string_agg(k::text, ',') FROM (SELECT k FROM %T WHERE k <= x ORDER BY k DESC LIMIT 3) s)),"
		  . " ' ' ORDER BY o) FROM unnest('{" . join(',', @keys) . "}'::int4[]) WITH ORDINALITY u(x, o)";
		my @pre = mode_sql('indexscan', chance(0.5), 0, 0, 0);
		push @pre, "SET btlayout.upper_copy = '16kB'";
		$current_gucs{'btlayout.upper_copy'} = "'16kB'";
		(my $bt = $q) =~ s/%T/mp_bt/g;
		(my $bl = $q) =~ s/%T/mp_bl/g;
		my @res = run(@pre, $bt, $bl);
		my ($rbt, $rbl) = @res[ -2, -1 ];
		$comparisons++;
		$qkinds{'many indexes'}++;
		if ($rbt->{state} ne '00000' || !same_result($rbt, $rbl))
		{
			$mismatches++ if !same_result($rbt, $rbl);
			$unexpected++ if $rbt->{state} ne '00000';
			my @a = split / /, $rbt->{out};
			my @b = split / /, $rbl->{out};
			my @diff = grep { ($a[$_] // '') ne ($b[$_] // '') } 0 .. $#a;
			report('MISMATCH (many indexes)', $opno, undef, 'btlayout: ' . clip($bl, 300),
				'first differing keys (key:count:next three:previous three): '
				  . join(' ', map { "btree $a[$_] btlayout " . ($b[$_] // '-') } @diff[ 0 .. ($#diff > 4 ? 4 : $#diff) ]),
				'btree:    ' . show_result($rbt), 'btlayout: ' . show_result($rbl));
			$stop = 1 if $mismatches >= 10;
			return;
		}
		$many{lookups}++;
		$many{keys} += @keys;
	}
	elsif ($what eq 'reindex')
	{
		@stmts = ("REINDEX INDEX mp_bl_p${p}_idx");
	}
	elsif ($what eq 'recreate')
	{
		@stmts = ("DROP INDEX mp_bl_p${p}_idx",
			"CREATE INDEX mp_bl_p${p}_idx ON mp_bl_p$p USING btlayout (k) WITH (fillfactor = "
			  . pick(10, 50, 90) . ', layout = ' . pick(@LAYOUTS) . ')');
	}
	elsif ($what eq 'detach')
	{
		@stmts = ("ALTER TABLE mp_bl DETACH PARTITION mp_bl_p$p",
			"ALTER TABLE mp_bl ATTACH PARTITION mp_bl_p$p FOR VALUES FROM ($lo) TO ($hi)");
	}
	else
	{
		# the same rows on both sides: a refill after a truncation, or
		# inserts (duplicates of keys there, and new ones)
		my $n = 1 + rnd(3000);
		my $step = 1 + rnd(7);
		my $ins = "INSERT INTO %T SELECT $lo + (g * $step) % $MANY_SPAN, g FROM generate_series(1, $n) g";
		@stmts = $what eq 'truncate'
		  ? ("TRUNCATE mp_bl_p$p", "DELETE FROM mp_bt WHERE k >= $lo AND k < $hi")
		  : ();
		push @stmts, $ins =~ s/%T/mp_bl/r, $ins =~ s/%T/mp_bt/r;
	}
	if (@stmts)
	{
		my @res = run(@stmts);
		return unless must_succeed($opno, undef, "many indexes: $what", \@stmts, \@res);
	}
	$count{"many indexes: $what"}++;
}

# A scroll cursor on each side, moved alike and compared at every step;
# sometimes with writes or a relayout between steps
sub op_cursor
{
	my ($opno, $sh) = @_;
	my ($kind, $quals, $eq) = gen_quals($sh, wpick(@QUERY_KINDS));
	my $where = @$quals ? ' WHERE ' . join(' AND ', @$quals) : '';
	my $reverse = chance(0.5);
	my $n = scalar @{ $sh->{keys} };
	my $to = chance(0.7) ? $n - 1 : rnd($n);
	my $ob = join(', ', map { order_item($sh->{keys}[$_], $reverse) } 0 .. $to);
	my $lim = chance(0.2) ? ' LIMIT ' . logsize(500) : '';
	# only the ORDER BY columns: ties print alike, whatever the plan
	my $q = 'SELECT ' . join(', ', map { $_->{name} } @{ $sh->{keys} }[ 0 .. $to ]) . " FROM %T$where ORDER BY $ob$lim";
	my $mode = pick('indexscan', 'indexonly');
	my $writes = !$sh->{unique} && chance(0.3);
	my @steps;    # [template, compared?, what]
	push @steps, [ 'BEGIN', 'tx' ], [ "DECLARE c_%T SCROLL CURSOR FOR $q", 0 ];
	for (1 .. 4 + rnd(14))
	{
		my $m = wpick(
			'NEXT' => 3, 'PRIOR' => 3, 'FIRST' => 1, 'LAST' => 1,
			'ABSOLUTE ' . (rnd(80) - 10) => 2, 'RELATIVE ' . (rnd(21) - 10) => 2,
			'FORWARD ' . rnd(20) => 2, 'BACKWARD ' . rnd(20) => 2);
		my $verb = chance(0.2) ? 'MOVE' : 'FETCH';
		$m = pick('FORWARD ALL', 'BACKWARD ALL', $m) if $verb eq 'MOVE';
		push @steps, [ "$verb $m FROM c_%T", 1 ];
		if ($writes && chance(0.2))
		{
			my $w = wpick(insert => 3, delete => 1, relayout => 2);
			push @steps, [ insert_sql($sh, logsize(200)), 'insert' ] if $w eq 'insert';
			push @steps, [ 'DELETE FROM %T WHERE ' . delete_pred($sh), 'delete' ] if $w eq 'delete';
			push @steps, [ "SELECT btlayout_relayout('%I')", 'relayout' ] if $w eq 'relayout';
		}
	}
	push @steps, [ 'COMMIT', 'tx' ];
	my @pre = mode_sql($mode, !chance(0.15), 0, 0, chance(0.4));
	my @stmts = @pre;
	for my $s (@steps)
	{
		if ($s->[1] eq 'relayout') { push @stmts, side_sql($s->[0], $sh, 'bl'); }
		elsif ($s->[1] eq 'tx') { push @stmts, $s->[0]; }
		else { push @stmts, side_sql($s->[0], $sh, 'bt'), side_sql($s->[0], $sh, 'bl'); }
	}
	my @res = run(@stmts);
	splice(@res, 0, scalar @pre);
	for my $s (@steps)
	{
		my $what = $s->[1];
		if ($what eq 'tx')
		{
			must_succeed($opno, $sh, 'cursor', [ $s->[0] ], [ shift @res ]);
			next;
		}
		if ($what eq 'relayout')
		{
			my $r = shift @res;
			if (must_succeed($opno, $sh, 'relayout in a cursor transaction', [ side_sql($s->[0], $sh, 'bl') ], [$r]))
			{
				$relayouts++;
				$relayout_pages += $r->{out};
			}
			next;
		}
		my ($rbt, $rbl) = splice(@res, 0, 2);
		if ($what eq 'insert' || $what eq 'delete')
		{
			# both sides are in one transaction: an error on the first
			# aborts it for the second
			if ($rbt->{state} ne '00000')
			{
				must_succeed($opno, $sh, "$what in a cursor transaction", [ side_sql($s->[0], $sh, 'bt') ], [$rbt]);
				return;
			}
			if (check_write($opno, $sh, "$what in a cursor transaction", $s->[0], $rbt, $rbl)
				&& $rbt->{state} eq '00000')
			{
				$sh->{rows} += ($what eq 'insert' ? 1 : -1) * $rbt->{rows};
			}
			next;
		}
		if (!$what)
		{
			must_succeed($opno, $sh, 'cursor', [ side_sql($s->[0], $sh, 'bt'), side_sql($s->[0], $sh, 'bl') ],
				[ $rbt, $rbl ]);
			next;
		}
		$comparisons++;
		$qkinds{'cursor step'}++;
		if ($rbt->{state} ne '00000' || !same_result($rbt, $rbl))
		{
			$mismatches++ if same_result($rbt, $rbl) == 0;
			$unexpected++ if $rbt->{state} ne '00000';
			my @trail = map { "  $_->[0]" } grep { $_->[1] ne 'tx' && $_->[1] ne '0' } @steps;
			report('MISMATCH (cursor)', $opno, $sh, "scan mode $mode, writes between steps: " . ($writes ? 'yes' : 'no'),
				'cursor:   ' . side_sql($q, $sh, 'bl'), 'step:     ' . side_sql($s->[0], $sh, 'bl'),
				'btree:    ' . show_result($rbt), 'btlayout: ' . show_result($rbl),
				'all steps of the cursor:', @trail);
			$stop = 1 if $mismatches >= 10;
			return;
		}
	}
	$count{$writes ? 'cursor with writes' : 'cursor'}++;
	if (grep { /\bIN \(|\bANY \(/ } @$quals)
	{
		$count{ 'cursor over arrays, ' . ($reverse ? 'backward' : 'forward') }++;
	}
	$count{'cursor over a skip-scan shape'}++ if $kind eq 'skip';
}

#
# Set up
#
rng_seed($seed);
my $nshapes = 3 + rnd(2);
@shapes = map { make_shape($_) } 0 .. $nshapes - 1;
# whatever the seed, some integer key (cross-type quals) and some text key
my @allkeys = map { @{ $_->{keys} } } @shapes;
$shapes[0]{keys}[0]{type} = pick('int2', 'int4', 'int8')
  unless grep { $TYPES{ $_->{type} }{kind} eq 'int' } @allkeys;
$shapes[1]{keys}[0]{type} = pick('text_c', 'text_icu', 'text_default')
  unless grep { $TYPES{ $_->{type} }{kind} eq 'text' } @allkeys;
finish_shape($_) for @shapes;

diag("btlayout fuzz: seed $seed, $nops operations, $nshapes shapes, explain every $explain_every queries, "
	  . "at most $maxrows rows per table");
run('SET client_min_messages = warning', 'SET enable_seqscan = off', 'SET jit = off',
	'SET btlayout.recent_buffers = 8192',
	'SET max_parallel_workers_per_gather = 0', 'SET min_parallel_index_scan_size = 0',
	'SET min_parallel_table_scan_size = 0');
$psql->query_safe("\\pset null '<NULL>'");
print $sqllog "\\pset null '<NULL>'\n" if $sqllog;

my $t0 = time;
for my $sh (@shapes)
{
	diag("shape $sh->{name}: " . shape_desc($sh));
	my @stmts = (side_sql($sh->{table_ddl}, $sh, 'bt'), side_sql($sh->{table_ddl}, $sh, 'bl'));
	my @res = run(@stmts);
	must_succeed(0, $sh, 'create table', \@stmts, \@res) or BAIL_OUT('could not create tables');
	# rows before the index, so that CREATE INDEX lays them out
	op_insert(0, $sh) for 1 .. rnd(6);
	my $ddl = $sh->{index_ddl} . '%W';
	@stmts = (side_sql($ddl, $sh, 'bt'), side_sql($ddl, $sh, 'bl'), side_sql('ANALYZE %T', $sh, 'bt'),
		side_sql('ANALYZE %T', $sh, 'bl'));
	@res = run(@stmts);
	# a unique index over duplicates fails on both sides alike
	if ($res[0]{state} ne '00000' || $res[1]{state} ne '00000')
	{
		check_write(0, $sh, 'create index', $ddl, $res[0], $res[1]);
		run(side_sql('TRUNCATE %T', $sh, 'bt'), side_sql('TRUNCATE %T', $sh, 'bl'));
		$sh->{rows} = 0;
		@res = run(@stmts);
	}
	must_succeed(0, $sh, 'create index', \@stmts, \@res) or BAIL_OUT('could not create indexes');
}
many_setup();

#
# The schedule
#
my @OPS = (
	query => 64, cursor => 6, insert => 12, delete => 5, update => 5, vacuum => 2,
	relayout => 2, set_layout => 1.5, switch_layout => 1.5, set_options => 0.3, reindex => 1, analyze => 0.5, check => 0.3,
	many => 2.5);
my %OP_SUB = (
	cursor => \&op_cursor, insert => \&op_insert, delete => \&op_delete, update => \&op_update,
	vacuum => \&op_vacuum, relayout => \&op_relayout, set_layout => \&op_set_layout,
	switch_layout => \&op_switch_layout,
	set_options => \&op_set_options, reindex => \&op_reindex, analyze => \&op_analyze,
	check => \&op_check, many => \&op_many);

my @pending;
my $progress_every = $nops >= 20 ? int($nops / 10) : $nops;
my $opno;
for ($opno = 1; $opno <= $nops && !$stop; $opno++)
{
	$current_op = $opno;
	my $sh = $shapes[ rnd(scalar @shapes) ];
	my $op = wpick(@OPS);
	$op = 'delete' if $op eq 'insert' && $sh->{rows} >= $maxrows;
	$op = 'insert' if $op eq 'delete' && $sh->{rows} < 50;
	$count{"op $op"}++;
	if ($op eq 'query')
	{
		push @pending, gen_query($opno, $sh);
		if (@pending >= 8)
		{
			run_queries(@pending);
			@pending = ();
		}
	}
	else
	{
		run_queries(@pending);
		@pending = ();
		$OP_SUB{$op}->($opno, $sh);
	}
	if ($opno % $progress_every == 0)
	{
		diag(sprintf('%d operations, %.0f s, %d comparisons, %d mismatches, rows %s',
			$opno, time - $t0, $comparisons, $mismatches, join('/', map { $_->{rows} } @shapes)));
	}
}
run_queries(@pending);
my $done = $opno - 1;
$current_op = "$done (final checks)";
my $loop_time = time - $t0;

#
# Final comparison: contents in index order both ways, as multisets, then
# again after a last relayout; every btlayout index checked
#
my $final_equal = 1;
my $final_checked = 1;
sub final_compare
{
	my ($when) = @_;
	for my $sh (@shapes)
	{
		my $cols = join(', ', map { $_->{name} } @{ $sh->{keys} });
		my @items;
		for my $reverse (0, 1)
		{
			my $ob = join(', ', map { order_item($_, $reverse) } @{ $sh->{keys} });
			push @items, [ "index order" . ($reverse ? ' (backward)' : ''),
				"SELECT count(*) || ':' || coalesce(md5(string_agg(r, E'\\n')), '-') FROM "
				  . "(SELECT ROW($cols)::text AS r FROM %T ORDER BY $ob) s",
				"SELECT ROW($cols)::text FROM %T ORDER BY $ob" ];
		}
		my $all = join(', ', @{ $sh->{colnames} });
		push @items, [ 'all rows',
			"SELECT count(*) || ':' || coalesce(md5(string_agg(ROW($all)::text, E'\\n' ORDER BY id)), '-') FROM %T",
			"SELECT ROW($all)::text FROM %T" ];
		for my $mode ('indexscan', 'indexonly')
		{
			for my $it (@items)
			{
				my ($what, $sql, $detail) = @$it;
				my @pre = mode_sql($mode, 1);
				my @res = run(@pre, side_sql($sql, $sh, 'bt'), side_sql($sql, $sh, 'bl'));
				my ($rbt, $rbl) = @res[ -2, -1 ];
				$comparisons++;
				next if $rbt->{state} eq '00000' && same_result($rbt, $rbl);
				$final_equal = 0;
				my ($dbt, $dbl) = run(side_sql($detail, $sh, 'bt'), side_sql($detail, $sh, 'bl'));
				report("FINAL CONTENTS DIFFER ($what, $when, $mode)", $done, $sh, 'btree:    ' . show_result($rbt),
					'btlayout: ' . show_result($rbl), row_diff($dbt->{out}, $dbl->{out}));
			}
		}
		my @stmts = (side_sql("SELECT btlayout_check('%I', true)", $sh, 'bl'));
		my @res = run(@stmts);
		$final_checked = 0 unless must_succeed($done, $sh, "btlayout_check ($when)", \@stmts, \@res);
	}
}
final_compare('end of schedule');
for my $sh (@shapes) { relayout($done, $sh, 'final relayout'); }
final_compare('after a final relayout');
# every partition's index of the many-index table
{
	my @stmts = map { "SELECT btlayout_check('mp_bl_p${_}_idx', true)" } 0 .. $MANY_PARTS - 1;
	my @res = run(@stmts);
	$final_checked = 0 unless must_succeed($done, undef, 'btlayout_check of the partitions', \@stmts, \@res);
}

my $stats = '';
my ($sres) = run('SELECT layout_searches, layout_confirmed, layout_fallbacks, ordinary_searches, recent_buffer_hits, upper_copy_hits, upper_copy_misses, upper_key_searches FROM btlayout_search_stats()');
$stats = $sres->{state} eq '00000' ? $sres->{out} : 'unavailable';
my $recent_hits = $sres->{state} eq '00000' ? (split /\|/, $sres->{out})[4] : 0;
my $copy_hits = $sres->{state} eq '00000' ? (split /\|/, $sres->{out})[5] : 0;
my $copy_misses = $sres->{state} eq '00000' ? (split /\|/, $sres->{out})[6] : 0;
my $key_searches = $sres->{state} eq '00000' ? (split /\|/, $sres->{out})[7] : 0;
my @int_shapes = grep {
	@{ $_->{keys} } == 1 && $_->{keys}[0]{dir} eq 'ASC'
	  && $_->{keys}[0]{type} =~ /^(int2|int4|int8|timestamp)$/
} @shapes;
my ($bstate) = run('SELECT index_entries, images_evicted, copies_full, chunks_given_up, blocks_not_remembered,'
	. ' entries_invalidated, entries_freed, copies_dropped, notes_forgotten FROM btlayout_backend_state()');
my ($b_entries, $b_evicted, $b_full, $b_given_up, $b_not_remembered, $b_invalidated, $b_freed, $b_dropped,
	$b_forgotten) = $bstate->{state} eq '00000' ? split(/\|/, $bstate->{out}) : (0) x 9;
my ($levels) = run("SELECT string_agg(c.relname || ' ' || (bt_metap(c.relname)).level, ', ' ORDER BY c.relname)"
	. " FROM pg_class c WHERE c.relname ~ '^s[0-9]+_bt_idx\$'");
my ($laid) = run("SELECT string_agg(c.relname || ' ' || s.layout || ' ' || s.laid_out_percent || '% of '"
	. " || s.pages || ' pages', ', ' ORDER BY c.relname) FROM pg_class c, btlayout_stats(c.oid) s"
	. " WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'btlayout') AND c.relname !~ '^mp_bl'");

$psql->quit;
$tb->output($saved_output);
close($devnull);
close($sqllog) if $sqllog;
my $total_time = time - $t0;

#
# Report
#
diag(sprintf("seed %d: %d of %d operations in %.1f s (%.0f operations/s), %.1f s in all",
	$seed, $done, $nops, $loop_time, $done / ($loop_time || 1), $total_time));
diag('operations: ' . join(', ', map { "$_ $count{$_}" } sort keys %count));
diag('comparisons by query kind: ' . join(', ', map { "$_ $qkinds{$_}" } sort keys %qkinds));
diag("comparisons: $comparisons, mismatches: $mismatches, unexpected errors: $unexpected");
diag("relayout passes: $relayouts, pages rewritten by relayout: $relayout_pages, by VACUUM: $vacuum_pages");
diag(sprintf('plans verified by EXPLAIN: %d of %d used the btlayout index (%.1f%%): %s',
	$explained_used // 0, $explained // 0, 100 * ($explained_used // 0) / ($explained || 1),
	join(', ', map { "$_ $plan_nodes{$_}" } sort keys %plan_nodes)));
diag("plans not using the btlayout index:\n  " . join("\n  ", @unused_plans[ 0 .. ($#unused_plans > 4 ? 4 : $#unused_plans) ]))
  if @unused_plans;
diag("btlayout_search_stats (layout searches, confirmed, fallbacks, ordinary, recent-buffer pins, upper-copy hits, misses, key searches): $stats");
diag("btlayout indexes: $laid->{out}");
diag("many indexes: $many{lookups} rounds of lookups of $many{keys} keys; backend state: $b_entries entries,"
	  . " $b_evicted images evicted ($b_full times none cold), $b_given_up chunks given up"
	  . " ($b_not_remembered blocks not remembered), $b_invalidated entries invalidated, $b_freed freed,"
	  . " $b_dropped copies dropped, $b_forgotten relayout notes forgotten");
diag("copy capped at 8kB: $capped{queries} queries, $capped{deep} on indexes of three or more levels,"
	  . " $capped{hits} lookups from the copy there, at most $capped{pages} page(s) per copy");
diag("root levels at the end (btree side): $levels->{out}; highest seen: "
	  . join(', ', map { "$_->{name} " . ($_->{max_level} // 0) } @shapes) . '; most rows: '
	  . join(', ', map { "$_->{name} " . ($_->{max_rows} // 0) } @shapes));
diag("queries raising the same data exception on both sides: $failed_alike; the first, $first_failed_alike")
  if $failed_alike;
diag(scalar(@problems) . " problem(s); the first:\n" . $problems[0]) if @problems;

ok($done == $nops, "ran all $nops operations (seed $seed)")
  or diag("stopped at operation $done");
is($mismatches, 0, "no mismatches between btree and btlayout in $comparisons comparisons (seed $seed)");
is($unexpected, 0, 'no unexpected errors');
# a generator that wrote queries the server cannot evaluate would compare
# nothing; the skip scan error of data_error_alike() is rare
cmp_ok($failed_alike, '<=', $comparisons / 1000,
	"at most one query in 1,000 raised the same data exception on both sides ($failed_alike of $comparisons)");
ok($final_equal, 'final contents equal, in index order both ways and as multisets, before and after a last relayout');
ok($final_checked, 'btlayout_check(heapallindexed) passes on every btlayout index');
ok($explained > 0 && $explained_used / $explained >= 0.95,
	"at least 95% of EXPLAIN-verified queries used the btlayout index ($explained_used of $explained)");
cmp_ok($recent_hits, '>', 0,
	'descents pinned pages in the buffers they were in last time (recent buffers)');
cmp_ok($copy_hits, '>', 0,
	"lookups went from the copy of the upper levels to their leaf ($copy_hits; $copy_misses took the ordinary descent after trying)");
SKIP:
{
	skip 'no index of one ascending integer column (seed ' . $seed . ')', 1 unless @int_shapes;
	cmp_ok($key_searches, '>', 0,
		'the copies of an integer index were searched by their keys (' . join(', ', map { $_->{name} } @int_shapes)
		  . ": $key_searches)");
}
SKIP:
{
	skip "only $capped{deep} capped queries on indexes of three levels (seed $seed)", 2
	  if $capped{deep} < 20;
	# an image holds at least its header, a page header, one line pointer,
	# the minus-infinity item and the special space: 64 bytes, 128 in 8kB
	cmp_ok($capped{pages}, '<=', 128, "with the copy capped at 8kB, a copy held $capped{pages} images at most");
	cmp_ok($capped{hits}, '>', 0,
		"capped at 8kB, lookups walked from the copy to their leaf through internal pages in their buffers ($capped{hits})");
}
SKIP:
{
	skip "only $many{lookups} rounds of lookups over the partitions (seed $seed)", 3
	  if $many{lookups} < 5;
	cmp_ok($b_evicted, '>', 0,
		"many indexes: images of the copies evicted at the cap ($b_evicted, $b_full times none was cold)");
	cmp_ok($b_given_up, '>', 0,
		"many indexes: chunks of cold recent-buffer maps given up at the cap ($b_given_up; $b_not_remembered blocks not remembered)");
	ok($b_invalidated > 0 && $b_freed > 0,
		"index entries invalidated ($b_invalidated) and freed ($b_freed, $b_dropped copies with them)");
}
SKIP:
{
	skip "only $done operations (seed $seed)", 1 if $done < 1000;
	my ($fwd, $back) = map { $count{"cursor over arrays, $_"} // 0 } qw(forward backward);
	my $skip_queries = 0;
	$skip_queries += $qkinds{$_} for grep { /^skip / } keys %qkinds;
	ok($fwd > 0 && $back > 0 && $skip_queries > 0,
		"cursors over array keys, forward ($fwd) and backward ($back), and queries of skip-scan shapes ($skip_queries) ran");
}
cmp_ok($count{'queries, lookup relayouts off, layout switched without a relayout'} // 0, '>', 0,
	'queries ran with lookup relayouts off on indexes whose layout was switched without a relayout ('
	  . ($count{'switch layout, no relayout'} // 0) . ' switches)');
ok($relayouts > 0 && $relayout_pages + $vacuum_pages > 0,
	"relayouts happened ($relayouts passes, " . ($relayout_pages + $vacuum_pages) . ' pages rewritten)');

$node->stop;
done_testing();
