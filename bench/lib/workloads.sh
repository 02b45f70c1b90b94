# shellcheck shell=bash
# bench/lib/workloads.sh: variants, data loading and the workloads.  Sourced
# by scripts/bench.sh.
#
# Tables (database "bench"):
#   pgbench_accounts   pgbench -i -s SCALE without its primary key, and one
#                      index on aid per variant: acc_<variant>     (select)
#   probe_t            (k int4, v int4), keys 1..ROWS in heap order, and one
#                      index on k per variant: probe_<variant>
#                                          (probe-batch, probe-nl, range)
#   probe_keys         PROBES random keys of 1..ROWS in random order (probe-nl)
#   write_t            (k, v), ROWS/10 keys, made anew for each variant in
#                      each round with the variant's index write_idx
#                                          (build, write)
#
# One variant at a time: all the variants' indexes on pgbench_accounts and
# probe_t exist side by side (built once, at load), and before each run
# use_variant marks the variant's index valid and the others invalid in
# pg_index (indisvalid), the state CREATE INDEX CONCURRENTLY leaves an index
# in before it is ready: the planner ignores an invalid index, nothing else
# changes.  Every variant reads the very same heap, the indexes are never
# rebuilt between runs, and the memory cost is one index per variant rather
# than one table.  Every run checks its plan (check_plan) first.

# All workloads, in the order a round runs them.
ALL_WORKLOADS=(select probe-batch probe-nl range build write)

# Planner settings for the probe workloads: a nested loop with the variant's
# index on the inner side is the only plan left (checked before each run).
PROBE_GUCS="-c enable_hashjoin=off -c enable_mergejoin=off -c enable_material=off -c enable_bitmapscan=off"
PROBE_SET="SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off; SET enable_bitmapscan = off;"

# --- keys ----------------------------------------------------------------------
#
# Extension point for text keys: every table, script and query takes its key
# column type and the key of row number g from these two functions.  For
# text, return e.g. "text" and "lpad(g::text, 12, '0')", and give the pgbench
# scripts (bench/pgbench/*.sql, which draw integers with random()) the same
# mapping; the variants then need a text opclass (the defaults are fine).
KEY_TYPE=${KEY_TYPE:-int4}
key_sql_type() {
	case $KEY_TYPE in
	int4) echo int4 ;;
	*) die "key type $KEY_TYPE: not implemented (see key_sql_type in bench/lib/workloads.sh)" ;;
	esac
}
key_expr() { # the key of row number $1 (an SQL expression)
	case $KEY_TYPE in
	int4) echo "$1" ;;
	*) die "key type $KEY_TYPE: not implemented" ;;
	esac
}

# --- variants ------------------------------------------------------------------

declare -A V_KINDS V_BUILD V_DDL V_SET V_DEFAULT
CONF_VARIANTS=()

# load_variants FILE: parse bench/variants.conf into V_* and CONF_VARIANTS.
load_variants() {
	local line name kinds build ddl set default
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%%#*}
		[[ $line =~ [^[:space:]] ]] || continue
		IFS='|' read -r name kinds build ddl set default <<<"$line"
		name=$(xargs <<<"$name")
		kinds=$(xargs <<<"$kinds")
		build=$(xargs <<<"$build")
		ddl=$(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' <<<"$ddl")
		set=$(sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' <<<"$set")
		default=$(xargs <<<"${default:-yes}")
		[[ $default == yes || $default == no ]] || die "variants.conf: $name: default must be yes or no"
		[[ $name =~ ^[A-Za-z0-9_-]+$ ]] || die "variants.conf: bad name '$name'"
		[[ $kinds == all || $kinds == eq ]] || die "variants.conf: $name: kinds must be all or eq"
		[[ $build == normal || $build == pgo ]] || die "variants.conf: $name: build must be normal or pgo"
		[[ $ddl == *'{col}'* ]] || die "variants.conf: $name: the definition has no {col}"
		[[ -z ${V_DDL[$name]:-} ]] || die "variants.conf: $name twice"
		V_KINDS[$name]=$kinds
		V_BUILD[$name]=$build
		V_DDL[$name]=$ddl
		V_SET[$name]=${set:+$set;}
		V_DEFAULT[$name]=$default
		CONF_VARIANTS+=("$name")
	done <"$1"
}

vid() { echo "${1//-/_}"; }                      # variant -> SQL identifier part
aidx() { echo "acc_$(vid "$1")"; }                # its index on pgbench_accounts
pidx() { echo "probe_$(vid "$1")"; }              # its index on probe_t
ddl_for() { echo "${V_DDL[$1]//\{col\}/$2}"; }    # variant, column -> definition
variant_am() { sed -n 's/^USING[[:space:]]\+\([A-Za-z0-9_]*\).*/\1/p' <<<"${V_DDL[$1]}"; }

# applies VARIANT WORKLOAD: does the variant run this workload?
applies() {
	[[ ${V_KINDS[$1]} == eq && $2 == range ]] && return 1
	return 0
}

# variant_works VARIANT: can an index with this definition be created here?
# Tried on a tiny scratch table, in its own session.  Sets VARIANT_ERR.
VARIANT_ERR=
variant_works() {
	local out
	activate_build "$1"
	if out=$(sql "CREATE TABLE _ddl_check (k $(key_sql_type));
		INSERT INTO _ddl_check SELECT $(key_expr g) FROM generate_series(1, 1000) g;
		${V_SET[$1]}
		CREATE INDEX _ddl_check_idx ON _ddl_check $(ddl_for "$1" k);
		SET enable_seqscan = off;
		SELECT count(*) FROM _ddl_check WHERE k = $(key_expr 500);" 2>&1); then
		sql "DROP TABLE IF EXISTS _ddl_check" >/dev/null
		[[ $(tail -n 1 <<<"$out") == 1 ]] || { VARIANT_ERR="wrong answer: $out"; return 1; }
		return 0
	fi
	sql "DROP TABLE IF EXISTS _ddl_check" >/dev/null 2>&1 || true
	VARIANT_ERR=$(grep -m1 ERROR <<<"$out" || echo "$out" | head -n 1)
	return 1
}

# --- one variant at a time ----------------------------------------------------

# use_sql VARIANT -> SQL making the variant's indexes the only valid ones on
# pgbench_accounts and probe_t.  pg_index is updated in place (superuser, a
# throwaway cluster); the update invalidates the indexes' relcache entries,
# and every run is a new session anyway.
use_sql() {
	local a p
	a=$(aidx "$1")
	p=$(pidx "$1")
	echo "UPDATE pg_index SET indisvalid = (indexrelid IN ('$a'::regclass, '$p'::regclass))
	      WHERE indrelid IN ('pgbench_accounts'::regclass, 'probe_t'::regclass)
	        AND indisvalid <> (indexrelid IN ('$a'::regclass, '$p'::regclass));"
}

# check_plan WHAT VARIANT SETUP QUERY REGEX...: make VARIANT's indexes the
# valid ones, EXPLAIN QUERY after SETUP, and require every REGEX (grep -E) in
# the plan, so that no number is measured on a plan other than the one it
# claims.  Called before every run.
check_plan() {
	local what=$1 v=$2 setup=$3 query=$4 plan re
	shift 4
	plan=$(q -c "$(use_sql "$v")" -c "$setup" -c "EXPLAIN (COSTS OFF) $query") ||
		die "EXPLAIN failed for $what"
	for re in "$@"; do
		if ! grep -Eq "$re" <<<"$plan"; then
			printf '%s\n' "$plan" >&2
			die "plan check failed for $what: no /$re/ in the plan above"
		fi
	done
}

# --- loading -------------------------------------------------------------------

prewarm_all() {
	sql "SELECT count(pg_prewarm(c.oid::regclass)),
	            count(CASE WHEN c.relkind = 'r' AND pg_relation_size(c.oid, 'vm') > 0
	                       THEN pg_prewarm(c.oid::regclass, 'buffer', 'vm') END)
	     FROM pg_class c
	     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')" >/dev/null
}

ms_to_s() { awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }'; }
bytes_to_mb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }

# load_data: the pgbench tables, probe_t, every variant's two indexes (their
# build times and sizes are the round -1 "load" measurements), probe_keys.
load_data() {
	local v t0 kt ms_p ms_a size
	kt=$(key_sql_type)
	log "load: pgbench -i -s $SCALE ($ROWS accounts, no primary key)"
	t0=$(now_s)
	# d: drop, t: tables, G: server-side generate, v: vacuum.  No 'p': each
	# variant gets its own index on aid instead of the primary key.
	(cd "$TMPD" && as_pg "$PGBIN/pgbench" -h "$SOCKDIR" -p "$PORT" -i -s "$SCALE" \
		-I dtGv -q "$DB") >>"$LOG" 2>&1 || die "pgbench -i failed (see $LOG)"
	sql "CREATE TABLE probe_t (k $kt NOT NULL, v int4 NOT NULL);
	     INSERT INTO probe_t SELECT $(key_expr g), (g % 1000)::int4 FROM generate_series(1, $ROWS) g;" >/dev/null
	# Vacuumed before the indexes exist: all-visible for index-only scans,
	# and no later VACUUM touches (or relays out) an index.
	sql "VACUUM (FREEZE, ANALYZE) probe_t" >/dev/null
	# The probe keys: a fixed seed, so every run probes the same keys.
	sql "SELECT setseed(0.4242);
	     CREATE TABLE probe_keys AS
	       SELECT $(key_expr '(1 + floor(random() * '"$ROWS"'))::int4') AS k
	       FROM generate_series(1, $PROBES);" >/dev/null
	sql "VACUUM (FREEZE, ANALYZE) probe_keys" >/dev/null
	log "load: tables in $(elapsed "$t0" "$(now_s)") s"

	for v in "${VARIANTS[@]}"; do
		activate_build "$v"
		sql_timed "${V_SET[$v]}" "CREATE INDEX $(pidx "$v") ON probe_t $(ddl_for "$v" k);"
		ms_p=$TIMED_MS
		sql_timed "${V_SET[$v]}" "CREATE INDEX $(aidx "$v") ON pgbench_accounts $(ddl_for "$v" aid);"
		ms_a=$TIMED_MS
		size=$(sql "SELECT pg_relation_size('$(pidx "$v")')")
		record -1 load "$v" build_probe_s "$(ms_to_s "$ms_p")"
		record -1 load "$v" build_accounts_s "$(ms_to_s "$ms_a")"
		record -1 load "$v" size_mb "$(bytes_to_mb "$size")"
		layout_stats_hook -1 load "$v" "$(pidx "$v")"
		log "load: $v: CREATE INDEX $(ms_to_s "$ms_p") s on probe_t, $(ms_to_s "$ms_a") s on pgbench_accounts; $(bytes_to_mb "$size") MB"
	done
	sql "CHECKPOINT" >/dev/null
	prewarm_all
	local data_mb sb
	data_mb=$(sql "SELECT (sum(pg_relation_size(c.oid)) / 1048576)::bigint FROM pg_class c
	               WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')")
	sb=$(sql "SHOW shared_buffers")
	log "load: ${data_mb} MB of tables and indexes prewarmed into shared_buffers = $sb"
	meta "data size" "${data_mb} MB of tables and indexes, prewarmed (shared_buffers = $sb)"
}

# --- hooks into the btlayout extension -------------------------------------------
#
# Used when the extension has the function (checked at startup: HAS_STATS,
# HAS_RELAYOUT) and the variant is a btlayout index.

# layout_stats_hook ROUND WORKLOAD VARIANT INDEX: record the share of the
# index's pages that are in its layout (btlayout_stats().laid_out_percent):
# 100 after a build with a layout, lower after writes.
layout_stats_hook() {
	local r=$1 w=$2 v=$3 idx=$4 pct
	[[ $(variant_am "$v") == btlayout && $HAS_STATS == 1 ]] || return 0
	pct=$(sql "SELECT coalesce(round(laid_out_percent::numeric, 2), 0) FROM btlayout_stats('$idx'::regclass)")
	record "$r" "$w" "$v" laid_out_pct "$pct"
}

# relayout_hook ROUND WORKLOAD VARIANT INDEX: time btlayout_relayout(index),
# which rewrites the pages that writes took out of the layout.
relayout_hook() {
	local r=$1 w=$2 v=$3 idx=$4
	[[ $(variant_am "$v") == btlayout && $HAS_RELAYOUT == 1 ]] || return 0
	sql_timed "" "SELECT btlayout_relayout('$idx'::regclass);"
	record "$r" "$w" "$v" relayout_s "$(ms_to_s "$TIMED_MS")"
	record "$r" "$w" "$v" relayout_pages "$(tail -n 1 <<<"$TIMED_OUT")"
}

# --- the workloads -------------------------------------------------------------
#
# Each wl_* function measures one (round, variant) and records its metrics.
# Arguments: ROUND VARIANT.  pgbench runs for RUNLEN (-T seconds; in smoke
# mode -t transactions).  A round's seed is the same for every variant, so
# the variants of a round draw the same random keys.

seed_for() { echo $((4242 + 7919 * ($1 + 1))); }

# make_script TEMPLATE -> path of the pgbench script made from it
make_script() {
	local tmpl=$1 out sets keys i
	out="$TMPD/scripts/$(basename "$tmpl")"
	if [[ ! -f $out ]]; then
		sets=""
		keys=""
		for ((i = 1; i <= BATCH; i++)); do
			sets+="\\set k$i random(1, $ROWS)"$'\n'
			keys+="${keys:+, }:k$i"
		done
		awk -v sets="$sets" -v keys="$keys" -v rows="$ROWS" -v width="$RANGE_WIDTH" \
			-v batch="$BATCH" -v wrows="$WROWS" '
			/^--/ { next }
			/^@SETS@$/ { printf "%s", sets; next }
			{ gsub(/@KEYS@/, keys); gsub(/@BATCH@/, batch); gsub(/@WIDTH@/, width)
			  gsub(/@WROWS@/, wrows); gsub(/@ROWS@/, rows); print }' "$tmpl" >"$out"
		chown postgres "$out"
		cp "$out" "$RESULTS/scripts/"
	fi
	echo "$out"
}

wl_select() {
	local r=$1 v=$2 tps c
	check_plan "select/$v" "$v" "SELECT 1" "SELECT abalance FROM pgbench_accounts WHERE aid = 42" \
		"Index Scan using $(aidx "$v") "
	for c in "${SELECT_CLIENTS[@]}"; do
		tps=$(run_pgbench "" -S -M prepared "${RUNLEN[@]}" -c "$c" -j "$c" --random-seed="$(seed_for "$r")")
		record "$r" select "$v" "tps_${c}c" "$tps"
		log "r$r select $v ${c}c: $(fmt_num "$tps") tps"
	done
}

wl_probe_batch() {
	local r=$1 v=$2 script tps lps
	script=$(make_script "$BENCH/pgbench/probe_batch.sql")
	check_plan "probe-batch/$v" "$v" "$PROBE_SET" \
		"SELECT count(p.v) FROM unnest(ARRAY[1, 2, 3]::int4[]) AS q(k) JOIN probe_t p ON p.k = q.k" \
		'Nested Loop' "Index (Only )?Scan using $(pidx "$v") "
	tps=$(run_pgbench "$PROBE_GUCS" -f "$script" -M prepared "${RUNLEN[@]}" -c 1 -j 1 --random-seed="$(seed_for "$r")")
	lps=$(awk -v t="$tps" -v b="$BATCH" 'BEGIN { printf "%.1f", t * b }')
	record "$r" probe-batch "$v" lookups_per_s "$lps"
	log "r$r probe-batch $v: $(fmt_num "$lps") lookups/s"
}

wl_probe_nl() {
	local r=$1 v=$2 query scan wall lps
	query="SELECT count(*) FROM probe_keys q JOIN probe_t p ON p.k = q.k"
	scan='Index Only Scan'
	[[ ${V_KINDS[$v]} == eq ]] && scan='Index Scan' # hash cannot return keys
	check_plan "probe-nl/$v" "$v" "$PROBE_SET" "$query" 'Nested Loop' "$scan using $(pidx "$v") "
	sql_timed "$PROBE_SET" "$query;"
	[[ $TIMED_OUT == "$PROBES" ]] || die "probe-nl/$v: found $TIMED_OUT of $PROBES keys"
	wall=$(awk -v m="$TIMED_MS" 'BEGIN { printf "%.4f", m / 1000 }')
	lps=$(awk -v m="$TIMED_MS" -v n="$PROBES" 'BEGIN { printf "%.1f", n / (m / 1000) }')
	record "$r" probe-nl "$v" wall_s "$wall"
	record "$r" probe-nl "$v" lookups_per_s "$lps"
	log "r$r probe-nl $v: $wall s, $(fmt_num "$lps") lookups/s"
}

wl_range() {
	local r=$1 v=$2 script tps
	script=$(make_script "$BENCH/pgbench/range.sql")
	check_plan "range/$v" "$v" "SELECT 1" "SELECT count(*) FROM probe_t WHERE k BETWEEN 5 AND 105" \
		"Index Only Scan using $(pidx "$v") "
	tps=$(run_pgbench "" -f "$script" -M prepared "${RUNLEN[@]}" -c 1 -j 1 --random-seed="$(seed_for "$r")")
	record "$r" range "$v" tps "$tps"
	log "r$r range $v: $(fmt_num "$tps") tps"
}

# build and write share write_t: a fresh table of WROWS keys for each
# variant in each round; build times its CREATE INDEX, write then runs the
# write mix through that index.
wl_build_write() {
	local r=$1 v=$2 script tps size msg
	sql "DROP TABLE IF EXISTS write_t;
	     CREATE TABLE write_t (k $(key_sql_type) NOT NULL, v int4 NOT NULL);
	     INSERT INTO write_t SELECT $(key_expr g), (g % 1000)::int4 FROM generate_series(1, $WROWS) g;" >/dev/null
	sql "VACUUM (FREEZE, ANALYZE) write_t" >/dev/null
	sql "SELECT pg_prewarm('write_t'); CHECKPOINT" >/dev/null
	sql_timed "${V_SET[$v]}" "CREATE INDEX write_idx ON write_t $(ddl_for "$v" k);"
	if has_workload build; then
		size=$(sql "SELECT pg_relation_size('write_idx')")
		record "$r" build "$v" build_s "$(ms_to_s "$TIMED_MS")"
		msg="r$r build $v: $(ms_to_s "$TIMED_MS") s ($WROWS keys, $(bytes_to_mb "$size") MB)"
		log "$msg"
	fi
	if has_workload write; then
		script=$(make_script "$BENCH/pgbench/write.sql")
		sql "SELECT pg_prewarm('write_idx'); CHECKPOINT" >/dev/null
		check_plan "write/$v" "$v" "SELECT 1" "UPDATE write_t SET k = 1 WHERE k = 2" "Index Scan using write_idx"
		tps=$(run_pgbench "" -f "$script" -M prepared "${RUNLEN[@]}" -c 1 -j 1 --random-seed="$(seed_for "$r")")
		record "$r" write "$v" tps "$tps"
		log "r$r write $v: $(fmt_num "$tps") tps"
		# After the measured run: how much of the layout the writes undid,
		# and what it takes to restore it.
		layout_stats_hook "$r" write "$v" write_idx
		relayout_hook "$r" write "$v" write_idx
	fi
	sql "DROP TABLE write_t; CHECKPOINT" >/dev/null
}
