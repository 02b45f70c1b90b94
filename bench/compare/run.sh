#!/usr/bin/env bash
#
# bench/compare/run.sh: nanoseconds per string comparison, the compare core
# (src/bincmp.c) at every instruction set this machine has against glibc's
# memcmp() and against the server's text comparison under "C" (bttextcmp,
# called as core btree calls it), at lengths 1 to 10,000.
#
# Builds and installs the microbenchmark module (bench/compare/), runs it in
# a throwaway cluster (bench/lib/), interleaving every implementation within
# each round, and prints a Markdown table of medians [min-max] over the
# rounds, with each implementation's median time relative to the compare
# core's best level.  Also written to bench/results/<timestamp>-compare.md
# (or under --out).
#
# Usage: bench/compare/run.sh [--rounds N] [--no-install] [--out DIR]
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(dirname "$BENCH")
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=/usr/lib/postgresql/15/bin
DB=postgres
ROUNDS=5
INSTALL=1
KEEP=0
OUTDIR=$BENCH/results
LENGTHS="1,4,8,13,16,32,65,100,1000,10000"
IMPLS="core,memcmp,portable,sse4.2,avx2"

# shellcheck source=bench/lib/common.sh
source "$BENCH/lib/common.sh"
# shellcheck source=bench/lib/cluster.sh
source "$BENCH/lib/cluster.sh"

ORIG_ARGS=("$@")
while (($#)); do
	case $1 in
		--rounds) ROUNDS=$2; shift ;;
		--no-install) INSTALL=0 ;;
		--out) OUTDIR=$2; shift ;;
		-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --rounds needs a positive number" >&2; exit 2; }
if ((EUID != 0)); then
	exec sudo -- "$0" "${ORIG_ARGS[@]}"
fi

main() {
	local out
	mkdir -p "$OUTDIR"
	out=$OUTDIR/$(date +%Y%m%d-%H%M%S)-compare.md
	LOG=$out.log
	: >"$LOG"
	trap cleanup EXIT
	((INSTALL)) && install_packages
	log "build: bench/compare"
	make -C "$BENCH/compare" PG_CONFIG="$PG_CONFIG" install >>"$LOG" 2>&1 ||
		die "building bench/compare failed (see $LOG)"

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
	{
		echo "# String comparison: ns per comparison"
		echo
		echo "$(date -u '+%Y-%m-%d %H:%M UTC'); \`bench/compare/run.sh ${ORIG_ARGS[*]}\`; $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); git $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)."
		echo
		echo "Two strings of each length, equal but for the last byte; 16 pairs round robin;"
		echo "median [min-max] over $ROUNDS rounds, implementations interleaved in each;"
		echo "(x) is the median relative to the compare core's best level."
		echo
		sql "
		CREATE TEMP TABLE m (round int, len int, impl text, ns float8);
		DO \$\$
		DECLARE
		  r int; l int; i text;
		BEGIN
		  FOR r IN 1 .. $ROUNDS LOOP
		    FOREACH l IN ARRAY '{$LENGTHS}'::int[] LOOP
		      FOREACH i IN ARRAY '{$IMPLS}'::text[] LOOP
		        INSERT INTO m VALUES (r, l, i, btl_cmpbench(i, l, (200000000 / (l + 64))::int));
		      END LOOP;
		    END LOOP;
		  END LOOP;
		END
		\$\$;
		WITH s AS (
		  SELECT len, impl, percentile_cont(0.5) WITHIN GROUP (ORDER BY ns) AS med,
		         min(ns) AS lo, max(ns) AS hi
		  FROM m WHERE ns IS NOT NULL GROUP BY len, impl
		), best AS (
		  SELECT DISTINCT ON (len) len, med FROM s
		  WHERE impl NOT IN ('core', 'memcmp')
		  ORDER BY len, array_position('{$IMPLS}'::text[], impl) DESC
		), cell AS (
		  SELECT s.len, s.impl,
		         format('%s [%s-%s] (%sx)', round(s.med::numeric, 2), round(s.lo::numeric, 2),
		                round(s.hi::numeric, 2), round((s.med / b.med)::numeric, 2)) AS txt
		  FROM s JOIN best b USING (len)
		)
		SELECT '| length | ' || string_agg(impl, ' | ' ORDER BY array_position('{$IMPLS}'::text[], impl)) || ' |'
		FROM (SELECT DISTINCT impl FROM s) x
		UNION ALL
		SELECT '| --- |' || repeat(' --- |', (SELECT count(DISTINCT impl) FROM s)::int)
		UNION ALL
		(SELECT '| ' || len || ' | ' || string_agg(txt, ' | ' ORDER BY array_position('{$IMPLS}'::text[], impl)) || ' |'
		 FROM cell GROUP BY len ORDER BY len)"
	} >"$out"
	cat "$out"
	log "results in $out"
}

main
