# shellcheck shell=bash
# bench/lib/regimes.sh: the regime workloads (issue 37): btlayout outside
# the one regime the other workloads measure (one big index probed by one
# long-lived session with everything in shared buffers).  Sourced by
# scripts/bench.sh after workloads.sh.
#
#   probe-part40   nested-loop index-only probes of a range-partitioned
#                  table of PARTITIONS (40) partitions, one index per
#                  partition and variant: each probe in a random partition
#                  (run-time partition pruning), so a session keeps going
#                  back and forth between PARTITIONS indexes.  Recorded as
#                  probe-part<PARTITIONS>.
#   probe-tables   the same keys over TABLES (40) separate tables, one index
#                  per table and variant, in one session: each probe
#                  looks its key up in the table that holds it, through a
#                  CASE over correlated subqueries (one index-only scan a
#                  probe, in a random table)
#   select-connect pgbench -S's statement with a new connection per
#                  transaction (-C), every variant side by side in one
#                  pgbench run: the cost of a new backend's first lookup
#                  (loading btlayout.so, the catalogs, the per-backend
#                  structures of the index)
#   probe-inlist   pgbench statements of N random keys, k = ANY(an int4[]),
#                  N of INLIST_SIZES (10, 100, 1000), one run per variant:
#                  index-only (recorded as probe-inlist-<N>) and with a heap
#                  fetch a key (probe-inlist-heap-<N>)
#   probe-skip     pgbench probes of the second column of a two-column
#                  index whose first has SKIP_GROUPS (30) values, the first
#                  unconstrained: 18's skip scan (skipped before 18)
#   probe-big      probe-nl on an index about twice shared_buffers, with
#                  shared_buffers set to BIG_SB_MB for it: most pages come
#                  from the OS cache
#   probe-100m     probe-nl on LARGE_ROWS (100M) keys, btree and
#                  LARGE_VARIANTS only (opt-in even among the regimes:
#                  --regimes-large, for its load time)
#
# Each runs after the other workloads, on tables of its own, loaded, then a
# warm-up round and ROUNDS rounds with the variants interleaved (the probe
# workloads through probe_round, in slices, like probe-nl; probe-inlist and
# probe-skip a pgbench run per variant, like probe-batch), then dropped.
# probe-big runs last: it restarts the server with its own shared_buffers,
# and puts the run's back afterwards.
#
# Tables (database "bench"), each present only during its workload:
#   part_t, part_t_<i>     (k int4) keys 1..ROWS, partition i holding the
#                          i-th of PARTITIONS equal ranges; indexes
#                          pt<i>_<variant>; keys part_keys_<s>
#   tab_<i>                (k int4) the i-th of TABLES equal ranges of
#                          1..ROWS; indexes tb<i>_<variant>; keys
#                          tab_keys_<s>
#   conn_<variant>         (aid int4, abalance int4), CONN_ROWS rows, with
#                          the variant's index conn_<variant>_i
#   inlist_t               (k int4, v int4) keys 1..ROWS; indexes
#                          inlist_<variant> on k
#   inlist_keys_<N>        (id int4 primary key, ks int4[]) INLIST_ARRAYS
#                          arrays of N distinct random keys of 1..ROWS
#   skip_t                 (a int4, b int4), a of 1..SKIP_GROUPS times b of
#                          1..ROWS/SKIP_GROUPS; indexes skip_<variant> on
#                          (a, b)
#   big_t                  (k int4) BIG_ROWS keys; indexes big_<variant>;
#                          keys big_keys_<s>
#   large_t                (k int4) LARGE_ROWS keys; indexes
#                          large_<variant>; keys large_keys_<s>

REGIME_WORKLOADS=(probe-part40 probe-tables select-connect probe-inlist probe-skip probe-big)
REGIME_LARGE_WORKLOADS=(probe-100m)
# Bytes of an int4 index per key (PostgreSQL 15, btree and btlayout alike:
# 214 MB for 10M keys at the default fill factor), for shared_buffers and
# probe-big's table
INT4_INDEX_BYTES=22.4
# probe-inlist: keys per statement, and the arrays of each size drawn from
INLIST_SIZES=(10 100 1000)
INLIST_ARRAYS=2000
# probe-skip: the values of the index's first column
SKIP_GROUPS=30

part_name() { echo "probe-part$PARTITIONS"; } # probe-part40's recorded workload name

# regime_variants WORKLOAD -> the variants of VARIANTS it runs, one a line
regime_variants() {
	local v
	for v in "${VARIANTS[@]}"; do
		case $1 in
		probe-100m) [[ $v == btree || " ${LARGE_VARIANTS//,/ } " == *" $v "* ]] || continue ;;
		select-connect) mixes "$v" || continue ;;
		# hash: no array keys, one column
		probe-inlist | probe-skip) [[ ${V_KINDS[$v]} == all ]] || continue ;;
		esac
		echo "$v"
	done
}

# regime_need_mb NVARIANTS -> MB of shared_buffers the largest of the
# selected regime workloads (but probe-big, which sets its own) needs at
# once: its indexes and probe keys (the probes are index-only: the heaps
# need not stay in memory), or select-connect's tables and indexes, or
# probe-inlist's (its heap fetches) and probe-skip's (the same size) table,
# indexes and arrays of keys
regime_need_mb() {
	local nv=$1 need=0 n nl
	if has_workload probe-part40 || has_workload probe-tables; then
		n=$(awk -v k="$ROWS" -v nv="$nv" -v b="$INT4_INDEX_BYTES" -v p="$PROBES" \
			'BEGIN { printf "%d", (k * nv * b * 1.1 + p * 40 + k / 1000) / 1048576 }')
		((n > need)) && need=$n
	fi
	if has_workload select-connect; then
		n=$(awk -v k="$CONN_ROWS" -v nv="$nv" -v b="$INT4_INDEX_BYTES" \
			'BEGIN { printf "%d", k * nv * (36 + b) * 1.1 / 1048576 }')
		((n > need)) && need=$n
	fi
	if has_workload probe-inlist || has_workload probe-skip; then
		n=$(awk -v k="$ROWS" -v nv="$nv" -v b="$INT4_INDEX_BYTES" -v a="$INLIST_ARRAYS" -v s="${INLIST_SIZES[*]}" \
			'BEGIN { split(s, ns, " "); for (i in ns) p += a * (ns[i] * 4 + 60)
			         printf "%d", (k * (36 + nv * b) * 1.1 + p) / 1048576 }')
		((n > need)) && need=$n
	fi
	if has_workload probe-100m; then
		nl=$(regime_variants probe-100m | wc -l)
		n=$(awk -v k="$LARGE_ROWS" -v nv="$nl" -v b="$INT4_INDEX_BYTES" -v p="$PROBES" \
			'BEGIN { printf "%d", (k * nv * b * 1.1 + p * 40 + k / 1000) / 1048576 }')
		((n > need)) && need=$n
	fi
	echo "$need"
}

# big_rows -> keys of probe-big: --big-rows, else an index of about twice
# BIG_SB_MB
big_rows() {
	if [[ -n $BIG_ROWS ]]; then
		echo "$BIG_ROWS"
	else
		awk -v sb="$BIG_SB_MB" -v b="$INT4_INDEX_BYTES" 'BEGIN { printf "%d", 2 * sb * 1048576 / b }'
	fi
}

# --- the tables -------------------------------------------------------------------

# regime_keys PREFIX NROWS: PROBES random keys of 1..NROWS in random order
# (fixed seed), dealt out to PREFIX_1 .. PREFIX_<PROBE_SLICES>
regime_keys() {
	local ROWS=$2 # make_probe_keys draws from 1..ROWS
	make_probe_keys "$1" key_expr
}

# regime_indexes WORKLOAD VARIANT WHAT COLUMNS TABLE INDEX [TABLE INDEX ...]:
# the variant's CREATE INDEX on COLUMNS (k; "a, b") of each TABLE, in one
# session; their summed time and size recorded in round -1 (regime_build_s,
# regime_size_mb)
regime_indexes() {
	local w=$1 v=$2 what=$3 cols=$4 stmts= names= out ms size
	shift 4
	while (($#)); do
		stmts+="CREATE INDEX $2 ON $1 $(ddl_for "$v" "$cols");"$'\n'
		names+="${names:+, }'$2'"
		shift 2
	done
	out=$(printf '%s\n\\timing on\n%s' "${V_SET[$v]}" "$stmts" | q -f -) ||
		die "$w/$v: CREATE INDEX failed"
	ms=$(awk '/^Time: / { t += $2; n++ } END { if (n == 0) exit 1; printf "%.3f", t }' <<<"$out") ||
		die "$w/$v: no timing for CREATE INDEX"
	size=$(sql "SELECT sum(pg_relation_size(i)) FROM unnest(ARRAY[$names]::regclass[]) i")
	record -1 "$w" "$v" regime_build_s "$(ms_to_s "$ms")"
	record -1 "$w" "$v" regime_size_mb "$(bytes_to_mb "$size")"
	log "load: $w $v: CREATE INDEX $(ms_to_s "$ms") s, $(bytes_to_mb "$size") MB ($what)"
}

# make_ranges PREFIX N NROWS [PARENT]: tables PREFIX<i> for i in 1..N, the
# i-th holding the i-th of N equal ranges of keys 1..NROWS (partitions of
# PARENT when given), in one statement; then vacuumed all-visible
# (vacuum_visible, for many tables at once)
make_ranges() {
	local p=$1 n=$2 rows=$3 parent=${4:-} i lo hi per stmts= list= check=
	per=$(((rows + n - 1) / n))
	for ((i = 1; i <= n; i++)); do
		lo=$(((i - 1) * per + 1))
		hi=$((i * per))
		((hi > rows)) && hi=$rows
		if [[ -n $parent ]]; then
			stmts+="CREATE TABLE $p$i PARTITION OF $parent FOR VALUES FROM ($lo) TO ($((hi + 1)));"
		else
			stmts+="CREATE TABLE $p$i (k int4 NOT NULL);"
		fi
		stmts+="INSERT INTO $p$i SELECT g FROM generate_series($lo, $hi) g;"
		list+="${list:+, }$p$i"
		check+="${check:+ UNION ALL }SELECT c.relallvisible >= (SELECT coalesce((max(ctid)::text::point)[0] + 1, 0) FROM $p$i) AS ok FROM pg_class c WHERE c.oid = '$p$i'::regclass"
	done
	sql "$stmts" >/dev/null
	sql "CHECKPOINT" >/dev/null
	sql "VACUUM (FREEZE, ANALYZE) $list" >/dev/null
	[[ $(sql "SELECT bool_and(ok) FROM ($check) s") == t ]] || die "VACUUM left pages of $p* not all-visible"
}

# prewarm_regime INDEX_PATTERN KEYS_PATTERN TABLE_PATTERN: the indexes, the
# probe keys and the tables' visibility maps (the index-only probes read
# nothing else)
prewarm_regime() {
	sql "CHECKPOINT" >/dev/null
	prewarm_all "$1" i
	prewarm_all "$2" r
	sql "SELECT count(pg_prewarm(c.oid::regclass, 'buffer', 'vm')) FROM pg_class c
	     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
	       AND c.relname LIKE '$3' AND pg_relation_size(c.oid, 'vm') > 0" >/dev/null
}

# regime_rounds WORKLOAD FUNCTION [ARGS...]: the warm-up round and ROUNDS
# rounds of FUNCTION ROUND WORKLOAD ARGS (probe_round's ARRAY; the pgbench
# runs of the others take RUNLEN: -T DURATION, WARMUP_DURATION in the
# warm-up round, -t SMOKE_TRANSACTIONS with --smoke)
regime_rounds() {
	local w=$1 f=$2 r dur loads=
	shift 2
	for ((r = 0; r <= ROUNDS; r++)); do
		dur=$DURATION
		((r == 0)) && dur=$WARMUP_DURATION
		RUNLEN=(-T "$dur")
		((SMOKE)) && RUNLEN=(-t "$SMOKE_TRANSACTIONS")
		log "=== $w: round $r of $ROUNDS$( ((r == 0)) && echo ' (warm-up, discarded)')"
		"$f" "$r" "$w" "$@"
		loads+="${loads:+, }$(loadavg)"
	done
	meta "load average, $w" "after each round (0 = warm-up): $loads"
}

# --- probe-part40 -------------------------------------------------------------

# use_part_sql VARIANT -> SQL making the variant's index on every partition
# the only valid one there
use_part_sql() {
	local re="^pt[0-9]+_$(vid "$1")\$"
	echo "UPDATE pg_index SET indisvalid = (indexrelid::regclass::text ~ '$re')
	      WHERE indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'part_t'::regclass)
	        AND indisvalid <> (indexrelid::regclass::text ~ '$re');"
}

run_probe_part() {
	local w i v t0 vs=() pairs
	w=$(part_name)
	mapfile -t vs < <(regime_variants probe-part40)
	t0=$(now_s)
	sql "CREATE TABLE part_t (k int4 NOT NULL) PARTITION BY RANGE (k)" >/dev/null
	make_ranges part_t_ "$PARTITIONS" "$ROWS" part_t
	regime_keys part_keys "$ROWS"
	log "load: $w: $ROWS keys in $PARTITIONS partitions in $(elapsed "$t0" "$(now_s)") s"
	for v in "${vs[@]}"; do
		activate_build "$v"
		pairs=()
		for ((i = 1; i <= PARTITIONS; i++)); do pairs+=("part_t_$i" "pt${i}_$(vid "$v")"); done
		regime_indexes "$w" "$v" "$PARTITIONS indexes" k "${pairs[@]}"
	done
	prewarm_regime 'pt%' 'part\_keys\_%' 'part\_t\_%'
	PART_VARIANTS=("${vs[@]}")
	regime_rounds "$w" probe_round PART_VARIANTS
	sql "DROP TABLE part_t, $(probe_key_tables part_keys); CHECKPOINT" >/dev/null
}

# --- probe-tables -------------------------------------------------------------

# use_tables_sql VARIANT -> SQL making the variant's index on every tab_<i>
# the only valid one there
use_tables_sql() {
	local re="^tb[0-9]+_$(vid "$1")\$"
	echo "UPDATE pg_index SET indisvalid = (indexrelid::regclass::text ~ '$re')
	      WHERE indrelid IN (SELECT oid FROM pg_class WHERE relname ~ '^tab_[0-9]+\$'
	                         AND relnamespace = 'public'::regnamespace)
	        AND indisvalid <> (indexrelid::regclass::text ~ '$re');"
}

# tables_query SLICE -> the probe statement of probe-tables: each key looked
# up in the table that holds it, a correlated subquery per table in a CASE
# on the table's number (evaluated for the one WHEN that matches; every
# variant pays the same dispatch, a few int2 compares a probe)
tables_query() {
	local i per arms=
	per=$(((ROWS + TABLES - 1) / TABLES))
	for ((i = 1; i <= TABLES; i++)); do
		arms+=" WHEN $i THEN (SELECT count(*) FROM tab_$i p WHERE p.k = q.k)"
	done
	echo "SELECT sum(CASE (q.k - 1) / $per + 1$arms END) FROM tab_keys_$1 q"
}

run_probe_tables() {
	local w=probe-tables i v t0 vs=() pairs drop=
	mapfile -t vs < <(regime_variants probe-tables)
	t0=$(now_s)
	make_ranges tab_ "$TABLES" "$ROWS"
	regime_keys tab_keys "$ROWS"
	log "load: $w: $ROWS keys in $TABLES tables in $(elapsed "$t0" "$(now_s)") s"
	for v in "${vs[@]}"; do
		activate_build "$v"
		pairs=()
		for ((i = 1; i <= TABLES; i++)); do pairs+=("tab_$i" "tb${i}_$(vid "$v")"); done
		regime_indexes "$w" "$v" "$TABLES indexes" k "${pairs[@]}"
	done
	prewarm_regime 'tb%' 'tab\_keys\_%' 'tab\_%'
	TABLES_VARIANTS=("${vs[@]}")
	regime_rounds "$w" probe_round TABLES_VARIANTS
	for ((i = 1; i <= TABLES; i++)); do drop+="tab_$i, "; done
	sql "DROP TABLE $drop$(probe_key_tables tab_keys); CHECKPOINT" >/dev/null
}

# --- probe-big and probe-100m: probe-nl on a table of their own ---------------

# use_one_sql TABLE INDEX -> SQL making INDEX the only valid one on TABLE
use_one_sql() {
	echo "UPDATE pg_index SET indisvalid = (indexrelid = '$2'::regclass)
	      WHERE indrelid = '$1'::regclass AND indisvalid <> (indexrelid = '$2'::regclass);"
}

# load_one PREFIX WORKLOAD NROWS VARIANTS...: PREFIX_t of keys 1..NROWS in
# heap order, vacuumed, PREFIX_<variant> per variant, keys PREFIX_keys_<s>
load_one() {
	local p=$1 w=$2 n=$3 v t0
	shift 3
	t0=$(now_s)
	sql "CREATE TABLE ${p}_t (k int4 NOT NULL);
	     INSERT INTO ${p}_t SELECT g FROM generate_series(1, $n) g;" >/dev/null
	vacuum_visible "${p}_t"
	regime_keys "${p}_keys" "$n"
	log "load: $w: $n keys in $(elapsed "$t0" "$(now_s)") s"
	for v in "$@"; do
		activate_build "$v"
		regime_indexes "$w" "$v" "$n keys" k "${p}_t" "${p}_$(vid "$v")"
	done
}

run_probe_100m() {
	local vs=()
	mapfile -t vs < <(regime_variants probe-100m)
	((${#vs[@]} > 1)) || die "probe-100m: none of --large-variants ($LARGE_VARIANTS) is among the variants that run"
	load_one large probe-100m "$LARGE_ROWS" "${vs[@]}"
	prewarm_regime 'large\_%' 'large\_keys\_%' 'large\_t'
	LARGE_VARIANTS_RUN=("${vs[@]}")
	regime_rounds probe-100m probe_round LARGE_VARIANTS_RUN
	sql "DROP TABLE large_t, $(probe_key_tables large_keys); CHECKPOINT" >/dev/null
}

# probe-big: loaded with the run's shared_buffers, then the server restarted
# with BIG_SB_MB and nothing prewarmed; the warm-up round brings the indexes
# into the OS cache (and as much as fits into shared buffers), so that the
# measured rounds read most pages from the OS cache, every variant's slices
# evicting the others'.  The run's shared_buffers is put back afterwards.
run_probe_big() {
	local n vs=() sb size
	mapfile -t vs < <(regime_variants probe-big)
	n=$(big_rows)
	load_one big probe-big "$n" "${vs[@]}"
	size=$(sql "SELECT pg_relation_size('big_btree')")
	sb=$(sql "SHOW shared_buffers")
	sql "CHECKPOINT" >/dev/null
	sql "ALTER SYSTEM SET shared_buffers = '${BIG_SB_MB}MB'" >/dev/null
	cluster_stop
	cluster_start
	log "probe-big: shared_buffers = $(sql "SHOW shared_buffers") (was $sb), each index $(bytes_to_mb "$size") MB"
	meta "probe-big" "$n keys, each variant's index ~$(bytes_to_mb "$size") MB, shared_buffers = ${BIG_SB_MB}MB for it (the rest through the OS cache); $PROBES random keys, nested loop, index-only scan"
	BIG_VARIANTS=("${vs[@]}")
	regime_rounds probe-big probe_round BIG_VARIANTS
	sql "DROP TABLE big_t, $(probe_key_tables big_keys)" >/dev/null
	sql "ALTER SYSTEM SET shared_buffers = '$sb'" >/dev/null
	cluster_stop
	cluster_start
}

# regime_probe WORKLOAD VARIANT SLICE: sets query, use, idx and, where
# the probes are no nested loop, join (probe_slice's plan check)
regime_probe() {
	local v=$2 s=$3
	case $1 in
	probe-part*)
		query="SELECT count(*) FROM part_keys_$s q JOIN part_t p ON p.k = q.k"
		use=$(use_part_sql "$v")
		idx="pt1_$(vid "$v")" ;;
	probe-tables)
		query=$(tables_query "$s")
		use=$(use_tables_sql "$v")
		idx="tb1_$(vid "$v")"
		join='SubPlan' ;;
	probe-big)
		query="SELECT count(*) FROM big_keys_$s q JOIN big_t p ON p.k = q.k"
		use=$(use_one_sql big_t "big_$(vid "$v")")
		idx="big_$(vid "$v")" ;;
	probe-100m)
		query="SELECT count(*) FROM large_keys_$s q JOIN large_t p ON p.k = q.k"
		use=$(use_one_sql large_t "large_$(vid "$v")")
		idx="large_$(vid "$v")" ;;
	*) return 1 ;;
	esac
}

# --- select-connect: pgbench -S -C, every variant side by side ------------------
#
# One pgbench run per round, 1 client, a new connection for every
# transaction (-C, simple protocol as pgbench -S), one script per variant
# (its own table: the planner opens every index of a table, so a table
# with a btlayout index beside btree's would load btlayout.so into btree's
# backends too), equal weights.  A variant's cost is the mean time from the
# end of the transaction before to the end of its own (pgbench's
# per-transaction log: one client, so that is the disconnect, the new
# connection and backend, and the transaction), recorded as conn_rate =
# 1e6 / that mean in microseconds: new connections with one lookup per
# second; its ratio to core btree's is btree's mean over the variant's.

load_connect() {
	local v t0
	t0=$(now_s)
	for v in "${CONN_VARIANTS[@]}"; do
		sql "CREATE TABLE conn_$(vid "$v") (aid int4 NOT NULL, abalance int4 NOT NULL);
		     INSERT INTO conn_$(vid "$v") SELECT g, 0 FROM generate_series(1, $CONN_ROWS) g;" >/dev/null
		vacuum_visible "conn_$(vid "$v")"
		activate_build "$v"
		sql_timed "${V_SET[$v]}" "CREATE INDEX conn_$(vid "$v")_i ON conn_$(vid "$v") $(ddl_for "$v" aid);"
	done
	sql "CHECKPOINT" >/dev/null
	prewarm_all 'conn\_%'
	log "load: select-connect: ${#CONN_VARIANTS[@]} tables of $CONN_ROWS rows and their indexes in $(elapsed "$t0" "$(now_s)") s"
}

wl_select_connect() {
	local r=$1 v args=() vs=() i logdir script
	for v in $(round_order "$r" CONN_VARIANTS); do
		check_plan_with "select-connect/$v" "SELECT 1" "SELECT 1" \
			"SELECT abalance FROM conn_$(vid "$v") WHERE aid = 42" "Index Scan using conn_$(vid "$v")_i "
		script="$TMPD/scripts/select-connect-$(vid "$v").sql"
		printf '\\set aid random(1, %d)\nSELECT abalance FROM conn_%s WHERE aid = :aid;\n' \
			"$CONN_ROWS" "$(vid "$v")" >"$script"
		chown postgres "$script"
		cp "$script" "$RESULTS/scripts/"
		args+=(-f "$script@1")
		vs+=("$v")
	done
	logdir="$TMPD/connlog"
	rm -rf "$logdir"
	mkdir -p "$logdir"
	chown postgres "$logdir"
	run_pgbench "" "${args[@]}" -C "${RUNLEN[@]}" -c 1 -j 1 \
		--random-seed="$(seed_for "$r")" -l --log-prefix="$logdir/tx" >/dev/null
	# Log lines: client transaction latency_us script_no epoch_s epoch_us;
	# the first transaction has no transaction before it
	i=0
	while read -r n mean lat; do
		((n > 0)) || die "select-connect: no transaction of ${vs[$i]} in the run's log"
		record "$r" select-connect "${vs[$i]}" conn_rate "$(awk -v m="$mean" 'BEGIN { printf "%.1f", 1e6 / m }')"
		log "r$r select-connect ${vs[$i]}: $n transactions, mean $mean us a new connection and its SELECT ($lat us the SELECT alone)"
		i=$((i + 1))
	done < <(sort -n -k2,2 "$logdir"/tx.* | awk -v k="${#vs[@]}" '
		{ t = $5 * 1e6 + $6
		  if (NR > 1) { n[$4]++; s[$4] += t - prev; l[$4] += $3 }
		  prev = t }
		END { for (i = 0; i < k; i++) printf "%d %.1f %.1f\n", n[i], (n[i] ? s[i] / n[i] : 0), (n[i] ? l[i] / n[i] : 0) }')
	((i == ${#vs[@]})) || die "select-connect: the log has $i of ${#vs[@]} scripts"
	rm -rf "$logdir"
}

run_select_connect() {
	local v drop=
	mapfile -t CONN_VARIANTS < <(regime_variants select-connect)
	load_connect
	meta "select-connect" "pgbench -C -c 1 (a new connection per transaction), one script per variant in one run, equal weights: SELECT abalance FROM conn_<variant> WHERE aid = random(1, $CONN_ROWS), a table of its own per variant; per variant 1e6 / its mean time per transaction including the new connection"
	regime_rounds select-connect wl_select_connect
	for v in "${CONN_VARIANTS[@]}"; do drop+="${drop:+, }conn_$(vid "$v")"; done
	sql "DROP TABLE $drop; CHECKPOINT" >/dev/null
}

# --- probe-inlist and probe-skip: many keys a statement, pgbench -------------
#
# Statements that look several keys up in one index scan: an IN list
# (k = ANY(an array): the keys in order, a descent or a step along the
# leaves for each) and, from 18 on, a skip scan (an equality on the
# index's second column, the first unconstrained: a descent per value of
# the first).  Like probe-batch: a pgbench run per
# variant (-M prepared, 1 client, the round's seed, so every variant draws
# the same keys), the variants interleaved (round_order); before each run
# the variant's index is made the only valid one on the workload's table,
# the plan checked and one statement's answer checked.

# regime_script NAME TEMPLATE SED_ARGS...: $TMPD/scripts/NAME.sql, the
# pgbench script bench/pgbench/TEMPLATE (make_script's placeholders, then
# SED_ARGS' own), also copied to the results
regime_script() {
	local out=$TMPD/scripts/$1.sql tmpl=$BENCH/pgbench/$2
	shift 2
	sed "$@" "$(make_script "$tmpl")" >"$out"
	chown postgres "$out"
	cp "$out" "$RESULTS/scripts/"
}

# regime_pgbench ROUND WORKLOAD VARIANT KEYS TABLE INDEX QUERY COUNT REGEX...:
# INDEX made the only valid one on TABLE, and QUERY (the script's statement
# for one draw) checked: its plan after PROBE_SET (check_plan_with's
# REGEXes) and its answer (COUNT); then the script WORKLOAD.sql run for
# RUNLEN with PROBE_GUCS, TPS * KEYS (keys a statement) recorded as
# lookups_per_s
regime_pgbench() {
	local r=$1 w=$2 v=$3 keys=$4 t=$5 idx=$6 query=$7 count=$8 got tps lps
	shift 8
	check_plan_with "$w/$v" "$(use_one_sql "$t" "$idx")" "$PROBE_SET" "$query" "$@"
	got=$(q -c "$PROBE_SET" -c "$query")
	[[ $got == "$count" ]] || die "$w/$v: $got instead of $count from: $query"
	tps=$(run_pgbench "$PROBE_GUCS" -f "$TMPD/scripts/$w.sql" -M prepared "${RUNLEN[@]}" -c 1 -j 1 --random-seed="$(seed_for "$r")")
	lps=$(awk -v t="$tps" -v k="$keys" 'BEGIN { printf "%.1f", t * k }')
	record "$r" "$w" "$v" lookups_per_s "$lps"
	log "r$r $w $v: $(fmt_num "$lps") lookups/s"
}

# probe-inlist: inlist_t (k, v) of keys 1..ROWS in heap order, vacuumed
# (all-visible), an index on k per variant; for each N of INLIST_SIZES,
# inlist_keys_<N>: INLIST_ARRAYS arrays of N distinct random keys in random
# order (fixed seed).  A statement takes one of them, by a random id,
# inside itself (an InitPlan: a primary-key probe of the small table, the
# same for every variant; no array is built while measuring) and counts
# its keys in inlist_t:
#
#   probe-inlist-<N>       count(k): an index-only scan
#   probe-inlist-heap-<N>  count(v): an index scan, a heap fetch a key
#
# lookups_per_s = TPS * N.

load_inlist() {
	local n m v t0
	t0=$(now_s)
	# v may be NULL: 19 counts a NOT NULL column as count(*), from the
	# index alone
	sql "CREATE TABLE inlist_t (k int4 NOT NULL, v int4);
	     INSERT INTO inlist_t SELECT g, (g % 1000)::int4 FROM generate_series(1, $ROWS) g;" >/dev/null
	vacuum_visible inlist_t
	for n in "${INLIST_SIZES[@]}"; do
		# Array i: the draws (i - 1) * m + 1 .. i * m, its first N distinct
		# keys in the order drawn.  Storage plain: 1000 keys (4 kB) stay in
		# the row, no TOAST fetch.
		m=$((n + n / 10 + 10))
		sql "SELECT setseed(0.4242);
		     CREATE TABLE inlist_keys_$n (id int4 PRIMARY KEY, ks int4[] NOT NULL);
		     ALTER TABLE inlist_keys_$n ALTER ks SET STORAGE PLAIN;
		     INSERT INTO inlist_keys_$n
		     SELECT i, ARRAY(SELECT k FROM (SELECT k, min(o) AS o
		                                    FROM (SELECT (1 + floor(random() * $ROWS))::int4 AS k, o
		                                          FROM generate_series((i - 1) * $m + 1, i * $m) o) s
		                                    GROUP BY k) d
		                     ORDER BY o LIMIT $n)
		     FROM generate_series(1, $INLIST_ARRAYS) i;" >/dev/null
		[[ $(sql "SELECT count(*) = $INLIST_ARRAYS AND bool_and(cardinality(ks) = $n) FROM inlist_keys_$n") == t ]] ||
			die "probe-inlist: inlist_keys_$n does not hold $INLIST_ARRAYS arrays of $n distinct keys"
		vacuum_visible "inlist_keys_$n"
	done
	log "load: probe-inlist: $ROWS keys, $INLIST_ARRAYS arrays of each of ${INLIST_SIZES[*]} keys in $(elapsed "$t0" "$(now_s)") s"
	for v in "${INLIST_VARIANTS[@]}"; do
		activate_build "$v"
		regime_indexes probe-inlist "$v" "$ROWS keys" k inlist_t "inlist_$(vid "$v")"
	done
	sql "CHECKPOINT" >/dev/null
	prewarm_all 'inlist\_%'
}

# inlist_round ROUND WORKLOAD ARRAY: every N, index-only then with heap
# fetches, the variants of the named array interleaved in each
inlist_round() {
	local r=$1 heap n w col scan v idx
	for heap in '' heap-; do
		col=k scan='Index Only Scan'
		[[ -n $heap ]] && col=v scan='Index Scan'
		for n in "${INLIST_SIZES[@]}"; do
			w=probe-inlist-$heap$n
			regime_script "$w" probe_inlist.sql -e "s/@COL@/$col/g" -e "s/@N@/$n/g" -e "s/@ARRAYS@/$INLIST_ARRAYS/g"
			for v in $(round_order "$r" "$3"); do
				activate_build "$v"
				idx=inlist_$(vid "$v")
				regime_pgbench "$r" "$w" "$v" "$n" inlist_t "$idx" \
					"SELECT count($col) FROM inlist_t WHERE k = ANY((SELECT ks FROM inlist_keys_$n WHERE id = 1)::int4[])" "$n" \
					"$scan using $idx " 'Index Cond: \(k = ANY'
			done
		done
	done
}

run_probe_inlist() {
	local n drop=inlist_t
	mapfile -t INLIST_VARIANTS < <(regime_variants probe-inlist)
	load_inlist
	meta "probe-inlist" "$ROWS keys (k, v), an index on k per variant; pgbench -M prepared, 1 client, a run per variant: SELECT count(k or v) FROM inlist_t WHERE k = ANY(one of $INLIST_ARRAYS arrays of N distinct random keys, N = ${INLIST_SIZES[*]}, taken by a random id inside the statement); count(k): index-only scan (probe-inlist-N), count(v): index scan, a heap fetch a key (probe-inlist-heap-N); lookups/s = TPS * N"
	regime_rounds probe-inlist inlist_round INLIST_VARIANTS
	for n in "${INLIST_SIZES[@]}"; do drop+=", inlist_keys_$n"; done
	sql "DROP TABLE $drop; CHECKPOINT" >/dev/null
}

# probe-skip (18 and later): skip_t (a, b), SKIP_GROUPS values of a times
# ROWS / SKIP_GROUPS values of b in index order, vacuumed (all-visible), an
# index on (a, b) per variant.  A statement counts the rows of a random b
# (SKIP_GROUPS of them), a unconstrained: an index-only scan that before
# 18 reads the whole index, and from 18 on is a skip scan, a descent per
# value of a.  Before each run EXPLAIN ANALYZE must count more than one
# index search (a skip scan, not a full scan).  lookups_per_s = TPS (a
# value of b a statement).

# skip_round ROUND WORKLOAD ARRAY
skip_round() {
	local r=$1 v idx searches query="SELECT count(*) FROM skip_t WHERE b = 42"
	for v in $(round_order "$r" "$3"); do
		activate_build "$v"
		idx=skip_$(vid "$v")
		searches=$(q -c "$(use_one_sql skip_t "$idx")" -c "$PROBE_SET" \
			-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $query" |
			sed -n 's/^ *Index Searches: \([0-9]*\)$/\1/p')
		((${searches:-0} > 1)) || die "probe-skip/$v: not a skip scan (Index Searches: ${searches:-none})"
		regime_pgbench "$r" probe-skip "$v" 1 skip_t "$idx" "$query" "$SKIP_GROUPS" \
			"Index Only Scan using $idx " 'Index Cond: \(b = 42\)'
	done
}

run_probe_skip() {
	local v per t0 why
	if (($(sql "SHOW server_version_num") < 180000)); then
		why="skipped: PostgreSQL $(sql "SHOW server_version") has no skip scan (18 and later)"
		log "probe-skip: $why"
		meta "probe-skip" "$why"
		return 0
	fi
	mapfile -t SKIP_VARIANTS < <(regime_variants probe-skip)
	per=$((ROWS / SKIP_GROUPS))
	t0=$(now_s)
	sql "CREATE TABLE skip_t (a int4 NOT NULL, b int4 NOT NULL);
	     INSERT INTO skip_t SELECT 1 + (g - 1) / $per, 1 + (g - 1) % $per
	     FROM generate_series(1, $((SKIP_GROUPS * per))) g;" >/dev/null
	vacuum_visible skip_t
	log "load: probe-skip: $SKIP_GROUPS x $per keys in $(elapsed "$t0" "$(now_s)") s"
	for v in "${SKIP_VARIANTS[@]}"; do
		activate_build "$v"
		regime_indexes probe-skip "$v" "$((SKIP_GROUPS * per)) keys" "a, b" skip_t "skip_$(vid "$v")"
	done
	sql "CHECKPOINT" >/dev/null
	prewarm_all 'skip\_%'
	regime_script probe-skip probe_skip.sql -e "s/@BVALUES@/$per/g"
	meta "probe-skip" "$SKIP_GROUPS values of a x $per of b, an index on (a, b) per variant; pgbench -M prepared, 1 client, a run per variant: SELECT count(*) FROM skip_t WHERE b = random(1, $per), a unconstrained: index-only skip scan ($SKIP_GROUPS rows, a descent per value of a); lookups/s = TPS"
	regime_rounds probe-skip skip_round SKIP_VARIANTS
	sql "DROP TABLE skip_t; CHECKPOINT" >/dev/null
}

# run_regimes: the selected regime workloads, probe-big last (it restarts
# the server with a shared_buffers of its own)
run_regimes() {
	local w t0
	for w in probe-part40 probe-tables select-connect probe-inlist probe-skip probe-100m probe-big; do
		has_workload "$w" || continue
		t0=$(now_s)
		case $w in
		probe-part40) run_probe_part ;;
		probe-tables) run_probe_tables ;;
		select-connect) run_select_connect ;;
		probe-inlist) run_probe_inlist ;;
		probe-skip) run_probe_skip ;;
		probe-100m) run_probe_100m ;;
		probe-big) run_probe_big ;;
		esac
		log "$w done in $(elapsed "$t0" "$(now_s)") s"
	done
}
