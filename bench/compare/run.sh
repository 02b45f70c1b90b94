#!/usr/bin/env bash
#
# bench/compare/run.sh: nanoseconds per string comparison, the compare core
# (src/bincmp.c) at every instruction set this machine has against glibc's
# memcmp() and against the server's text comparison under "C" (bttextcmp,
# called as core btree calls it, and varstr_cmp without the function call),
# at lengths 1 to 10,000.
#
# Builds and installs the microbenchmark module (bench/compare/), runs it in
# a throwaway cluster (bench/lib/), interleaving every implementation and
# length within each round, and prints two Markdown tables (strings equal
# but for their last byte; random strings) of medians [min-max] over the
# rounds, with the median of core, varstr_cmp and memcmp relative to the
# compare core's best level.  Also written to
# bench/results/compare-<timestamp>.md (or under --out), with a log.
#
# Usage: bench/compare/run.sh [--rounds N] [--pg V] [--no-install] [--out DIR]
#   --pg V         PostgreSQL major version to build against        [15]
#   --rounds N     rounds of every implementation and length        [5]
#   --no-install   do not apt-get missing packages
#   --out DIR      results directory                       [bench/results]
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(dirname "$BENCH")
# The server: --pg (default 15); select_server sets PGBIN and PG_CONFIG
PG_VERSION=${BTL_PG:-15}
DB=postgres
ROUNDS=5
INSTALL=1
OUTDIR=$BENCH/results
LENGTHS="1,4,8,13,16,32,65,100,1000,10000"
IMPLS="core,varstr_cmp,memcmp,portable,sse4.2,avx2"
BASELINES="core,varstr_cmp,memcmp"
# Comparisons per measurement: about 3 MB of strings scanned when the whole
# length is read, a fixed count when the first byte decides
ITER_LASTBYTE="200000000 / (l + 64)"
ITER_RANDOM="2000000"

# shellcheck source=bench/lib/common.sh
source "$BENCH/lib/common.sh"
# shellcheck source=bench/lib/cluster.sh
source "$BENCH/lib/cluster.sh"

ORIG_ARGS=("$@")
while (($#)); do
	case $1 in
		--rounds) ROUNDS=${2:-}; shift ;;
		--no-install) INSTALL=0 ;;
		--pg) PG_VERSION=${2:-}; shift ;;
		--out) OUTDIR=${2:-}; shift ;;
		-h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --rounds needs a positive number" >&2; exit 2; }
[[ -n $OUTDIR ]] || { echo "run.sh: --out needs a directory" >&2; exit 2; }
if ((EUID != 0)); then
	command -v sudo >/dev/null || { echo "run.sh: run as root (no sudo here)" >&2; exit 2; }
	exec sudo -- "$0" "${ORIG_ARGS[@]}"
fi

# table CONTENTS: the Markdown table of one kind of contents
table() {
	sql "
	WITH s AS (
	  SELECT len, impl, percentile_cont(0.5) WITHIN GROUP (ORDER BY ns) AS med,
	         min(ns) AS lo, max(ns) AS hi
	  FROM m WHERE contents = '$1' AND ns IS NOT NULL GROUP BY len, impl
	), best AS (
	  SELECT DISTINCT ON (len) len, impl, med FROM s
	  WHERE impl <> ALL ('{$BASELINES}')
	  ORDER BY len, array_position('{$IMPLS}'::text[], impl) DESC
	), cell AS (
	  SELECT s.len, s.impl,
	         format('%s [%s-%s]', round(s.med::numeric, 2), round(s.lo::numeric, 2),
	                round(s.hi::numeric, 2)) ||
	         CASE WHEN s.impl = ANY ('{$BASELINES}')
	              THEN format(' (%sx)', round((s.med / b.med)::numeric, 2)) ELSE '' END AS txt
	  FROM s JOIN best b USING (len)
	)
	SELECT '| length | ' || string_agg(impl, ' | ' ORDER BY array_position('{$IMPLS}'::text[], impl)) || ' |'
	FROM (SELECT DISTINCT impl FROM s) x
	UNION ALL
	SELECT '| ---: |' || repeat(' ---: |', (SELECT count(DISTINCT impl) FROM s)::int)
	UNION ALL
	(SELECT '| ' || len || ' | ' || string_agg(txt, ' | ' ORDER BY array_position('{$IMPLS}'::text[], impl)) || ' |'
	 FROM cell GROUP BY len ORDER BY len)"
}

main() {
	local out stamp best load0
	mkdir -p "$OUTDIR"
	stamp=$(date +%Y%m%d-%H%M%S)
	out=$OUTDIR/compare-$stamp.md
	LOG=$out.log
	: >"$LOG"
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	((INSTALL)) && install_packages
	select_server
	build_install bench/compare

	TMPD=$(mktemp -d /tmp/btlayout-bench.XXXXXX)
	chmod 755 "$TMPD"
	chown postgres "$TMPD"
	SOCKDIR=$TMPD
	PGDATA_DIR=$TMPD/data
	SERVER_LOG=$TMPD/server.log
	cd "$TMPD"
	PORT=$(pick_port)
	cluster_create 128MB
	sql "CREATE EXTENSION btlayout_cmpbench" >/dev/null

	log "measuring: $ROUNDS rounds of lengths $LENGTHS, implementations $IMPLS"
	load0=$(loadavg)
	# Every call of sql is a new backend: the measurements go to a table
	sql "
	CREATE UNLOGGED TABLE m (round int, contents text, len int, impl text, ns float8);
	DO \$\$
	DECLARE
	  r int; c text; l int; i text;
	BEGIN
	  FOR r IN 1 .. $ROUNDS LOOP
	    FOREACH c IN ARRAY '{lastbyte,random}'::text[] LOOP
	      FOREACH l IN ARRAY '{$LENGTHS}'::int[] LOOP
	        FOREACH i IN ARRAY '{$IMPLS}'::text[] LOOP
	          INSERT INTO m VALUES (r, c, l, i,
	            btl_cmpbench(i, l, CASE c WHEN 'lastbyte' THEN ($ITER_LASTBYTE)::int
	                                      ELSE $ITER_RANDOM END, c));
	        END LOOP;
	      END LOOP;
	    END LOOP;
	  END LOOP;
	END
	\$\$" >/dev/null
	best=$(sql "SELECT impl FROM m WHERE ns IS NOT NULL AND impl <> ALL ('{$BASELINES}')
	            ORDER BY array_position('{$IMPLS}'::text[], impl) DESC LIMIT 1")
	{
		echo "# String comparison: ns per comparison"
		echo
		echo "$(date -u '+%Y-%m-%d %H:%M UTC'); \`bench/compare/run.sh ${ORIG_ARGS[*]}\`;" \
			"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
			"$(nproc) CPUs, load average $load0 before and $(loadavg) after;" \
			"git $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)."
		echo
		echo "Median [min-max] over $ROUNDS rounds, every implementation and length interleaved in"
		echo "each; (x) is a median relative to the compare core's best level here, \`$best\`."
		echo "core: bttextcmp through the function manager under \"C\"; varstr_cmp: under \"C\";"
		echo "memcmp: glibc memcmp then the lengths; portable, sse4.2, avx2: btl_str_cmp."
		echo
		echo "## Equal but for the last byte (every byte read; 16 pairs round robin)"
		echo
		table lastbyte
		echo
		echo "## Random bytes (the first byte decides, either way; 1024 pairs round robin)"
		echo
		table random
	} >"$out"
	cat "$out"
	log "results in $out"
}

main
