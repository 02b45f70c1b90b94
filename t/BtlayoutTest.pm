
# Copyright (c) btlayout authors
#
# What btlayout's TAP tests share: the settings that force each kind of scan.

package BtlayoutTest;

use strict;
use warnings;
use Exporter 'import';

our @EXPORT = qw(%scan_settings @index_modes);

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

1;
