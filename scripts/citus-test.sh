#!/usr/bin/env bash
#
# scripts/citus-test.sh: check btlayout on a Citus cluster.
#
# Run it against the coordinator of a Citus cluster on which Citus and
# btlayout are already installed (the packages or `make install`) on every
# node, and `citus` is in shared_preload_libraries and created in the
# database.  It builds nothing and installs no software.  In the database it
#
#   1. runs CREATE EXTENSION IF NOT EXISTS btlayout and checks that every
#      worker has the same version,
#   2. creates a scratch schema (default btlayout_citus_test; dropped first if
#      it exists, dropped at the end unless --keep) with a distributed table
#      (citus.shard_count shards, 32 by default, in a co-location group of
#      its own, so that the move and the split touch no table of yours)
#      carrying a btlayout index of every layout (WITH (layout = ...)), a
#      text_bin_ops one, a multi-column one and a unique one, a co-located
#      twin with core btree indexes, a co-located table with a foreign key
#      and a reference table,
#   3. checks that every shard placement has the same indexes as the
#      distributed table (access method, options, operator classes),
#   4. runs router queries (distribution column equality) and multi-shard
#      queries (ranges, IN lists, ORDER BY ... LIMIT) on the table and its
#      btree twin and compares the results, and checks with EXPLAIN (all
#      tasks) that the shard queries scan the btlayout indexes,
#   5. INSERT ... ON CONFLICT served by the unique btlayout index, a foreign
#      key from the co-located table onto it (PostgreSQL 18 and later:
#      earlier servers refuse both for any non-btree index),
#   6. with two or more workers: moves a shard (citus_move_shard_placement)
#      and splits one (citus_split_shard_by_split_points), then checks the
#      indexes on the new placements and the query results again,
#   7. btlayout_check(index, heapallindexed => true) on every shard index,
#   8. the search_path caveat: if btlayout's schema is not on the workers'
#      search_path, a CREATE INDEX naming the operator class with its schema
#      must work; whether the unqualified name works is reported, not
#      counted (it depends on Citus, see docs/scale-out.md).
#
# Output: one "ok N - ..." or "not ok N - ..." line per check, "#" lines
# for information (versions, counts, timings), and a last line
# "# N ok, M not ok".  Exit status: 0 if every check passed, 1 if one
# failed, 2 if the script could not start (no connection, not a Citus
# coordinator, bad options).
#
# Usage: scripts/citus-test.sh [options]
#
#   -h, --host HOST      coordinator host (or PGHOST)
#   -p, --port PORT      coordinator port (or PGPORT)
#   -d, --dbname DB      database (or PGDATABASE)
#   -U, --username USER  user, a superuser (or PGUSER): CREATE EXTENSION
#                        btlayout, btlayout_check and shard moves need one
#   --schema NAME        scratch schema [btlayout_citus_test]
#   --ext-schema NAME    if btlayout is not installed yet, install it in
#                        this schema (created if needed) instead of the
#                        default; a schema other than public exercises the
#                        search_path caveat
#   --rows N             rows in the distributed table [100000]
#   --transfer-mode M    shard_transfer_mode of the move and the split:
#                        block_writes, force_logical or auto [block_writes];
#                        the last two need wal_level = logical on the nodes
#   --keep               keep the scratch schema at the end
#   --help               this text
#
# Other libpq settings (PGPASSWORD, PGSSLMODE, ...) come from the
# environment.  The run takes about a minute with the defaults on a small
# cluster.

set -u -o pipefail

SCHEMA=btlayout_citus_test
EXT_SCHEMA=
ROWS=100000
MODE=block_writes
KEEP=0

usage() {
	sed -n '/^# Usage:/,/^# cluster\./s/^# \{0,1\}//p' "$0"
}

die() {
	echo "Bail out! $*"
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
		-h|--host) [ $# -ge 2 ] || die "$1 needs a value"; export PGHOST="$2"; shift 2 ;;
		-p|--port) [ $# -ge 2 ] || die "$1 needs a value"; export PGPORT="$2"; shift 2 ;;
		-d|--dbname) [ $# -ge 2 ] || die "$1 needs a value"; export PGDATABASE="$2"; shift 2 ;;
		-U|--username) [ $# -ge 2 ] || die "$1 needs a value"; export PGUSER="$2"; shift 2 ;;
		--schema) [ $# -ge 2 ] || die "$1 needs a value"; SCHEMA="$2"; shift 2 ;;
		--ext-schema) [ $# -ge 2 ] || die "$1 needs a value"; EXT_SCHEMA="$2"; shift 2 ;;
		--rows) [ $# -ge 2 ] || die "$1 needs a value"; ROWS="$2"; shift 2 ;;
		--transfer-mode) [ $# -ge 2 ] || die "$1 needs a value"; MODE="$2"; shift 2 ;;
		--keep) KEEP=1; shift ;;
		--help) usage; exit 0 ;;
		*) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
	esac
done

[[ "$SCHEMA" =~ ^[a-z_][a-z0-9_]*$ ]] || die "--schema: a lower-case identifier, please"
[[ -z "$EXT_SCHEMA" || "$EXT_SCHEMA" =~ ^[a-z_][a-z0-9_]*$ ]] || die "--ext-schema: a lower-case identifier, please"
[[ "$ROWS" =~ ^[0-9]+$ && "$ROWS" -ge 10000 ]] || die "--rows: a number, at least 10000"
case "$MODE" in block_writes|force_logical|auto) ;; *) die "--transfer-mode: block_writes, force_logical or auto" ;; esac
command -v psql >/dev/null || die "psql not found in PATH"

S=$SCHEMA
# dollar quote for the commands sent through run_command_on_*
# shellcheck disable=SC2016
Q='$q$'
NOK=0
NFAIL=0
N=0

# sql TEXT: run TEXT (one or more statements, each in its own transaction,
# as psql runs a script) in a new session, print the rows unaligned (fields
# separated by |), fail on the first error.
sql() {
	printf 'SET client_min_messages = warning;\n%s\n' "$1" |
		psql -X -q -At -v ON_ERROR_STOP=1 -f -
}

ok() {
	N=$((N + 1)); NOK=$((NOK + 1))
	echo "ok $N - $1"
}

notok() {
	N=$((N + 1)); NFAIL=$((NFAIL + 1))
	echo "not ok $N - $1"
	if [ -n "${2:-}" ]; then
		printf '%s\n' "$2" | head -n 20 | sed 's/^/#   /'
	fi
}

note() {
	echo "# $*"
}

# is DESCRIPTION GOT EXPECTED
is() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		notok "$1" "got:      $2
expected: $3"
	fi
}

# like DESCRIPTION GOT PATTERN: ok if GOT matches the grep PATTERN
like() {
	if printf '%s' "$2" | grep -q "$3"; then
		ok "$1"
	else
		notok "$1" "$2"
	fi
}

# try DESCRIPTION SQL: ok if SQL runs without error
try() {
	local out
	if out=$(sql "$2" 2>&1); then
		ok "$1"
	else
		notok "$1" "$out"
	fi
}

now() {
	date +%s.%N
}

# since T: the seconds from T (a now) to now, as "12.3 s"
since() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'
}

T_PHASE=$(now)
T_START=$T_PHASE
phase_time() {
	note "time: $1 $(since "$T_PHASE")"
	T_PHASE=$(now)
}

# --- the cluster -----------------------------------------------------------

out=$(sql "SELECT 1" 2>&1) || die "cannot connect: $out"
CITUS=$(sql "SELECT extversion FROM pg_extension WHERE extname = 'citus'") || die "cannot query pg_extension"
[ -n "$CITUS" ] || die "the citus extension is not created in this database"
[ "$(sql "SELECT citus_is_coordinator()")" = t ] || die "this is not the Citus coordinator"
PGNUM=$(sql "SHOW server_version_num")
note "$(sql "SELECT version()")"
note "$(sql "SELECT citus_version()")"
WORKERS=$(sql "SELECT count(*) FROM citus_get_active_worker_nodes()")
note "active workers: $WORKERS; nodes with shards: $(sql "SELECT count(*) FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND shouldhaveshards")"
[ "$WORKERS" -ge 1 ] || note "no active worker: the checks run on the coordinator's own shards"

# --- 1. the extension ------------------------------------------------------

if [ -n "$EXT_SCHEMA" ] && [ -z "$(sql "SELECT 1 FROM pg_extension WHERE extname = 'btlayout'")" ]; then
	try "CREATE EXTENSION IF NOT EXISTS btlayout SCHEMA $EXT_SCHEMA" \
		"CREATE SCHEMA IF NOT EXISTS $EXT_SCHEMA; CREATE EXTENSION IF NOT EXISTS btlayout SCHEMA $EXT_SCHEMA"
else
	[ -n "$EXT_SCHEMA" ] && note "btlayout is already installed: --ext-schema ignored"
	try "CREATE EXTENSION IF NOT EXISTS btlayout" "CREATE EXTENSION IF NOT EXISTS btlayout"
fi
BTL=$(sql "SELECT extversion FROM pg_extension WHERE extname = 'btlayout'")
[ -n "$BTL" ] || die "btlayout is not installed on the coordinator"
X=$(sql "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'btlayout'")
XNAME=$(sql "SELECT nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname = 'btlayout'")
note "btlayout $BTL in schema $X"
got=$(sql "SELECT count(*) FILTER (WHERE success AND result = '$BTL'), count(*) FROM run_command_on_workers(${Q}SELECT extversion FROM pg_extension WHERE extname = 'btlayout'${Q})")
is "btlayout $BTL on all $WORKERS workers (run_command_on_workers)" "$got" "$WORKERS|$WORKERS"
if [ "$PGNUM" -ge 180000 ]; then PG18=1; else PG18=0; fi

# --- 2. the tables ---------------------------------------------------------

sql "DROP SCHEMA IF EXISTS $S CASCADE" >/dev/null 2>&1
try "scratch schema $S" "CREATE SCHEMA $S"

COLS="id bigint NOT NULL, a int, b int, c int, d int, e int, g int, code text COLLATE \"C\""
FILL="SELECT i, (i * 7919) % $ROWS, i % 1000, (i * 31) % 5003, -i, i % 97, i % 10, md5(i::text) FROM generate_series(1::bigint, $ROWS) i"
try "distributed table $S.items and its btree twin $S.items_bt, co-located" "
CREATE TABLE $S.items ($COLS);
CREATE TABLE $S.items_bt ($COLS);
SELECT create_distributed_table('$S.items', 'id', colocate_with => 'none');
SELECT create_distributed_table('$S.items_bt', 'id', colocate_with => '$S.items');
CREATE UNIQUE INDEX items_id ON $S.items USING btlayout (id);
CREATE UNIQUE INDEX items_bt_id ON $S.items_bt USING btree (id);"
t=$(now)
try "$ROWS rows into each (inserts into the unique btlayout index)" "
INSERT INTO $S.items $FILL;
INSERT INTO $S.items_bt $FILL;"
note "time: load $(since "$t")"
t=$(now)
try "btlayout indexes of every layout, text_bin_ops and multi-column, built on the shards" "
CREATE INDEX items_a ON $S.items USING btlayout (a) WITH (layout = eytzinger);
CREATE INDEX items_b ON $S.items USING btlayout (b) WITH (layout = veb);
CREATE INDEX items_c ON $S.items USING btlayout (c) WITH (layout = btorder);
CREATE INDEX items_d ON $S.items USING btlayout (d) WITH (layout = blocked);
CREATE INDEX items_e ON $S.items USING btlayout (e) WITH (layout = none);
CREATE INDEX items_code ON $S.items USING btlayout (code $X.text_bin_ops) WITH (layout = eytzinger);
CREATE INDEX items_g_d ON $S.items USING btlayout (g, d DESC) INCLUDE (e) WITH (layout = veb, fillfactor = 80);"
note "time: build 7 btlayout indexes $(since "$t")"
try "the btree twin's indexes" "
CREATE INDEX items_bt_a ON $S.items_bt (a);
CREATE INDEX items_bt_b ON $S.items_bt (b);
CREATE INDEX items_bt_c ON $S.items_bt (c);
CREATE INDEX items_bt_d ON $S.items_bt (d);
CREATE INDEX items_bt_e ON $S.items_bt (e);
CREATE INDEX items_bt_code ON $S.items_bt (code);
CREATE INDEX items_bt_g_d ON $S.items_bt (g, d DESC) INCLUDE (e);
ANALYZE $S.items;
ANALYZE $S.items_bt;"

try "reference table $S.ref with a unique btlayout index and a text_bin_ops one" "
CREATE TABLE $S.ref (k int NOT NULL, label text COLLATE \"C\");
SELECT create_reference_table('$S.ref');
CREATE UNIQUE INDEX ref_k ON $S.ref USING btlayout (k) WITH (layout = veb);
CREATE INDEX ref_label ON $S.ref USING btlayout (label $X.text_bin_ops);
INSERT INTO $S.ref SELECT i, 'label ' || i FROM generate_series(0, 999) i;
ANALYZE $S.ref;"

if [ "$PG18" = 1 ]; then
	try "co-located $S.orders with a foreign key onto the unique btlayout index" "
CREATE TABLE $S.orders (oid bigint, item_id bigint NOT NULL REFERENCES $S.items (id) ON DELETE CASCADE, qty int);
SELECT create_distributed_table('$S.orders', 'item_id', colocate_with => '$S.items');
CREATE INDEX orders_item ON $S.orders USING btlayout (item_id);
INSERT INTO $S.orders SELECT i, (i % 1000) + 1, 1 FROM generate_series(1, 5000) i;"
else
	note "skip: foreign keys onto a btlayout index need PostgreSQL 18 (README, Limitations); $S.orders without one"
	try "co-located $S.orders" "
CREATE TABLE $S.orders (oid bigint, item_id bigint NOT NULL, qty int);
SELECT create_distributed_table('$S.orders', 'item_id', colocate_with => '$S.items');
CREATE INDEX orders_item ON $S.orders USING btlayout (item_id);
INSERT INTO $S.orders SELECT i, (i % 1000) + 1, 1 FROM generate_series(1, 5000) i;"
fi
# a shard transfer by logical replication (force_logical, auto) needs a
# replica identity for UPDATE and DELETE during the copy, and auto refuses
# a table without one: the unique btlayout index is the table's
try "REPLICA IDENTITY USING INDEX items_id, the unique btlayout index (the twin's btree one, FULL for orders)" "
ALTER TABLE $S.items REPLICA IDENTITY USING INDEX items_id;
ALTER TABLE $S.items_bt REPLICA IDENTITY USING INDEX items_bt_id;
ALTER TABLE $S.orders REPLICA IDENTITY FULL;"
got=$(sql "SELECT count(*) FILTER (WHERE success AND result = 'i items_id'), count(*) FROM run_command_on_placements('$S.items', ${Q}SELECT c.relreplident::text || ' ' || (SELECT regexp_replace(ci.relname, '_[0-9]+\$', '') FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid WHERE i.indrelid = c.oid AND i.indisreplident) FROM pg_class c WHERE c.oid = '%s'::regclass${Q})" 2>&1)
placements=$(sql "SELECT count(*) FROM citus_shards WHERE table_name = '$S.items'::regclass")
is "on every shard of $S.items the replica identity is the unique btlayout index" "$got" "$placements|$placements"
phase_time "tables and indexes"

# --- 3. the shard indexes --------------------------------------------------

# An index's signature, the same on every placement: its name without the
# shard suffix, access method, uniqueness, options, columns and operator
# classes.  No % in it: run_command_on_placements() passes it to format().
SIG="SELECT string_agg(regexp_replace(ci.relname, '_[0-9]+\$', '') || ' ' || am.amname || ' ' || i.indisunique::text || ' (' || coalesce(array_to_string(ci.reloptions, ','), '') || ') ' || (SELECT string_agg(coalesce(a.attname, 'expr') || ' ' || oc.opcname, ',' ORDER BY k.n) FROM unnest(i.indkey::int2[], i.indclass::oid[]) WITH ORDINALITY AS k(att, cls, n) LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.att LEFT JOIN pg_opclass oc ON oc.oid = k.cls), '; ' ORDER BY ci.relname) FROM pg_index i JOIN pg_class ci ON ci.oid = i.indexrelid JOIN pg_am am ON am.oid = ci.relam WHERE i.indrelid = "

# check_indexes TABLE: every placement of TABLE has TABLE's indexes
check_indexes() {
	local tab=$1 want placements got nidx nall
	want=$(sql "$SIG '$tab'::regclass")
	nidx=$(sql "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam WHERE am.amname = 'btlayout' AND i.indrelid = '$tab'::regclass")
	nall=$(sql "SELECT count(*) FROM pg_index WHERE indrelid = '$tab'::regclass")
	placements=$(sql "SELECT count(*) FROM citus_shards WHERE table_name = '$tab'::regclass")
	got=$(sql "SELECT count(*) FILTER (WHERE success AND result = \$w\$$want\$w\$), count(*) FROM run_command_on_placements('$tab', ${Q}$SIG '%s'::regclass${Q})" 2>&1)
	is "$tab: $placements placements, each with the table's $nall indexes ($nidx btlayout), same options and classes" "$got" "$placements|$placements"
	[ "$nidx" -eq 0 ] || note "$tab: $((placements * nidx)) btlayout shard indexes"
}

check_indexes "$S.items"
check_indexes "$S.items_bt"
check_indexes "$S.ref"
check_indexes "$S.orders"
SHARDS=$(sql "SELECT count(*) FROM citus_shards WHERE table_name = '$S.items'::regclass")
note "$S.items: $SHARDS shards on $(sql "SELECT count(DISTINCT (nodename, nodeport)) FROM citus_shards WHERE table_name = '$S.items'::regclass") nodes"

# the layouts of the built indexes, as btlayout_stats sees them on the shards
LAY="SELECT string_agg(regexp_replace(c.relname, '_[0-9]+\$', '') || '=' || ($X.btlayout_stats(c.oid::regclass)).layout, ',' ORDER BY c.relname) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam WHERE am.amname = 'btlayout' AND i.indrelid = "
check_layouts() {
	local want got
	want=$(sql "SELECT string_agg(c.relname || '=' || coalesce(substring(array_to_string(c.reloptions, ',') from 'layout=([a-z]+)'), 'blocked'), ',' ORDER BY c.relname) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = '$S.items'::regclass")
	got=$(sql "SELECT count(*) FILTER (WHERE success AND result = '$want'), count(*) FROM run_command_on_placements('$S.items', ${Q}$LAY '%s'::regclass${Q})" 2>&1)
	is "btlayout_stats on every shard index of $S.items reports the layout of its option ($want)" "$got" "$SHARDS|$SHARDS"
}
check_layouts
phase_time "shard indexes"

# --- 4. queries ------------------------------------------------------------

# Each query: its kind, the index (a regular expression) every shard task
# must scan, the query naming the table as @T@; it runs on items and on
# items_bt.
QUERIES=(
	"router#items_id#SELECT * FROM @T@ WHERE id = 4242"
	"router#items_id#SELECT * FROM @T@ WHERE id = 1"
	"router#items_id#SELECT * FROM @T@ WHERE id = $ROWS"
	"router#items_id#SELECT count(*) FROM @T@ WHERE id = $((ROWS + 5))"
	"router#items_id#SELECT id, code FROM @T@ WHERE id = 77 AND code >= '0'"
	"range#items_a#SELECT * FROM @T@ WHERE a BETWEEN 1000 AND 1100 ORDER BY id"
	"in#items_b#SELECT * FROM @T@ WHERE b IN (3, 77, 512, 999) ORDER BY id"
	"limit#items_c#SELECT * FROM @T@ ORDER BY c DESC, id LIMIT 25"
	"limit#items_d#SELECT * FROM @T@ ORDER BY d LIMIT 10"
	"range#items_d#SELECT count(*), sum(e) FROM @T@ WHERE d > -3000"
	"in#items_e#SELECT count(*), min(id), max(id) FROM @T@ WHERE e IN (1, 42, 96)"
	"range#items_code#SELECT id, code FROM @T@ WHERE code >= 'ab' AND code < 'ab4' ORDER BY code"
	"eq#items_code#SELECT id FROM @T@ WHERE code = md5('777')"
	"limit#items_code#SELECT code, id FROM @T@ ORDER BY code LIMIT 15"
	"range#items_(g_d|d)#SELECT id, d, e FROM @T@ WHERE g = 3 AND d BETWEEN -5000 AND -4000 ORDER BY id"
	"in#items_(g_d|d)#SELECT g, count(*), sum(e) FROM @T@ WHERE g IN (2, 5) AND d > -2000 GROUP BY g ORDER BY g"
)

# compare_queries LABEL: every query gives the same rows on both tables
compare_queries() {
	local q kind sq got want same=0 rows=0 bad=""
	for q in "${QUERIES[@]}"; do
		kind=${q%%#*}
		sq=${q#*#}; sq=${sq#*#}
		got=$(sql "${sq//@T@/$S.items}" 2>&1)
		want=$(sql "${sq//@T@/$S.items_bt}" 2>&1)
		if [ "$got" = "$want" ] && [ -n "$got" ]; then
			same=$((same + 1))
			rows=$((rows + $(printf '%s\n' "$got" | wc -l)))
		else
			bad="$bad
$kind: ${sq//@T@/items}
  btlayout: $(printf '%s' "$got" | head -c 300)
  btree:    $(printf '%s' "$want" | head -c 300)"
		fi
	done
	if [ -z "$bad" ]; then
		ok "$1: ${#QUERIES[@]} router and multi-shard queries give btree's results ($rows result lines)"
	else
		notok "$1: $same of ${#QUERIES[@]} queries give btree's results" "$bad"
	fi
}

# check_explain: EXPLAIN of each query with every task shown; each task of
# the btlayout table must scan the index the query names, no task may
# scan the shard sequentially
check_explain() {
	local q kind idx sq plan tasks uses seq good=0 bad=""
	for q in "${QUERIES[@]}"; do
		kind=${q%%#*}
		idx=${q#*#}; idx=${idx%%#*}
		sq=${q#*#}; sq=${sq#*#}
		plan=$(sql "SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) ${sq//@T@/$S.items}" 2>&1)
		tasks=$(printf '%s\n' "$plan" | sed -n 's/^ *Task Count: \([0-9]*\).*/\1/p' | head -n 1)
		uses=$(printf '%s\n' "$plan" | grep -Ec "(Index Scan|Index Only Scan|Index Scan Backward|Bitmap Index Scan)( Backward)? (using|on) ${idx}_[0-9]+( |\$)")
		seq=$(printf '%s\n' "$plan" | grep -Ec "Seq Scan on items_[0-9]+")
		if [ -n "$tasks" ] && [ "$tasks" -ge 1 ] && [ "$uses" -ge "$tasks" ] && [ "$seq" -eq 0 ]; then
			good=$((good + 1))
		else
			bad="$bad
$kind ($idx, tasks ${tasks:-?}, index scans $uses, seq scans $seq): ${sq//@T@/items}"
		fi
	done
	if [ -z "$bad" ]; then
		ok "$1: EXPLAIN shows every shard task of the ${#QUERIES[@]} queries scanning the btlayout index named"
	else
		notok "$1: $good of ${#QUERIES[@]} plans scan the btlayout index in every task" "$bad"
	fi
}

compare_queries "queries"
check_explain "plans"
want=$(sql "SELECT i, 'label ' || i FROM generate_series(10, 20) i")
got=$(sql "SELECT k, label FROM $S.ref WHERE k BETWEEN 10 AND 20 ORDER BY k")
is "reference table: range on its btlayout index" "$got" "$want"
plan=$(sql "EXPLAIN (COSTS OFF) SELECT label FROM $S.ref WHERE k = 7")
if printf '%s\n' "$plan" | grep -Eq "Index (Only )?Scan using ref_k_[0-9]+"; then
	ok "reference table: the query scans ref_k"
else
	notok "reference table: the query scans ref_k" "$plan"
fi
got=$(sql "SELECT count(*), sum(r.k) FROM $S.items i JOIN $S.ref r ON r.label = 'label ' || i.e WHERE i.a < 5000")
want=$(sql "SELECT count(*), sum(r.k) FROM $S.items_bt i JOIN $S.ref r ON r.label = 'label ' || i.e WHERE i.a < 5000")
is "join of the distributed table and the reference table ($got)" "$got" "$want"
phase_time "queries"

# --- 5. unique index: ON CONFLICT, duplicates, foreign key -------------------

if [ "$PG18" = 1 ]; then
	declare -A RES
	for T in items items_bt; do
		R[0]=$(sql "INSERT INTO $S.$T (id, a, e) VALUES (7, -1, -7) ON CONFLICT (id) DO UPDATE SET e = excluded.e RETURNING id, e" 2>&1)
		R[1]=$(sql "INSERT INTO $S.$T (id, a, e) VALUES ($((ROWS + 1)), -1, 0) ON CONFLICT (id) DO NOTHING RETURNING id" 2>&1)
		R[2]=$(sql "INSERT INTO $S.$T (id, a, e) VALUES ($((ROWS + 1)), -1, 0) ON CONFLICT (id) DO NOTHING RETURNING id" 2>&1)
		R[3]=$(sql "INSERT INTO $S.$T (id, a, e, g, d) SELECT i, -1, 1, 3, -i FROM generate_series($((ROWS - 9)), $((ROWS + 10))) i ON CONFLICT (id) DO NOTHING RETURNING id" 2>&1 | wc -l)
		R[4]=$(sql "INSERT INTO $S.$T AS t (id, a, e) SELECT i, -2, 2 FROM generate_series(1, 50) i ON CONFLICT (id) DO UPDATE SET e = t.e + 1000; SELECT count(*) FROM $S.$T WHERE e >= 900" 2>&1)
		RES[$T]=$(printf '%s\n' "${R[@]}" | tr '\n' ' ')
	done
	is "INSERT ... ON CONFLICT on the unique btlayout index (router, DO UPDATE, DO NOTHING, multi-row)" "${RES[items]}" "7|-7 $((ROWS + 1))  9 50 "
	is "the same statements on the btree twin give the same results" "${RES[items]}" "${RES[items_bt]}"
	out=$(sql "INSERT INTO $S.items (id) VALUES (42)" 2>&1)
	like "a duplicate key is refused by the unique btlayout index of the shard" "$out" "duplicate key value violates unique constraint \"items_id_[0-9]*\""
	got=$(sql "SELECT count(*) FILTER (WHERE success AND result = 'btlayout'), count(*) FROM run_command_on_placements('$S.orders', ${Q}SELECT string_agg(DISTINCT am.amname, ',') FROM pg_constraint co JOIN pg_class ci ON ci.oid = co.conindid JOIN pg_am am ON am.oid = ci.relam WHERE co.contype = 'f' AND co.conrelid = '%s'::regclass${Q})" 2>&1)
	is "on every shard the foreign key of $S.orders uses the unique btlayout index of $S.items" "$got" "$SHARDS|$SHARDS"
	out=$(sql "INSERT INTO $S.orders VALUES (0, $((ROWS + 1000)), 1)" 2>&1)
	like "a row without a referenced item is refused by the foreign key" "$out" "violates foreign key constraint"
	got=$(sql "DELETE FROM $S.items WHERE id = 10; DELETE FROM $S.items_bt WHERE id = 10; SELECT count(*) FROM $S.orders WHERE item_id = 10" 2>&1)
	is "ON DELETE CASCADE through the foreign key" "$got" "0"
	got=$(sql "INSERT INTO $S.ref VALUES (5, 'five') ON CONFLICT (k) DO UPDATE SET label = excluded.label; SELECT label FROM $S.ref WHERE k = 5" 2>&1)
	is "reference table: ON CONFLICT on its unique btlayout index" "$got" "five"
	sql "UPDATE $S.ref SET label = 'label 5' WHERE k = 5" >/dev/null
else
	note "skip: INSERT ... ON CONFLICT and foreign keys with a unique btlayout index need PostgreSQL 18 (README, Limitations)"
	out=$(sql "INSERT INTO $S.items (id) VALUES (42)" 2>&1)
	like "a duplicate key is refused by the unique btlayout index of the shard" "$out" "duplicate key value violates unique constraint"
fi
compare_queries "after the writes"
phase_time "unique index"

# --- 6. shard move and split ----------------------------------------------

NODES=$(sql "SELECT count(*) FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND shouldhaveshards")
if [ "$NODES" -ge 2 ]; then
	# the lowest shard of items, moved to another node with shards
	read -r SHARD SRC_HOST SRC_PORT <<<"$(sql "SELECT shardid, nodename, nodeport FROM citus_shards WHERE table_name = '$S.items'::regclass ORDER BY shardid LIMIT 1" | tr '|' ' ')"
	read -r DST_HOST DST_PORT <<<"$(sql "SELECT nodename, nodeport FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND shouldhaveshards AND (nodename, nodeport) <> ('$SRC_HOST', $SRC_PORT) ORDER BY nodeid LIMIT 1" | tr '|' ' ')"
	if [ "$MODE" != block_writes ]; then
		# a server with output_plugin_libraries (18.6 here) lets only the
		# plugins it lists decode; a logical split decodes with "citus"
		lacking=$(sql "SELECT count(*) FROM run_command_on_workers(${Q}SELECT coalesce(current_setting('output_plugin_libraries', true), 'citus') ~ '(^|[ ,\"])citus($|[ ,\"])'${Q}) WHERE result = 'f'")
		[ "$lacking" = 0 ] || note "$lacking worker(s) have output_plugin_libraries without citus: a $MODE split will fail there (ALTER SYSTEM SET output_plugin_libraries = pgoutput, test_decoding, citus; reload)"
	fi
	t=$(now)
	try "citus_move_shard_placement of shard $SHARD (and its co-located shards) from $SRC_HOST:$SRC_PORT to $DST_HOST:$DST_PORT, $MODE" \
		"SELECT citus_move_shard_placement($SHARD, '$SRC_HOST', $SRC_PORT, '$DST_HOST', $DST_PORT, shard_transfer_mode => '$MODE')"
	note "time: move $(since "$t")"
	got=$(sql "SELECT nodename || ':' || nodeport FROM citus_shards WHERE shardid = $SHARD")
	is "shard $SHARD is now on $DST_HOST:$DST_PORT" "$got" "$DST_HOST:$DST_PORT"

	# split the next shard at the middle of its hash range, the halves on two nodes
	read -r SPLIT SMIN SMAX <<<"$(sql "SELECT shardid, shardminvalue, shardmaxvalue FROM pg_dist_shard WHERE logicalrelid = '$S.items'::regclass AND shardid <> $SHARD ORDER BY shardid LIMIT 1" | tr '|' ' ')"
	MID=$(( SMIN + (SMAX - SMIN) / 2 ))
	NODE_IDS=$(sql "SELECT string_agg(nodeid::text, ',' ORDER BY nodeid) FROM (SELECT nodeid FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND shouldhaveshards ORDER BY nodeid LIMIT 2) n")
	t=$(now)
	nfail=$NFAIL
	try "citus_split_shard_by_split_points of shard $SPLIT at $MID onto nodes $NODE_IDS, $MODE" \
		"SELECT citus_split_shard_by_split_points($SPLIT, ARRAY['$MID'], ARRAY[$NODE_IDS], shard_transfer_mode => '$MODE')"
	split_failed=$((NFAIL - nfail))
	note "time: split $(since "$t")"
	NEW=$(sql "SELECT count(*) FROM citus_shards WHERE table_name = '$S.items'::regclass")
	is "$S.items has one shard more after the split" "$NEW" "$((SHARDS + 1))"
	if [ "$split_failed" = 0 ]; then
		AFTER="after the move and the split"
		note "new shards: $(sql "SELECT string_agg(shardid || '@' || nodename || ':' || nodeport, ' ' ORDER BY shardid) FROM citus_shards WHERE table_name = '$S.items'::regclass AND shardid > (SELECT max(shardid) FROM pg_dist_shard WHERE logicalrelid = '$S.items'::regclass) - 2")"
	else
		# its error is printed above, under its "not ok" line
		AFTER="after the move (the split failed)"
		note "the split of shard $SPLIT failed: $S.items has $NEW shards (it had $SHARDS); the checks below see the tables after the move only"
	fi
	SHARDS=$NEW
	check_indexes "$S.items"
	check_indexes "$S.items_bt"
	check_indexes "$S.orders"
	check_layouts
	# the new shards have no statistics yet: without them a planner may
	# prefer a sequential scan of a small shard
	try "ANALYZE after the split" "ANALYZE $S.items; ANALYZE $S.items_bt"
	compare_queries "$AFTER"
	check_explain "plans $AFTER"
else
	note "skip: shard move and split need two nodes with shards ($NODES here)"
fi
phase_time "move and split"

# --- 7. btlayout_check on every shard index --------------------------------

CHK="SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam CROSS JOIN LATERAL $X.btlayout_check(c.oid::regclass, true) WHERE am.amname = 'btlayout' AND i.indrelid = "
total=0
for T in items orders ref; do
	res=$(sql "SELECT count(*) FILTER (WHERE success), count(*), coalesce(sum(result::int) FILTER (WHERE success), 0), string_agg(result, '; ') FILTER (WHERE NOT success) FROM run_command_on_placements('$S.$T', ${Q}$CHK '%s'::regclass${Q})" 2>&1)
	IFS='|' read -r good all n errs <<<"$res"
	if [ -n "$good" ] && [ "$good" = "$all" ] && [ "$all" -ge 1 ]; then
		total=$((total + n))
		ok "btlayout_check(heapallindexed) clean on the $n btlayout indexes of $all placements of $S.$T"
	else
		notok "btlayout_check(heapallindexed) on the placements of $S.$T" "${errs:-$res}"
	fi
done
note "btlayout_check(heapallindexed) ran on $total shard indexes"
phase_time "btlayout_check"

# --- 8. the search_path caveat ---------------------------------------------

XLIT=${XNAME//\'/\'\'}
ONPATH=$(sql "SELECT count(*) FILTER (WHERE result = 'f') FROM run_command_on_workers(${Q}SELECT '$XLIT' = ANY (current_schemas(false))${Q})")
try "distributed table $S.cav for the operator class by schema" "
CREATE TABLE $S.cav (id bigint, code text COLLATE \"C\");
SELECT create_distributed_table('$S.cav', 'id', colocate_with => '$S.items');
INSERT INTO $S.cav SELECT i, md5(i::text) FROM generate_series(1, 20000) i;"
# many connections per worker at once: what a big table gets by itself
FAST="SET citus.executor_slow_start_interval = 0; SET citus.force_max_query_parallelization = on"
try "CREATE INDEX ... ($X.text_bin_ops), schema-qualified, with many connections per worker" \
	"SET search_path = $S, $X, public; $FAST; CREATE INDEX cav_qualified ON cav USING btlayout (code $X.text_bin_ops)"
if [ "$XNAME" = public ] || [ "$ONPATH" = 0 ]; then
	note "btlayout's schema $X is on the workers' search_path: the unqualified class name resolves there (the caveat needs btlayout in a schema off it; rerun in a database with --ext-schema NAME)"
else
	note "btlayout's schema $X is off the search_path of $ONPATH worker(s); the coordinator's search_path below includes it"
	for v in "default executor settings|RESET citus.executor_slow_start_interval" \
		"many connections per worker|$FAST" \
		"citus.multi_shard_modify_mode = sequential|$FAST; SET citus.multi_shard_modify_mode = sequential"; do
		label=${v%%|*}
		if out=$(sql "SET search_path = $S, $X, public; ${v#*|}; CREATE INDEX cav_unqualified ON cav USING btlayout (code text_bin_ops); DROP INDEX cav_unqualified" 2>&1); then
			note "informational: unqualified text_bin_ops, $label: worked"
		else
			note "informational: unqualified text_bin_ops, $label: failed: $(printf '%s' "$out" | tr '\n' ' ')"
		fi
	done
fi
phase_time "search_path caveat"

# --- the end -----------------------------------------------------------------

if [ "$KEEP" = 1 ]; then
	note "kept schema $S (--keep)"
else
	sql "CALL citus_cleanup_orphaned_resources()" >/dev/null 2>&1
	try "drop the scratch schema $S" "DROP SCHEMA $S CASCADE"
fi
note "btlayout $BTL, Citus $CITUS, $(sql "SHOW server_version"); $(since "$T_START") in all"
echo "1..$N"
note "$NOK ok, $NFAIL not ok"
[ "$NFAIL" -eq 0 ]
