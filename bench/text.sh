#!/usr/bin/env bash
#
# bench/text.sh: index probes on text keys, the BIN-collation classes of
# btlayout against core btree under COLLATE "C" and under the database's
# default (ICU) collation.
#
# Three datasets of N keys (default 10 million): "code" (8-character codes),
# "md5" (32 hex characters) and "url" (about 67 characters sharing a
# 41-character prefix).  For each, one million random existing keys are
# probed through a nested-loop index-only scan, the variants interleaved in
# every round:
#
#   btree                 core btree (k COLLATE "C"): the baseline
#   btree-icu             core btree in the database default collation, ICU
#                         "en-US" (the cluster is created with it)
#   btlayout-bin-blocked  btlayout (k COLLATE "C" text_bin_ops), layout blocked
#   btlayout-bin-eytzinger  the same, layout eytzinger
#   btlayout-c-blocked    btlayout's default text class under "C", blocked
#
# The two btree variants share one table (the query's collation picks the
# index); each btlayout variant has its own copy of the table, so that the
# planner has one index to choose.  Indexes and visibility maps are
# prewarmed into shared_buffers (with huge pages), heaps are not needed.
#
# Uses the throwaway-cluster, results and report machinery of
# scripts/bench.sh (bench/lib/, bench/report.py): results in
# bench/results/<timestamp>-text/ (raw.csv, summary.csv, report.md, chart).
#
# Usage: bench/text.sh [--keys N] [--probes N] [--rounds N]
#                      [--datasets code,md5,url] [--variants a,b,...]
#                      [--no-install] [--no-build] [--out DIR] [--keep] [--smoke]
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$REPO/bench
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=/usr/lib/postgresql/15/bin
PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON=python3
DB=bench

KEYS=10000000
PROBES=1000000
ROUNDS=5
DATASETS=(code md5 url)
ALL_VARIANTS=(btree btree-icu btlayout-bin-blocked btlayout-bin-eytzinger btlayout-c-blocked)
VARIANTS=("${ALL_VARIANTS[@]}")
INSTALL=1
BUILD=1
OUT=$BENCH/results
KEEP=0
SMOKE=0
INITDB_LOCALE="--locale=C --locale-provider=icu --icu-locale=en-US"

# shellcheck source=bench/lib/common.sh
source "$BENCH/lib/common.sh"
# shellcheck source=bench/lib/cluster.sh
source "$BENCH/lib/cluster.sh"

ORIG_ARGS=("$@")
while (($#)); do
	case $1 in
		--keys) KEYS=$2; shift ;;
		--probes) PROBES=$2; shift ;;
		--rounds) ROUNDS=$2; shift ;;
		--datasets) IFS=, read -r -a DATASETS <<<"$2"; shift ;;
		--variants) IFS=, read -r -a VARIANTS <<<"$2"; shift ;;
		--no-install) INSTALL=0 ;;
		--no-build) BUILD=0 ;;
		--out) OUT=$2; shift ;;
		--keep) KEEP=1 ;;
		--smoke) SMOKE=1 KEYS=20000 PROBES=5000 ROUNDS=1 ;;
		-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		*) echo "text.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
for n in "$KEYS" "$PROBES" "$ROUNDS"; do
	[[ $n =~ ^[0-9]+$ ]] || { echo "text.sh: not a whole number: $n" >&2; exit 2; }
done
if ((EUID != 0)); then
	exec sudo -- "$0" "${ORIG_ARGS[@]}"
fi

# The key of row number $2 in dataset $1, an SQL expression of an int8
key_expr() {
	case $1 in
		# a bijection of 0 .. 2^32-1: distinct codes of 8 characters
		code) echo "upper(lpad(to_hex(($2 * 2654435761) % 4294967296), 8, '0'))" ;;
		md5) echo "md5(($2)::text)" ;;
		url) echo "'https://www.example.com/catalog/category-' || lpad((($2) % 97)::text, 2, '0') || '/product/' || lpad(($2)::text, 9, '0') || '.html'" ;;
		*) die "unknown dataset $1" ;;
	esac
}

# Variant -> table (of dataset $2), index definition, join collation
var_table() {
	case $1 in
		btree | btree-icu) echo "t_$2" ;;
		*) echo "t_$2_${1//-/_}" ;;
	esac
}
var_ddl() {
	case $1 in
		btree) echo 'USING btree (k COLLATE "C")' ;;
		btree-icu) echo 'USING btree (k)' ;;
		btlayout-bin-blocked) echo 'USING btlayout (k COLLATE "C" text_bin_ops) WITH (layout = blocked)' ;;
		btlayout-bin-eytzinger) echo 'USING btlayout (k COLLATE "C" text_bin_ops) WITH (layout = eytzinger)' ;;
		btlayout-c-blocked) echo 'USING btlayout (k COLLATE "C") WITH (layout = blocked)' ;;
		*) die "unknown variant $1" ;;
	esac
}
var_join() {
	if [[ $1 == btree-icu ]]; then echo 'p.k = q.k'; else echo 'p.k = q.k COLLATE "C"'; fi
}
idx_name() { echo "i_$2_${1//-/_}"; }

PROBE_SET="SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off; SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0;"

load_dataset() {
	local ds=$1 v t0 size
	t0=$(now_s)
	sql "CREATE TABLE t_$ds (k text NOT NULL);
	     INSERT INTO t_$ds SELECT $(key_expr "$ds" g) FROM generate_series(1, $KEYS) g;" >/dev/null
	sql "VACUUM (FREEZE, ANALYZE) t_$ds" >/dev/null
	sql "SELECT setseed(0.4242);
	     CREATE TABLE q_$ds AS SELECT $(key_expr "$ds" x) AS k
	       FROM (SELECT (1 + floor(random() * $KEYS))::int8 AS x
	             FROM generate_series(1, $PROBES)) s;" >/dev/null
	sql "VACUUM (FREEZE, ANALYZE) q_$ds" >/dev/null
	for v in "${VARIANTS[@]}"; do
		t=$(var_table "$v" "$ds")
		if [[ $t != "t_$ds" ]]; then
			sql "CREATE TABLE $t AS SELECT * FROM t_$ds" >/dev/null
			sql "VACUUM (FREEZE, ANALYZE) $t" >/dev/null
		fi
		sql_timed "" "CREATE INDEX $(idx_name "$v" "$ds") ON $t $(var_ddl "$v");"
		size=$(sql "SELECT pg_relation_size('$(idx_name "$v" "$ds")')")
		record -1 load "$v" "build_${ds}_s" "$(awk -v m="$TIMED_MS" 'BEGIN { printf "%.3f", m / 1000 }')"
		record -1 load "$v" "size_${ds}_mb" "$(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1048576 }')"
		log "load: $ds/$v: CREATE INDEX $TIMED_MS ms, $((size / 1048576)) MB"
	done
	log "load: $ds in $(elapsed "$t0" "$(now_s)") s"
}

probe() {
	local r=$1 ds=$2 v=$3 query plan lps
	query="SELECT count(*) FROM q_$ds q JOIN $(var_table "$v" "$ds") p ON $(var_join "$v")"
	plan=$(sql "$PROBE_SET EXPLAIN (COSTS OFF) $query")
	grep -q "Index Only Scan using $(idx_name "$v" "$ds") " <<<"$plan" ||
		die "probe-$ds/$v: the plan does not use $(idx_name "$v" "$ds"): $plan"
	sql_timed "$PROBE_SET" "$query;"
	[[ $TIMED_OUT == "$PROBES" ]] || die "probe-$ds/$v: found $TIMED_OUT of $PROBES keys"
	lps=$(awk -v m="$TIMED_MS" -v n="$PROBES" 'BEGIN { printf "%.1f", n / (m / 1000) }')
	record "$r" "probe-$ds" "$v" wall_s "$(awk -v m="$TIMED_MS" 'BEGIN { printf "%.4f", m / 1000 }')"
	record "$r" "probe-$ds" "$v" lookups_per_s "$lps"
	log "r$r probe-$ds $v: $TIMED_MS ms, $(fmt_num "$lps") lookups/s"
}

main() {
	local t_start r ds v sb need_mb
	t_start=$(now_s)
	RESULTS=$OUT/$(date +%Y%m%d-%H%M%S)-text
	((SMOKE)) && RESULTS+=-smoke
	mkdir -p "$RESULTS"
	RESULTS=$(cd "$RESULTS" && pwd)
	LOG=$RESULTS/bench.log
	RAW=$RESULTS/raw.csv
	echo "round,workload,variant,metric,value" >"$RAW"
	: >"$RESULTS/meta.tsv"
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	log "btlayout text-key benchmark: $0 ${ORIG_ARGS[*]}"
	((INSTALL)) && install_packages
	((BUILD)) && build_install

	TMPD=$(mktemp -d /tmp/btlayout-bench.XXXXXX)
	chmod 755 "$TMPD"
	chown postgres "$TMPD"
	SOCKDIR=$TMPD
	PGDATA_DIR=$TMPD/data
	SERVER_LOG=$TMPD/server.log
	cd "$TMPD"
	PORT=$(pick_port)
	cluster_create 128MB
	QDB=postgres sql "CREATE DATABASE $DB" >/dev/null
	sql "CREATE EXTENSION pg_prewarm; CREATE EXTENSION btlayout;" >/dev/null

	# Indexes: about 30 (code), 56 (md5) and 84 (url) bytes per key, in
	# every variant; plus a margin
	need_mb=$(awk -v k="$KEYS" -v n="${#VARIANTS[@]}" 'BEGIN { printf "%d", k * n * (30 + 56 + 84) / 1048576 * 1.2 + 512 }')
	sb="$(((need_mb + 255) / 256 * 256))MB"
	sql "ALTER SYSTEM SET shared_buffers = '$sb'" >/dev/null
	cluster_stop
	hugepages_reserve "$sb"
	cluster_start
	meta "date" "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	meta "command" "bench/text.sh ${ORIG_ARGS[*]}"
	meta "cpu" "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) ($(nproc) cores)"
	meta "postgresql" "$(sql 'SELECT version()')"
	meta "database collation" "$(sql "SELECT datlocprovider::text || ': ' || coalesce(daticulocale, datcollate) FROM pg_database WHERE datname = current_database()")"
	meta "settings" "shared_buffers = $sb, huge pages ${HUGEPAGES:-0}, jit off, no parallel query"
	meta "git" "$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	meta "keys" "$KEYS per dataset; $PROBES probes per run (random existing keys, nested loop, index-only scan)"
	meta "datasets" "code: $(sql "SELECT $(key_expr code 1)"), md5: $(sql "SELECT $(key_expr md5 1)"), url: $(sql "SELECT $(key_expr url 1)")"
	for v in "${VARIANTS[@]}"; do
		meta "variant $v" "$(var_ddl "$v"), joined on $(var_join "$v")"
	done
	((SMOKE)) && meta "mode" "SMOKE: a functional check, the numbers mean nothing"

	for ds in "${DATASETS[@]}"; do
		load_dataset "$ds"
	done
	sql "CHECKPOINT;
	     SELECT count(pg_prewarm(c.oid::regclass)) FROM pg_class c
	       WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'i';
	     SELECT count(pg_prewarm(c.oid::regclass, 'buffer', 'vm')) FROM pg_class c
	       WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r';
	     SELECT count(pg_prewarm(c.oid::regclass)) FROM pg_class c
	       WHERE c.relnamespace = 'public'::regnamespace AND c.relname LIKE 'q\_%';" >/dev/null
	log "setup done in $(elapsed "$t_start" "$(now_s)") s"

	for ((r = 0; r <= ROUNDS; r++)); do
		log "=== round $r of $ROUNDS$( ((r == 0)) && echo ' (warm-up, discarded)')"
		for ds in "${DATASETS[@]}"; do
			for v in "${VARIANTS[@]}"; do
				probe "$r" "$ds" "$v"
			done
		done
	done
	cluster_stop
	meta "wall time" "$(awk -v s="$(elapsed "$t_start" "$(now_s)")" 'BEGIN { printf "%d min %02d s", s / 60, s % 60 }')"
	"$PYTHON" "$BENCH/report.py" "$RESULTS" >>"$LOG" 2>&1 || die "report failed (see $LOG)"
	cat "$RESULTS/report.md"
	log "results in $RESULTS"
}

main
