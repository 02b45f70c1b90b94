#!/usr/bin/env bash
#
# bench/cachegrind.sh: cache misses and instructions per index lookup,
# deterministic, with valgrind's cachegrind.
#
# For each variant table T (an int4 column k with one index), a single-user
# backend under cachegrind prewarms T's index and the visibility map, then
# probes it through a nested-loop index-only scan with N1, then N2 keys;
# the difference of the two runs divided by N2 - N1 is the cost of one
# lookup, with everything else (startup, prewarm, plan) cancelled out.
#
# Usage: bench/cachegrind.sh DATADIR DBNAME PROBES1 PROBES2 TABLE...
#   PROBES1/PROBES2 name tables with a column k of keys to probe.
#   BTL_CG_SETTINGS (environment): more -c name=value settings for the
#   backend, e.g. "-c btlayout.prefetch=off".
#   BTL_CG_PGBIN (environment): the server's bin directory, to measure a
#   build installed elsewhere [/usr/lib/postgresql/15/bin].
# Branches are simulated too: conditional branches and how many of them a
# simple predictor mispredicts, per lookup.
# The cluster must be stopped; run as root (the backend runs as postgres).
set -euo pipefail

datadir=$1 db=$2 probes1=$3 probes2=$4
shift 4
pgbin=${BTL_CG_PGBIN:-/usr/lib/postgresql/15/bin}
out=$(mktemp -d)
chown postgres "$out"
trap 'rm -rf "$out"' EXIT

run()
{
	local table=$1 probes=$2 file=$out/$1.$2
	runuser -u postgres -- valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes \
		--cachegrind-out-file="$file" \
		"$pgbin/postgres" --single -D "$datadir" -c jit=off \
		-c max_parallel_workers_per_gather=0 ${BTL_CG_SETTINGS:-} "$db" >/dev/null 2>"$file.log" <<-SQL
		SELECT pg_prewarm('${table}_k');
		SELECT pg_prewarm('${table}', 'buffer', 'vm');
		SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_bitmapscan = off; SET enable_memoize = off;
		SELECT count(*) FROM $probes p JOIN $table t ON t.k = p.k;
	SQL
	# totals line: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim
	awk '/^summary:/ {print $2, $5, $6, $7, $11, $12}' "$file"
}

n1=$(runuser -u postgres -- "$pgbin/postgres" --single -D "$datadir" "$db" <<<"SELECT count(*) FROM $probes1;" 2>/dev/null | awk -F'= ' '/count = /{gsub(/[^0-9]/,"",$2); print $2}')
n2=$(runuser -u postgres -- "$pgbin/postgres" --single -D "$datadir" "$db" <<<"SELECT count(*) FROM $probes2;" 2>/dev/null | awk -F'= ' '/count = /{gsub(/[^0-9]/,"",$2); print $2}')

printf '| variant | instructions | data reads | D1 misses | LL misses | cond. branches | mispredicted |\n'
printf '| --- | --- | --- | --- | --- | --- | --- |\n'
for table in "$@"; do
	read -r ir1 dr1 d1r1 dlr1 bc1 bcm1 < <(run "$table" "$probes1")
	read -r ir2 dr2 d1r2 dlr2 bc2 bcm2 < <(run "$table" "$probes2")
	awk -v t="$table" -v n=$((n2 - n1)) -v a="$ir1 $dr1 $d1r1 $dlr1 $bc1 $bcm1" \
		-v b="$ir2 $dr2 $d1r2 $dlr2 $bc2 $bcm2" 'BEGIN {
		split(a, x, " "); split(b, y, " ");
		printf "| %s | %.0f | %.0f | %.1f | %.1f | %.0f | %.1f |\n", t,
			(y[1]-x[1])/n, (y[2]-x[2])/n, (y[3]-x[3])/n, (y[4]-x[4])/n,
			(y[5]-x[5])/n, (y[6]-x[6])/n }'
done
printf '\nper lookup: (run with %s keys - run with %s keys) / %d\n' "$probes2" "$probes1" $((n2 - n1))
