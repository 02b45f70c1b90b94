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
#   mix_t              pgbench_accounts' rows again, with one copy of aid
#                      per variant that can share a run (mix_variants):
#                      k_<variant>, each with that variant's index
#                      mix_<variant>          (select-mix, range-mix)
#   probe_keys_<s>     PROBES random keys of 1..ROWS in random order, dealt
#                      out to PROBE_SLICES tables (probe-nl, probe-inserts)
#   write_t            (k, v), ROWS/10 keys, made anew for each variant in
#                      each round with the variant's index write_idx
#                                          (build, write)
#   wmix_<variant>     (k, v), ROWS/10 keys, one table per variant that can
#                      share a run, each with that variant's index
#                      wmix_<variant>_k, made anew each round  (write-mix)
#   uuid_t             (k uuid), ROWS keys md5(g)::uuid, one index per
#                      variant: uuid_<variant>; and uuid_keys_<s>, PROBES of its
#                      keys in random order.  After the other workloads'
#                      rounds, dropped after its own         (probe-uuid)
#   comp_t             (tenant int4, id int8), ROWS rows (1 + g % 1000, g):
#                      1000 tenants, ids a sequence shared by them; one
#                      index on (tenant, id) per variant but hash:
#                      comp_<variant>; and comp_keys_<s>, PROBES of its
#                      (tenant, id) pairs in random order.  After the other
#                      workloads' rounds, dropped after its own
#                                                       (probe-composite)
#   text_<ds>          (k text), TEXT_KEYS keys of dataset <ds> (code,
#                      code8, md5, url, email), one index per text variant
#                      (variants-text.conf; each in its own collation):
#                      text_<ds>_<variant>; and text_keys_<ds>_<s>, PROBES of
#                      its keys in random order.  One dataset at a time,
#                      after the other workloads' rounds     (probe-text)
#
# One variant at a time: all the variants' indexes on pgbench_accounts and
# probe_t exist side by side (built once, at load), and before each run
# use_variant marks the variant's index valid and the others invalid in
# pg_index (indisvalid), the state CREATE INDEX CONCURRENTLY leaves an index
# in before it is ready: the planner ignores an invalid index, nothing else
# changes.  Every variant reads the very same heap, the indexes are never
# rebuilt between runs, and the memory cost is one index per variant rather
# than one table.  Every run checks its plan (check_plan) first.
#
# Side by side in one run (select-mix, range-mix, write-mix): a run that measures one
# variant and then another measures the machine too, and on a shared
# 2-core machine its rate moves by 10-20% between runs seconds apart, more
# than the few percent an index can change a whole pgbench -S transaction
# by.  So these workloads give every variant its own copy of the key
# column in mix_t (write-mix: its own table) and run all of them in one
# pgbench run, one script per
# variant, pgbench picking a script at random for each transaction: the
# variants share every moment of the run, and each one's mean statement
# latency (from pgbench's per-transaction log) is compared with core
# btree's in the same run.

# All workloads, in the order a round runs them (probe-text: its own rounds,
# dataset by dataset, after the others; then the regime workloads of
# bench/lib/regimes.sh, --regimes and --regimes-large).  The default set
# (DEFAULT_WORKLOADS) leaves out probe-inserts, probe-uuid,
# probe-composite, build-large, probe-text (tables of its own: 10M keys x 4
# datasets) and the regimes; --smoke runs them too (tiny).
ALL_WORKLOADS=(select select-mix probe-batch probe-nl range range-mix build write write-mix probe-inserts probe-uuid probe-composite build-large probe-text
	probe-part40 probe-tables select-connect probe-inlist probe-skip probe-big probe-100m)
DEFAULT_WORKLOADS=(select select-mix probe-batch probe-nl range range-mix build write write-mix)
# The workloads on pgbench_accounts, probe_t and write_t (load_data), and
# those that run the variants of variants.conf: these and probe-uuid and
# probe-composite, which load tables of their own
TABLE_WORKLOADS=" select select-mix probe-batch probe-nl range range-mix build write write-mix probe-inserts build-large "
INT_WORKLOADS="$TABLE_WORKLOADS probe-uuid probe-composite probe-part40 probe-tables select-connect probe-inlist probe-skip probe-big probe-100m "
# The workloads on mix_t, every variant in one run
MIX_WORKLOADS=" select-mix range-mix "

# Planner settings for the probe workloads: a nested loop with the variant's
# index on the inner side is the only plan left (checked before each run).
# Memoize off: with the benchmark's work_mem the planner puts a Memoize cache
# between the nested loop and the index (1M probes, few repeats), and every
# lookup paid its hash probe and insert (about 0.7 us on the 2-3.6 us of a
# lookup, the same for every index) until 2026-11-25.
PROBE_GUCS="-c enable_hashjoin=off -c enable_mergejoin=off -c enable_material=off -c enable_bitmapscan=off -c enable_memoize=off"
PROBE_SET="SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off; SET enable_bitmapscan = off; SET enable_memoize = off;"

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

declare -A V_KINDS V_BUILD V_DDL V_SET V_DEFAULT V_KEY
CONF_VARIANTS=()
TEXT_CONF_VARIANTS=()

# load_variants FILE [PREFIX LIST]: parse bench/variants.conf into V_* and
# CONF_VARIANTS.  With PREFIX and LIST (bench/variants-text.conf: "text:" and
# TEXT_CONF_VARIANTS), the entries are keyed PREFIX<name>, list in LIST, and
# their scratch-table check uses text keys: the names ("btree") may repeat
# those of the integer variants.  vname strips the prefix.
load_variants() {
	local line name kinds build ddl set default prefix=${2:-}
	local -n list=${3:-CONF_VARIANTS}
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
		name=$prefix$name
		[[ -z ${V_DDL[$name]:-} ]] || die "variants.conf: $name twice"
		V_KINDS[$name]=$kinds
		V_BUILD[$name]=$build
		V_DDL[$name]=$ddl
		V_SET[$name]=${set:+$set;}
		V_DEFAULT[$name]=$default
		V_KEY[$name]=int4
		[[ -n $prefix ]] && V_KEY[$name]=text
		list+=("$name")
	done <"$1"
}

vname() { echo "${1#text:}"; }                   # variant key -> its name

vid() { local n=${1#text:}; echo "${n//-/_}"; }  # variant -> SQL identifier part
aidx() { echo "acc_$(vid "$1")"; }                # its index on pgbench_accounts
pidx() { echo "probe_$(vid "$1")"; }              # its index on probe_t
mcol() { echo "k_$(vid "$1")"; }                  # its column of mix_t
midx() { echo "mix_$(vid "$1")"; }                # its index on mix_t
ddl_for() { echo "${V_DDL[$1]//\{col\}/$2}"; }    # variant, column -> definition
variant_am() { sed -n 's/^USING[[:space:]]\+\([A-Za-z0-9_]*\).*/\1/p' <<<"${V_DDL[$1]}"; }

# applies VARIANT WORKLOAD: does the variant run this workload?
applies() {
	[[ ${V_KINDS[$1]} == eq && ($2 == range || $2 == range-mix) ]] && return 1
	[[ $2 == *-mix ]] && ! mixes "$1" && return 1
	return 0
}

# mixes VARIANT: can the variant share a run with the others (select-mix,
# range-mix)?  Those of the default build: every variant of a run is served
# by the one btlayout.so loaded, so a --pgo or --baseline build cannot.
mixes() { [[ ${V_BUILD[$1]:-normal} == normal ]]; }

# mix_variants: the variants with a column in mix_t, in VARIANTS order
mix_variants() {
	local v
	for v in "${VARIANTS[@]}"; do mixes "$v" && echo "$v"; done
}

# variant_works VARIANT: can an index with this definition be created here?
# Tried on a tiny scratch table, in its own session.  Sets VARIANT_ERR.
VARIANT_ERR=
variant_works() {
	local out kt ke=key_expr k500
	kt=$(key_sql_type)
	k500=$(key_expr 500)
	if [[ ${V_KEY[$1]} == text ]]; then
		kt=text ke=text_check_expr
		k500="md5('500')$(text_collate "$1")"
	fi
	activate_build "$1"
	if out=$(sql "CREATE TABLE _ddl_check (k $kt);
		INSERT INTO _ddl_check SELECT $($ke g) FROM generate_series(1, 1000) g;
		${V_SET[$1]}
		CREATE INDEX _ddl_check_idx ON _ddl_check $(ddl_for "$1" k);
		SET enable_seqscan = off;
		SELECT count(*) FROM _ddl_check WHERE k = $k500;" 2>&1); then
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
# only_index_sql TABLE INDEX -> SQL making INDEX the only valid index on
# TABLE (the workloads on tables of their own)
only_index_sql() {
	echo "UPDATE pg_index SET indisvalid = (indexrelid = '$2'::regclass)
	      WHERE indrelid = '$1'::regclass AND indisvalid <> (indexrelid = '$2'::regclass);"
}

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
# the plan and no Memoize node in it (a cache in front of the index), so
# that no number is measured on a plan other than the one it claims.
# Called before every run.
check_plan() {
	local what=$1 v=$2
	shift 2
	check_plan_with "$what" "$(use_sql "$v")" "$@"
}

# check_plan_with WHAT USE_SQL SETUP QUERY REGEX...: check_plan with the SQL
# that makes the variant's index the valid one given.
check_plan_with() {
	local what=$1 use=$2 setup=$3 query=$4 plan re
	shift 4
	plan=$(q -c "$use" -c "$setup" -c "EXPLAIN (COSTS OFF) $query") ||
		die "EXPLAIN failed for $what"
	for re in "$@"; do
		if ! grep -Eq "$re" <<<"$plan"; then
			printf '%s\n' "$plan" >&2
			die "plan check failed for $what: no /$re/ in the plan above"
		fi
	done
	if grep -q Memoize <<<"$plan"; then
		printf '%s\n' "$plan" >&2
		die "plan check failed for $what: a Memoize node in the plan above"
	fi
}

# --- loading -------------------------------------------------------------------

# prewarm_all [PATTERN [RELKINDS]]: tables and indexes (by default all;
# else those whose name is LIKE PATTERN and, with RELKINDS (e.g. "r"), of
# those relkinds), and the tables' visibility maps.  The heaps of the text
# tables (not their probe keys) are left out: the probes are index-only
# scans, which read only the visibility map.
prewarm_all() {
	sql "SELECT count(CASE WHEN c.relkind = 'i' OR c.relname NOT LIKE 'text\_%' OR c.relname LIKE 'text\_keys\_%'
	                       THEN pg_prewarm(c.oid::regclass) END),
	            count(CASE WHEN c.relkind = 'r' AND pg_relation_size(c.oid, 'vm') > 0
	                       THEN pg_prewarm(c.oid::regclass, 'buffer', 'vm') END)
	     FROM pg_class c
	     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')
	       AND strpos('${2:-ri}', c.relkind::text) > 0
	       AND c.relname LIKE '${1:-%}'" >/dev/null
}

ms_to_s() { awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }'; }
bytes_to_mb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1048576 }'; }

# make_probe_keys TABLE KEYFN: PROBES random keys of the ROWS that KEYFN
# gives row numbers 1..ROWS, in random order, dealt out to the slice tables
# TABLE_1 .. TABLE_<PROBE_SLICES> (split_probe_keys).  A fixed seed, so that
# every run probes the same keys.
make_probe_keys() {
	sql "SELECT setseed(0.4242);
	     CREATE TABLE $1 AS
	       SELECT $($2 '(1 + floor(random() * '"$ROWS"'))::int4') AS k
	       FROM generate_series(1, $PROBES);" >/dev/null
	split_probe_keys "$1"
}

# vacuum_visible TABLE: VACUUM (FREEZE, ANALYZE) TABLE, leaving every page
# all-visible, so that an index-only scan of it never visits the heap.  The
# load commits without waiting for its WAL to be flushed (synchronous_commit
# = off), and VACUUM marks a page all-visible only once it can set its
# tuples' hint bits, which waits for that flush (SetHintBits()): run right
# after the load, it left the first 9% of probe_t's 10M rows not
# all-visible, and 9% of the probes fetched the heap, for both sides.  A
# CHECKPOINT flushes the WAL first; then as many pages must be all-visible
# as there are up to the last one holding a tuple (the load fills pages in
# order; the empty pages a bulk load's relation extension leaves at the
# end, 5 of 448 in 18's mix_t at scale 1, hold nothing and are not marked).
vacuum_visible() {
	sql "CHECKPOINT" >/dev/null
	sql "VACUUM (FREEZE, ANALYZE) $1" >/dev/null
	[[ $(sql "SELECT c.relallvisible >= (SELECT coalesce((max(ctid)::text::point)[0] + 1, 0) FROM $1)
	          FROM pg_class c WHERE c.oid = '$1'::regclass") == t ]] ||
		die "VACUUM left pages of $1 not all-visible"
}

# split_probe_keys TABLE [COLUMNS]: TABLE's keys (its column k, or the
# columns COLUMNS: "tenant, id") dealt out in its order to the tables
# TABLE_1 .. TABLE_<PROBE_SLICES>, round robin (each slice a random sample
# of the keys, in random order), each vacuumed (all-visible, frozen,
# analyzed); TABLE is dropped.  probe_round measures one slice at a time.
split_probe_keys() {
	local s cols=${2:-k}
	for ((s = 1; s <= PROBE_SLICES; s++)); do
		sql "CREATE TABLE $1_$s AS
		       SELECT $cols FROM (SELECT $cols, row_number() OVER (ORDER BY ctid) AS n FROM $1) x
		       WHERE (n - 1) % $PROBE_SLICES = $((s - 1))
		       ORDER BY n;" >/dev/null
		vacuum_visible "$1_$s"
	done
	sql "DROP TABLE $1" >/dev/null
}

# probe_key_tables TABLE -> "TABLE_1, TABLE_2, ...": the slices, for DROP
probe_key_tables() {
	local s out=
	for ((s = 1; s <= PROBE_SLICES; s++)); do
		out+="${out:+, }$1_$s"
	done
	echo "$out"
}

# load_data: the pgbench tables, probe_t, every variant's two indexes (their
# build times and sizes are the round -1 "load" measurements), probe_keys_<s>.
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
	vacuum_visible "probe_t"
	make_probe_keys probe_keys key_expr
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
	has_mix_workloads && load_mix
	sql "CHECKPOINT" >/dev/null
	local data_mb sb
	data_mb=$(sql "SELECT (sum(pg_relation_size(c.oid)) / 1048576)::bigint FROM pg_class c
	               WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')")
	sb=$(sql "SHOW shared_buffers")
	log "load: ${data_mb} MB of tables and indexes, prewarmed into shared_buffers = $sb at each round (place_buffers)"
	meta "data size" "${data_mb} MB of tables and indexes, prewarmed at the start of each round, the variants' indexes in a rotating order (shared_buffers = $sb)"
}

# place_buffers ROUND: a restart, then the tables (and their visibility
# maps) and every variant's indexes prewarmed, the variants in the round's
# rotation (round_rotation).  After a restart the buffers are handed out in
# the order they are read, so each round puts every variant's indexes in
# another stretch of shared buffers, and over as many rounds as there are
# variants each variant has each place once.  Prewarmed once after the
# load, in one fixed order, the index in one place of shared buffers ran
# range scans 4-7% slower on this project's 2-core virtual machine with
# 4 kB pages, whatever its layout; since every round starts from a
# restart, no place has been slow (docs/performance.md, "Side by side in
# one run"), and the rotation keeps any place that is from always
# falling on the same variant.
place_buffers() {
	local v
	cluster_stop
	cluster_start
	prewarm_all '%' r
	for v in $(round_rotation "$1" VARIANTS); do
		sql "SELECT count(pg_prewarm(i)) FROM unnest(ARRAY['$(aidx "$v")', '$(pidx "$v")', '$(midx "$v")']) AS n,
		            LATERAL to_regclass(n) AS i
		     WHERE i IS NOT NULL" >/dev/null
	done
}

# load_mix: mix_t, pgbench_accounts' rows in its order with one copy of aid
# per variant of mix_variants, vacuumed (all-visible, for range-mix's
# index-only scans) before each column gets its variant's index.
load_mix() {
	local v cols="" t0
	t0=$(now_s)
	for v in $(mix_variants); do
		cols+=", aid AS $(mcol "$v")"
	done
	sql "CREATE TABLE mix_t AS SELECT aid, bid, abalance, filler$cols FROM pgbench_accounts ORDER BY aid;" >/dev/null
	vacuum_visible "mix_t"
	for v in $(mix_variants); do
		activate_build "$v"
		sql "${V_SET[$v]} CREATE INDEX $(midx "$v") ON mix_t $(ddl_for "$v" "$(mcol "$v")");" >/dev/null
	done
	log "load: mix_t and its $(mix_variants | wc -l) indexes in $(elapsed "$t0" "$(now_s)") s"
}

# mix_need_mb NVARIANTS: shared_buffers that mix_t and its indexes take
# (pgbench_accounts' ~13 MB per scale unit, 4 bytes a row more per column,
# ~2.2 MB per scale unit per int4 index)
mix_need_mb() {
	awk -v s="$SCALE" -v n="$1" 'BEGIN { printf "%d", s * (13.0 + n * (0.5 + 2.2)) }'
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

# --- the probe workloads: rounds of slices --------------------------------------
#
# probe-nl, probe-ins-*, probe-uuid, probe-composite, probe-comp-ins-* and
# probe-text-*
# measure PROBES lookups
# per variant and round, as PROBE_SLICES statements of PROBES/PROBE_SLICES
# keys each (the slice tables of split_probe_keys), the variants taking
# turns slice by slice: A B, B A, A B, B A in even rounds, B A, A B, ... in
# odd ones.  A variant's time in a round is the sum of its slices' times.
#
# Why slices: on this project's 2-core virtual machine, for seconds at a
# time, whatever runs gets slower (no steal time is reported; the time is
# spent in the backend, waiting for memory).  Measured one after the other,
# a variant's 1.5 s and btree's 3 s of a round fell on either side of such
# a stretch: in 104 rounds of probe-nl (1M probes, 15, huge pages, four
# runs), `blocked`'s time jumped 17-42% in five (in one of them btree's
# too), whose ratios fell below 1.8x, and btree's alone 17-37% in four,
# whose ratios rose to 2.3-2.9x (docs/performance.md, "Rounds and
# slices").  Taking turns every
# quarter of the probes puts both sides of a round under the same
# conditions.  --probe-slices 1 measures each variant's PROBES in one
# statement, as runs before 2026-11-26 did.
#
# Each variant runs its slices of a round in one session, as it ran the
# one statement before: a backend starts with none of what it keeps for
# an index (catalog caches; btlayout's map of recent buffers, learnt leaf
# by leaf), and a backend per slice charged that start-up, larger for
# btlayout than for core btree, to every slice (bench/README.md, "Probes
# in slices"; docs/performance.md, "A backend per slice").  The session
# plans with the catalog state the slice's plan check committed, read at
# the start of its statement.

# probe_round ROUND WORKLOAD ARRAY: one round of a probe workload for the
# variants of the named array; records wall_s and lookups_per_s per variant.
probe_round() {
	local r=$1 w=$2 arr=$3 s v name lps
	local -A ms=() found=() slices=()
	for ((s = 1; s <= PROBE_SLICES; s++)); do
		for v in $(round_order $((r + s - 1)) "$arr"); do
			activate_build "$v"
			[[ -n ${SESSION_PID[$v]:-} ]] || session_open "$v"
			probe_slice "$w" "$v" "$s"
			ms[$v]=$(awk -v a="${ms[$v]:-0}" -v b="$TIMED_MS" 'BEGIN { printf "%.3f", a + b }')
			found[$v]=$((${found[$v]:-0} + TIMED_OUT))
			slices[$v]+="${slices[$v]:+ }$(ms_to_s "$TIMED_MS")"
		done
	done
	session_close_all
	for v in $(round_order "$r" "$arr"); do
		name=$v
		[[ $w == probe-text-* ]] && name=$(vname "$v")
		# probe-ins-*, probe-comp-ins-*: a probe also finds the duplicates
		# the inserts made
		if [[ $w == probe-ins-* || $w == probe-comp-ins-* ]]; then
			((found[$v] >= PROBES)) || die "$w/$name: found ${found[$v]} of at least $PROBES keys"
		else
			[[ ${found[$v]} == "$PROBES" ]] || die "$w/$name: found ${found[$v]} of $PROBES keys"
		fi
		lps=$(awk -v m="${ms[$v]}" -v n="$PROBES" 'BEGIN { printf "%.1f", n / (m / 1000) }')
		record "$r" "$w" "$name" wall_s "$(ms_to_s "${ms[$v]}")"
		record "$r" "$w" "$name" lookups_per_s "$lps"
		log "r$r $w $name: $(ms_to_s "${ms[$v]}") s, $(fmt_num "$lps") lookups/s (slices: ${slices[$v]} s)"
	done
}

# probe_slice WORKLOAD VARIANT SLICE: the variant's index made the valid one
# and the plan checked, then the slice's keys looked up through a nested
# loop in the variant's session of the round; TIMED_MS is the statement's
# time, TIMED_OUT the keys found.
probe_slice() {
	local w=$1 v=$2 s=$3 query use idx scan='Index Only Scan' ds join='Nested Loop' conds=()
	case $w in
	probe-nl | probe-ins-*)
		query="SELECT count(*) FROM probe_keys_$s q JOIN probe_t p ON p.k = q.k"
		use=$(use_sql "$v")
		idx=$(pidx "$v") ;;
	probe-uuid)
		query="SELECT count(*) FROM uuid_keys_$s q JOIN uuid_t p ON p.k = q.k"
		use=$(use_uuid_sql "$v")
		idx=$(uidx "$v") ;;
	probe-composite | probe-comp-ins-*)
		query="SELECT count(*) FROM comp_keys_$s q JOIN comp_t p ON p.tenant = q.tenant AND p.id = q.id"
		use=$(use_comp_sql "$v")
		idx=$(cidx "$v")
		# both columns looked up in the index, neither a filter
		conds=('Index Cond: \(\(tenant = q\.tenant\) AND \(id = q\.id\)\)') ;;
	probe-text-*)
		ds=${w#probe-text-}
		query="SELECT count(*) FROM text_keys_${ds}_$s q JOIN text_$ds p ON p.k = q.k$(text_collate "$v")"
		use=$(use_text_sql "$ds" "$v")
		idx=$(tidx "$ds" "$v") ;;
	*) regime_probe "$w" "$v" "$s" || die "probe_slice: unknown workload $w" ;; # bench/lib/regimes.sh
	esac
	[[ ${V_KINDS[$v]} == eq ]] && scan='Index Scan' # hash cannot return keys
	check_plan_with "$w/$(vname "$v")" "$use" "$PROBE_SET" "$query" "$join" "$scan using $idx " "${conds[@]}"
	session_timed "$v" "$PROBE_SET" "$query;"
	[[ $TIMED_OUT =~ ^[0-9]+$ ]] || die "$w/$(vname "$v"): no count from slice $s"
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

# run_mix ROUND WORKLOAD TEMPLATE CLIENTS METRIC: one pgbench run of every
# variant of mix_variants that runs WORKLOAD side by side: a script per
# variant made from TEMPLATE (@COL@: its column of mix_t; @VID@: its name
# in SQL identifiers), equal weights,
# in the round's variant order; pgbench's per-transaction log gives each
# script's mean latency, recorded as METRIC = 1e6 / mean latency in
# microseconds (per second, higher is better), so that its ratio to core
# btree's is btree's mean latency over the variant's.
run_mix() {
	local r=$1 w=$2 tmpl=$3 c=$4 metric=$5 v args=() vs=() i logdir script
	for v in $(round_order "$r" VARIANTS); do
		applies "$v" "$w" || continue
		script="$TMPD/scripts/$w-$(vid "$v").sql"
		sed -e "s/@COL@/$(mcol "$v")/g" -e "s/@VID@/$(vid "$v")/g" "$(make_script "$tmpl")" >"$script"
		args+=(-f "$script@1")
		vs+=("$v")
	done
	((${#vs[@]})) || return 0
	logdir="$TMPD/mixlog"
	rm -rf "$logdir"
	mkdir -p "$logdir"
	chown postgres "$logdir"
	run_pgbench "" "${args[@]}" -M prepared "${RUNLEN[@]}" -c "$c" -j "$c" \
		--random-seed="$(seed_for "$r")" -l --log-prefix="$logdir/tx" >/dev/null
	# Log lines: client transaction latency_us script_no epoch_s epoch_us
	i=0
	while read -r n mean; do
		((n > 0)) || die "$w: no statement of ${vs[$i]} in the run's log"
		record "$r" "$w" "${vs[$i]}" "$metric" "$(awk -v m="$mean" 'BEGIN { printf "%.1f", 1e6 / m }')"
		log "r$r $w ${vs[$i]} ${c}c: $n statements, mean latency $mean us"
		i=$((i + 1))
	done < <(cat "$logdir"/tx.* | awk -v k="${#vs[@]}" '
		{ n[$4]++; s[$4] += $3 }
		END { for (i = 0; i < k; i++) printf "%d %.3f\n", n[i], (n[i] ? s[i] / n[i] : 0) }')
	((i == ${#vs[@]})) || die "$w: the log has $i of ${#vs[@]} scripts"
	rm -rf "$logdir"
}

# wl_mix ROUND WORKLOAD TEMPLATE QUERY SCAN: WORKLOAD's run_mix at each
# client count of select, after checking that each variant's QUERY ({col}:
# its column of mix_t) runs as SCAN using its index
wl_mix() {
	local r=$1 w=$2 tmpl=$3 query=$4 scan=$5 v c
	# The default build serves every variant of the run (mixes)
	activate_build "$(mix_variants | head -n 1)"
	for v in $(mix_variants); do
		applies "$v" "$w" || continue
		check_plan_with "$w/$v" "SELECT 1" "SELECT 1" "${query//\{col\}/$(mcol "$v")}" \
			"$scan using $(midx "$v") "
	done
	for c in "${SELECT_CLIENTS[@]}"; do
		run_mix "$r" "$w" "$BENCH/pgbench/$tmpl" "$c" "rate_${c}c"
	done
}

wl_select_mix() {
	wl_mix "$1" select-mix select_mix.sql "SELECT abalance FROM mix_t WHERE {col} = 42" "Index Scan"
}

wl_range_mix() {
	wl_mix "$1" range-mix range_mix.sql "SELECT count(*) FROM mix_t WHERE {col} BETWEEN 5 AND 105" "Index Only Scan"
}

# make_write_table T: a fresh table T (k, v) of WROWS keys, all visible,
# for build, write and write-mix
make_write_table() {
	sql "DROP TABLE IF EXISTS $1;
	     CREATE TABLE $1 (k $(key_sql_type) NOT NULL, v int4 NOT NULL);
	     INSERT INTO $1 SELECT $(key_expr g), (g % 1000)::int4 FROM generate_series(1, $WROWS) g;" >/dev/null
	vacuum_visible "$1"
}

# build and write share write_t: a fresh table of WROWS keys for each
# variant in each round; build times its CREATE INDEX, write then runs the
# write mix through that index.
wl_build_write() {
	local r=$1 v=$2 script tps size msg
	make_write_table write_t
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

# write-mix: write's mix with every variant side by side in one pgbench run
# (1 client), each on a table of its own made anew each round (write_t's
# rows and index), prewarmed and checkpointed before the run.  Each
# variant's 1e6 / mean transaction latency against core btree's in the same
# run: what the lookup relayouts of the UPDATEs, page splits out of the
# layout and the extra WAL of a btlayout index cost a write-heavy workload,
# with the machine's drift shared by all.  The share of each index's pages
# still in its layout after the run is recorded too.
wl_write_mix() {
	local r=$1 v t vs=()
	activate_build "$(mix_variants | head -n 1)"
	for v in $(mix_variants); do
		applies "$v" write-mix && vs+=("$v")
	done
	for v in "${vs[@]}"; do
		t="wmix_$(vid "$v")"
		make_write_table "$t"
		sql "${V_SET[$v]} CREATE INDEX ${t}_k ON $t $(ddl_for "$v" k);
		     SELECT pg_prewarm('$t'), pg_prewarm('${t}_k')" >/dev/null
		check_plan_with "write-mix/$v" "SELECT 1" "SELECT 1" "UPDATE $t SET k = 1 WHERE k = 2" \
			"Index Scan using ${t}_k "
	done
	sql "CHECKPOINT" >/dev/null
	run_mix "$r" write-mix "$BENCH/pgbench/write_mix.sql" 1 rate_1c
	for v in "${vs[@]}"; do
		layout_stats_hook "$r" write-mix "$v" "wmix_$(vid "$v")_k"
		sql "DROP TABLE wmix_$(vid "$v")" >/dev/null
	done
	sql "CHECKPOINT" >/dev/null
}

# --- probe-inserts: probe-nl after random inserts -----------------------------
#
# After the other workloads' rounds (it writes into probe_t, whose indexes
# every variant shares), in steps: random keys of 1..ROWS are inserted into
# probe_t until INS_STEPS percent of ROWS (cumulative: 0.1, then 1, then 10)
# have been, with no VACUUM; after each step the share of pages in layout, in
# layout with inserts since and out of layout is recorded for each btlayout
# variant, then a warm-up round and ROUNDS rounds of probe-nl run, variants
# interleaved, recorded as workload probe-ins-<pct>.  Against probe-nl of the
# same run, that is each variant's speed after inserts against its speed
# freshly laid out.  A variant with lookup_relayout on rewrites the stale
# pages its probes meet during the warm-up round; one with it off shows the
# search on pages with inserts since.  With probe-composite, the same steps
# on comp_t after its rounds (random existing pairs inserted again), as
# probe-comp-ins-<pct>.

INS_STEPS=(0.1 1 10)

# ins_layout_hook ROUND WORKLOAD VARIANT INDEX: pages in layout, in layout
# with inserts since, out of layout (percent of live pages)
ins_layout_hook() {
	local r=$1 w=$2 v=$3 idx=$4 row
	[[ $(variant_am "$v") == btlayout && $HAS_STATS == 1 ]] || return 0
	row=$(sql "SELECT round(100.0 * laid_out_pages / l, 2), round(100.0 * inserted_since_pages / l, 2),
	                  round(100.0 * out_of_layout_pages / l, 2)
	           FROM btlayout_stats('$idx'::regclass), LATERAL (SELECT greatest(root_pages + internal_pages + leaf_pages, 1) AS l) s")
	IFS='|' read -r laid ins out <<<"$row"
	record "$r" "$w" "$v" laid_out_pct "$laid"
	record "$r" "$w" "$v" inserted_since_pct "$ins"
	record "$r" "$w" "$v" out_of_layout_pct "$out"
}

# probe_after_inserts PREFIX TABLE ROWSFN ARRAY IDXFN PREWARM: the steps of
# INS_STEPS on TABLE, each followed by its rounds, recorded as
# PREFIX-<pct>: ROWSFN N gives the SELECT of N random rows to insert, IDXFN
# VARIANT the variant's index, PREWARM the relations prewarmed (a LIKE
# pattern); the variants of the named array
probe_after_inserts() {
	local prefix=$1 table=$2 rowsfn=$3 arr=$4 idxfn=$5 pattern=$6 pct done=0 target w r v step=0
	local -n vars=$arr
	for pct in "${INS_STEPS[@]}"; do
		step=$((step + 1))
		target=$(awk -v p="$pct" -v n="$ROWS" 'BEGIN { printf "%d", n * p / 100 }')
		w="$prefix-$pct"
		sql "SELECT setseed(0.$((42 + step))); INSERT INTO $table $($rowsfn $((target - done)))" >/dev/null
		log "$prefix: $target rows inserted into $table ($pct% of $ROWS), no VACUUM"
		done=$target
		sql "CHECKPOINT" >/dev/null
		prewarm_all "$pattern"
		for v in "${vars[@]}"; do
			ins_layout_hook -1 "$w" "$v" "$($idxfn "$v")"
		done
		for ((r = 0; r <= ROUNDS; r++)); do
			probe_round "$r" "$w" "$arr"
		done
	done
}

# ins_probe_rows N: N random keys of 1..ROWS, most of them there already
ins_probe_rows() { echo "SELECT (1 + floor(random() * $ROWS))::int4, 0 FROM generate_series(1, $1)"; }

run_probe_inserts() {
	probe_after_inserts probe-ins probe_t ins_probe_rows VARIANTS pidx 'probe\_%'
}

# --- probe-uuid: probe-nl on uuid keys -----------------------------------------
#
# After the other workloads' rounds, on a table of its own: uuid_t (k uuid)
# of ROWS keys md5(g)::uuid, spread over the key space like random (version
# 4) uuids but the same in every run, inserted in order of g, so that heap
# order and key order are unrelated; one index per variant (uidx, the
# variants of variants.conf); uuid_keys, PROBES random existing keys in
# random order (fixed seed).  A warm-up round and ROUNDS rounds of probe-nl
# over them, the variants interleaved, recorded as workload probe-uuid.  The
# keys are 16 bytes wide: a leaf holds about 200 of them instead of int4's
# 400, the index is twice probe_t's and its levels' compares are wider.

uidx() { echo "uuid_$(vid "$1")"; } # variant -> its index on uuid_t
uuid_key_expr() { echo "md5(($1)::text)::uuid"; }

# use_uuid_sql VARIANT -> SQL making the variant's index the only valid one
# on uuid_t
use_uuid_sql() { only_index_sql uuid_t "$(uidx "$1")"; }

# uuid_need_mb NVARIANTS -> MB of shared_buffers probe-uuid needs: the heap
# (44 bytes a row: tuple header, key, line pointer), an index per variant (a
# 24-byte leaf tuple and its line pointer at 90% fill: 31 bytes a key), the
# probe keys
uuid_need_mb() {
	awk -v n="$ROWS" -v nv="$1" -v p="$PROBES" 'BEGIN { printf "%d", (n * 44 + n * nv * 31 + p * 44) * 1.1 / 1048576 }'
}

# load_uuid: the tables, their vacuum, every variant's index, prewarm
load_uuid() {
	local t0
	t0=$(now_s)
	sql "CREATE TABLE uuid_t (k uuid NOT NULL);
	     INSERT INTO uuid_t SELECT $(uuid_key_expr g) FROM generate_series(1, $ROWS) g;" >/dev/null
	vacuum_visible "uuid_t"
	make_probe_keys uuid_keys uuid_key_expr
	log "load: probe-uuid: tables in $(elapsed "$t0" "$(now_s)") s"
	build_own_indexes probe-uuid uuid_t k uidx uuid "${VARIANTS[@]}"
	sql "CHECKPOINT" >/dev/null
	prewarm_all 'uuid\_%'
	log "load: probe-uuid in $(elapsed "$t0" "$(now_s)") s"
}

# build_own_indexes WORKLOAD TABLE COLUMNS IDXFN PREFIX VARIANT...: each
# variant's index on the columns of a workload's own table (IDXFN VARIANT
# names it), timed and sized: PREFIX_build_s, PREFIX_size_mb
build_own_indexes() {
	local w=$1 table=$2 cols=$3 idxfn=$4 prefix=$5 v size
	shift 5
	for v in "$@"; do
		activate_build "$v"
		sql_timed "${V_SET[$v]}" "CREATE INDEX $($idxfn "$v") ON $table $(ddl_for "$v" "$cols");"
		size=$(sql "SELECT pg_relation_size('$($idxfn "$v")')")
		record -1 "$w" "$v" "${prefix}_build_s" "$(ms_to_s "$TIMED_MS")"
		record -1 "$w" "$v" "${prefix}_size_mb" "$(bytes_to_mb "$size")"
		layout_stats_hook -1 "$w" "$v" "$($idxfn "$v")"
		log "load: $w $v: CREATE INDEX $(ms_to_s "$TIMED_MS") s, $(bytes_to_mb "$size") MB"
	done
}

# own_rounds WORKLOAD ARRAY: the warm-up round and ROUNDS rounds of a probe
# workload on a table of its own, for the variants of the named array; the
# load average after each goes to the meta
own_rounds() {
	local w=$1 arr=$2 r loads=
	for ((r = 0; r <= ROUNDS; r++)); do
		log "=== $w: round $r of $ROUNDS$( ((r == 0)) && echo ' (warm-up, discarded)')"
		probe_round "$r" "$w" "$arr"
		loads+="${loads:+, }$(loadavg)"
	done
	meta "load average, $w" "after each round (0 = warm-up): $loads"
}

run_probe_uuid() {
	load_uuid
	own_rounds probe-uuid VARIANTS
	sql "DROP TABLE uuid_t, $(probe_key_tables uuid_keys); CHECKPOINT" >/dev/null
}

# --- probe-composite: probe-nl on a two-column key ------------------------------
#
# After the other workloads' rounds (after probe-uuid), on a table of its
# own: comp_t (tenant int4, id int8) of ROWS rows, row g = (1 + g % 1000, g):
# COMP_TENANTS (1000) tenants of ROWS/1000 rows each, uniform, and ids that
# a sequence shared by all tenants gives (a bigserial, as a multi-tenant
# table's primary key (tenant, id) often has), so that within a tenant they
# increase with gaps of 1000.  Every pair is distinct, so each probe finds
# exactly one row (the counts are checked exactly); the heap is in id order,
# unrelated to the key order (tenant, id).  At 10M rows a tenant's 10,000
# keys fill ~40 leaves: most pivots need both columns, the pivots at a
# tenant's edge are truncated to the tenant alone (nbtree's suffix
# truncation), so the upper levels hold both kinds.  Random ids would
# change neither (an int8 compare costs the same whatever its value) and
# would need a check for duplicates.  One index on (tenant, id) per variant
# (cidx; hash, one column only, does not run it); comp_keys, PROBES random
# existing pairs in random order (fixed seed).  A warm-up round and ROUNDS
# rounds of
#
#   SELECT count(*) FROM comp_keys_<s> q JOIN comp_t p ON p.tenant = q.tenant AND p.id = q.id
#
# the variants interleaved, recorded as workload probe-composite; the plan
# must be a nested loop over an index-only scan of the variant's index with
# both columns in its Index Cond.  The index tuple (int4, padding, int8) is
# 24 bytes, as uuid's: the index is the size of probe-uuid's.

COMP_TENANTS=1000

cidx() { echo "comp_$(vid "$1")"; } # variant -> its index on comp_t
comp_tenant_expr() { echo "(1 + ($1) % $COMP_TENANTS)::int4"; } # row number -> its tenant

# use_comp_sql VARIANT -> SQL making the variant's index the only valid one
# on comp_t
use_comp_sql() { only_index_sql comp_t "$(cidx "$1")"; }

# comp_variants: the variants that run probe-composite (hash: one column only)
comp_variants() {
	local v
	for v in "${VARIANTS[@]}"; do
		[[ ${V_KINDS[$v]} == all ]] && echo "$v"
	done
}

# comp_need_mb NVARIANTS -> MB of shared_buffers probe-composite needs, as
# uuid_need_mb: a 40-byte heap tuple and its line pointer, a 24-byte index
# tuple per variant (31 bytes a key at 90% fill), the probe keys
comp_need_mb() {
	awk -v n="$ROWS" -v nv="$1" -v p="$PROBES" 'BEGIN { printf "%d", (n * 44 + n * nv * 31 + p * 44) * 1.1 / 1048576 }'
}

# ins_comp_rows N: N random existing pairs, inserted again (probe-inserts)
ins_comp_rows() {
	echo "SELECT $(comp_tenant_expr g), g FROM (SELECT (1 + floor(random() * $ROWS))::int8 AS g FROM generate_series(1, $1)) s"
}

# load_comp: the tables, their vacuum, every variant's index, prewarm
load_comp() {
	local t0
	t0=$(now_s)
	sql "CREATE TABLE comp_t (tenant int4 NOT NULL, id int8 NOT NULL);
	     INSERT INTO comp_t SELECT $(comp_tenant_expr g), g FROM generate_series(1::int8, $ROWS) g;" >/dev/null
	vacuum_visible comp_t
	sql "SELECT setseed(0.4242);
	     CREATE TABLE comp_keys AS
	       SELECT $(comp_tenant_expr g) AS tenant, g AS id
	       FROM (SELECT (1 + floor(random() * $ROWS))::int8 AS g FROM generate_series(1, $PROBES)) s;" >/dev/null
	split_probe_keys comp_keys "tenant, id"
	log "load: probe-composite: tables in $(elapsed "$t0" "$(now_s)") s"
	build_own_indexes probe-composite comp_t 'tenant, id' cidx comp "${COMP_VARIANTS[@]}"
	sql "CHECKPOINT" >/dev/null
	prewarm_all 'comp\_%'
	log "load: probe-composite in $(elapsed "$t0" "$(now_s)") s"
}

run_probe_composite() {
	mapfile -t COMP_VARIANTS < <(comp_variants)
	load_comp
	own_rounds probe-composite COMP_VARIANTS
	has_workload probe-inserts &&
		probe_after_inserts probe-comp-ins comp_t ins_comp_rows COMP_VARIANTS cidx 'comp\_%'
	sql "DROP TABLE comp_t, $(probe_key_tables comp_keys); CHECKPOINT" >/dev/null
}

# --- build-large: CREATE INDEX on large tables, serial and parallel -----------
#
# After the other workloads' rounds: build_t of ROWS rows, whose int4 key k
# is a permutation of 1..ROWS scattered over the heap (k = g * 7919 mod a
# prime above ROWS, so the sort has real work), with md5(g) as t, and a
# 3-column index's columns a (1000 values) and b (int8).  Datasets, each an
# index built and dropped:
#
#   int4      build_t (k)
#   md5       build_t (t), the database's default collation
#   accounts  pgbench_accounts (aid)
#   3col      build_t (a, b, k)
#
# each serially (max_parallel_maintenance_workers = 0) and with the
# server's default workers (max_parallel_maintenance_workers = 2, as many as
# the planner gives), in rounds, the variants interleaved; workloads
# build-<dataset>-serial and build-<dataset>-parallel, metric build_s.
# Hash variants are left out (one column only).
BUILD_DATASETS=(int4 md5 accounts 3col)

build_large_ddl() { # dataset variant -> "table definition"
	case $1 in
	int4) echo "build_t $(ddl_for "$2" k)" ;;
	md5) echo "build_t $(ddl_for "$2" t)" ;;
	accounts) echo "pgbench_accounts $(ddl_for "$2" aid)" ;;
	3col) echo "build_t $(ddl_for "$2" 'a, b, k')" ;;
	esac
}

run_build_large() {
	local r v ds mode set ddl
	sql "DROP TABLE IF EXISTS build_t;
	     CREATE TABLE build_t (k int4 NOT NULL, a int4 NOT NULL, b int8 NOT NULL, t text NOT NULL);
	     INSERT INTO build_t
	     SELECT ((g * 7919) % 2147483647)::int4, (g * 131 % 1000)::int4, g * 2654435761 % 1000000007, md5(g::text)
	     FROM generate_series(1::int8, $ROWS) g" >/dev/null
	vacuum_visible "build_t"
	sql "CHECKPOINT" >/dev/null
	sql "SELECT pg_prewarm('build_t'), pg_prewarm('pgbench_accounts')" >/dev/null
	log "build-large: build_t of $ROWS rows loaded"
	for ((r = 0; r <= ROUNDS; r++)); do
		for ds in "${BUILD_DATASETS[@]}"; do
			for mode in serial parallel; do
				set="SET max_parallel_maintenance_workers = 0;"
				[[ $mode == parallel ]] && set="SET max_parallel_maintenance_workers = 2;"
				for v in $(round_order "$r" VARIANTS); do
					[[ $(variant_am "$v") == hash ]] && continue
					activate_build "$v"
					ddl=$(build_large_ddl "$ds" "$v")
					sql_timed "$set ${V_SET[$v]}" "CREATE INDEX build_idx ON $ddl;"
					record "$r" "build-$ds-$mode" "$v" large_build_s "$(ms_to_s "$TIMED_MS")"
					log "r$r build-$ds-$mode $v: $(ms_to_s "$TIMED_MS") s"
					sql "DROP INDEX build_idx" >/dev/null
					sql "CHECKPOINT" >/dev/null
				done
			done
		done
	done
	sql "DROP TABLE build_t" >/dev/null
}

# --- probe-text: index probes on text keys ------------------------------------
#
# Datasets of TEXT_KEYS keys each, made by INSERT ... SELECT from
# generate_series (deterministic: the key of row g is a function of g):
#
#   code  7-9 characters of base 32 (A-Z2-7; the low 35-45 bits of g times an
#         odd constant, so distinct for g < 2^35), length 7 + g % 3
#   md5   md5(g::text): 32 hex characters
#   url   https://www.example.com/catalog/category-NN/product/<g, 9 digits>.html
#         (66 bytes: a 41-byte prefix shared by all, 52 by a category)
#   email first.last<n>@domain: g in mixed radix, a first name of 64
#         (g % 64), a last name of 64 ((g / 64) % 64), n = g / 4096
#         (none when 0), so distinct (the names have neither digits nor
#         separators); "_" instead of "." for a quarter of the keys; the
#         domain example.com, .net, .org or mail.example.com (3:2:2:1) by
#         a hash of g; lower case; 20-42 bytes, ~27.5 on average at 200k
#         keys, ~29 at 10M
#
# The text variants name their collations: "C" (btree, the btlayout "C"
# and text_bin_ops ones), ICU "en-x-icu" (btree-icu, btlayout-icu-*) and
# libc "en_US.utf8" (btree-libc, btlayout-libc-*); each btlayout variant is
# compared with the btree of its own collation (bench/report.py).  A
# variant whose collation this server lacks (no ICU: 16's and 17's wheels;
# no en_US.utf8 locale: Debian's locales-all, which bench.sh installs for
# probe-text) is skipped with a log line (resolve_text).
#
# The variants are the lines of bench/variants-text.conf (keys "text:<name>").
# One dataset at a time (its indexes take the memory, then are dropped): load
# the table, vacuum it (all-visible: index-only scans without heap visits),
# build every variant's index on it (round -1: build time, size, share of
# pages in layout), draw PROBES random keys of it, prewarm, then a warm-up
# round and ROUNDS measured rounds of every variant interleaved.  As for the
# other workloads, all indexes exist side by side and indisvalid selects one.

TEXT_DATASETS_ALL=(code code8 md5 url email)
TEXT_CODE_ALPHABET=ABCDEFGHIJKLMNOPQRSTUVWXYZ234567
# email: 64 first names, 64 last names (lower-case letters only), 8 domains
TEXT_EMAIL_FIRST="james mary robert patricia john jennifer michael linda david elizabeth william barbara
	richard susan joseph jessica thomas sarah charles karen christopher lisa daniel nancy matthew betty
	anthony margaret mark sandra donald ashley steven kimberly paul emily andrew donna joshua michelle
	kenneth carol kevin amanda brian dorothy george melissa timothy deborah ronald stephanie edward
	rebecca jason sharon jeffrey laura ryan cynthia jacob kathleen eric anna"
TEXT_EMAIL_LAST="smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez
	lopez gonzalez wilson anderson thomas taylor moore jackson martin lee perez thompson white harris
	sanchez clark ramirez lewis robinson walker young allen king wright scott torres nguyen hill
	flores green adams nelson baker hall rivera campbell mitchell carter roberts gomez phillips evans
	turner diaz parker cruz edwards collins reyes stewart morris morales murphy"
TEXT_EMAIL_DOMAINS="example.com example.net example.org mail.example.com example.com example.net
	example.org example.com"

# sql_text_array WORDS... -> ARRAY['w1', 'w2', ...]
sql_text_array() {
	local w out=
	for w in "$@"; do out+="${out:+, }'$w'"; done
	echo "ARRAY[$out]"
}

# text_code_chars N -> N characters of base 32, the low 5N bits of
# g * 2654435761 (odd: distinct for g < 2^5N), the highest first
text_code_chars() {
	local i d=""
	for ((i = $1 - 1; i >= 0; i--)); do
		d+="${d:+ || }substr('$TEXT_CODE_ALPHABET', (((g * 2654435761) >> $((5 * i))) & 31)::int + 1, 1)"
	done
	echo "$d"
}

# text_key_expr DATASET -> the key of row number g (an int8 column named g)
text_key_expr() {
	case $1 in
	code) echo "right($(text_code_chars 9), 7 + (g % 3)::int)" ;;
	code8) echo "$(text_code_chars 8)" ;;
	md5) echo "md5(g::text)" ;;
	url) echo "'https://www.example.com/catalog/category-' || lpad((g % 97)::text, 2, '0') || '/product/' || lpad(g::text, 9, '0') || '.html'" ;;
	email)
		# shellcheck disable=SC2086 # the word lists, split on purpose
		echo "($(sql_text_array $TEXT_EMAIL_FIRST))[1 + (g % 64)::int]
		      || CASE WHEN (g / 7) % 4 = 0 THEN '_' ELSE '.' END
		      || ($(sql_text_array $TEXT_EMAIL_LAST))[1 + ((g / 64) % 64)::int]
		      || CASE WHEN g / 4096 = 0 THEN '' ELSE (g / 4096)::text END
		      || '@' || ($(sql_text_array $TEXT_EMAIL_DOMAINS))[1 + (((g * 2654435761) >> 16) % 8)::int]" ;;
	*) die "unknown text dataset '$1' (known: ${TEXT_DATASETS_ALL[*]})" ;;
	esac
}
text_check_expr() { echo "md5(($1)::text)"; } # keys of variant_works' scratch table

# text_collate VARIANT -> ' COLLATE "x"' when its index definition names a
# collation, else nothing (the database default): the probes' join collation.
text_collate() {
	local re='COLLATE[[:space:]]+("[^"]+"|[A-Za-z0-9_]+)'
	[[ ${V_DDL[$1]} =~ $re ]] && echo " COLLATE ${BASH_REMATCH[1]}"
	return 0
}

# text_collation_name VARIANT -> the collation its definition names, as
# pg_collation spells it ("C", "en-x-icu"; an unquoted name folded to lower
# case), or nothing (the database default)
text_collation_name() {
	local c
	c=$(text_collate "$1")
	c=${c# COLLATE }
	if [[ $c == \"*\" ]]; then
		c=${c#\"}
		c=${c%\"}
	else
		c=${c,,}
	fi
	echo "$c"
}

# text_collation_exists VARIANT: has this server the collation that the
# variant's definition names (for the database's encoding)?  initdb takes
# the ICU collations from the server's ICU and the libc ones from the
# machine's locales (locale -a), so either may be missing.
text_collation_exists() {
	local c
	c=$(text_collation_name "$1")
	[[ -z $c ]] && return 0
	[[ $(sql "SELECT count(*) FROM pg_collation
	          WHERE collname = '$c'
	            AND collencoding IN (-1, (SELECT encoding FROM pg_database WHERE datname = current_database()))") != 0 ]]
}

# collation_hint NAME -> why a server may lack that collation
collation_hint() {
	if [[ $1 == *-x-icu ]]; then
		echo "an ICU collation: this server is built without ICU"
	else
		echo "a libc locale: not on this machine (locale -a); Debian's locales-all has it, which scripts/bench.sh installs for probe-text unless --no-install"
	fi
}

tidx() { echo "text_$1_$(vid "$2")"; } # dataset, variant -> its index

# use_text_sql DATASET VARIANT -> SQL making the variant's index the only
# valid one on text_<dataset>
use_text_sql() { only_index_sql "text_$1" "$(tidx "$1" "$2")"; }

# text_bytes_per_key DATASET -> bytes of index per key (leaf tuple, line
# pointer, 90% fill, upper levels), measured at 200k keys on PostgreSQL 15,
# the same for btree and btlayout (code 5.46 MB, md5 11.28, url 18.24,
# email 9.61), whatever the collation; for shared_buffers.
text_bytes_per_key() {
	case $1 in code) echo 29 ;; code8) echo 32 ;; md5) echo 60 ;; url) echo 96 ;; email) echo 51 ;; *) echo 100 ;; esac
}

# text_need_mb NVARIANTS -> MB of shared_buffers probe-text needs: the
# largest dataset's indexes (one per variant), its probe keys and
# visibility map.
text_need_mb() {
	local ds need=0 n
	for ds in "${TEXT_DATASETS[@]}"; do
		n=$(awk -v k="$TEXT_KEYS" -v nv="$1" -v b="$(text_bytes_per_key "$ds")" -v p="$PROBES" \
			'BEGIN { printf "%d", (k * nv * b * 1.1 + p * (b + 40) + k / 1000) / 1048576 }')
		((n > need)) && need=$n
	done
	echo "$need"
}

# load_text DATASET: the table, its vacuum, every variant's index, the probe
# keys, prewarm.
load_text() {
	local ds=$1 v t0 size pct
	t0=$(now_s)
	log "load: probe-text $ds: $TEXT_KEYS keys"
	sql "DROP TABLE IF EXISTS text_$ds, text_keys_$ds, $(probe_key_tables "text_keys_$ds");
	     CREATE TABLE text_$ds (k text NOT NULL);
	     INSERT INTO text_$ds SELECT $(text_key_expr "$ds") FROM generate_series(1::int8, $TEXT_KEYS) g;" >/dev/null
	vacuum_visible "text_$ds"
	sql "SELECT setseed(0.4242);
	     CREATE TABLE text_keys_$ds AS
	       SELECT $(text_key_expr "$ds") AS k
	       FROM (SELECT (1 + floor(random() * $TEXT_KEYS))::int8 AS g FROM generate_series(1, $PROBES)) s;" >/dev/null
	log "load: probe-text $ds: tables in $(elapsed "$t0" "$(now_s)") s ($(sql "SELECT min(length(k)) || '-' || max(length(k)) || ' bytes, e.g. ' || min(k) FROM text_keys_$ds"))"
	split_probe_keys "text_keys_$ds"
	for v in "${TEXT_VARIANTS[@]}"; do
		activate_build "$v"
		sql_timed "${V_SET[$v]}" "CREATE INDEX $(tidx "$ds" "$v") ON text_$ds $(ddl_for "$v" k);"
		size=$(sql "SELECT pg_relation_size('$(tidx "$ds" "$v")')")
		record -1 "probe-text-$ds" "$(vname "$v")" text_build_s "$(ms_to_s "$TIMED_MS")"
		record -1 "probe-text-$ds" "$(vname "$v")" text_size_mb "$(bytes_to_mb "$size")"
		pct=
		if [[ $(variant_am "$v") == btlayout && $HAS_STATS == 1 ]]; then
			pct=$(sql "SELECT coalesce(round(laid_out_percent::numeric, 2), 0) || ' '
			                  || round(100.0 * uniform_width_pages / greatest(leaf_pages + internal_pages + root_pages, 1), 2)
			           FROM btlayout_stats('$(tidx "$ds" "$v")'::regclass)")
			record -1 "probe-text-$ds" "$(vname "$v")" laid_out_pct "${pct% *}"
			record -1 "probe-text-$ds" "$(vname "$v")" uniform_width_pct "${pct#* }"
			pct="; ${pct% *}% of pages in layout, ${pct#* }% of uniform width"
		fi
		log "load: probe-text $ds/$(vname "$v"): CREATE INDEX $(ms_to_s "$TIMED_MS") s, $(bytes_to_mb "$size") MB$pct"
	done
	sql "CHECKPOINT" >/dev/null
	prewarm_all "text\\_%"
	log "load: probe-text $ds in $(elapsed "$t0" "$(now_s)") s; $(sql "SELECT (sum(pg_relation_size(indexrelid)) / 1048576)::bigint FROM pg_index WHERE indrelid = 'text_$ds'::regclass") MB of indexes prewarmed"
}

# run_probe_text: every dataset in turn: load, warm-up round, ROUNDS rounds
# (the variants interleaved within each), drop.
run_probe_text() {
	local ds r v loads
	for ds in "${TEXT_DATASETS[@]}"; do
		load_text "$ds"
		loads=
		for ((r = 0; r <= ROUNDS; r++)); do
			log "=== probe-text $ds: round $r of $ROUNDS$( ((r == 0)) && echo ' (warm-up, discarded)')"
			probe_round "$r" "probe-text-$ds" TEXT_VARIANTS
			loads+="${loads:+, }$(loadavg)"
		done
		meta "load average, probe-text $ds" "after each round (0 = warm-up): $loads"
		sql "DROP TABLE text_$ds, $(probe_key_tables "text_keys_$ds"); CHECKPOINT" >/dev/null
	done
}
