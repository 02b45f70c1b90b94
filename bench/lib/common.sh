# shellcheck shell=bash
# bench/lib/common.sh: logging, the postgres-user wrappers, psql/pgbench
# helpers and the result recorder.  Sourced by scripts/bench.sh.
#
# Globals used here (set by scripts/bench.sh): PGBIN, SOCKDIR, PORT, DB,
# RAW (raw CSV), LOG (bench.log), TMPD.

# --- logging ---------------------------------------------------------------

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "${LOG:-/dev/null}" >&2; }
warn() { log "WARNING: $*"; }
die() { log "ERROR: $*"; exit 1; }

# Seconds since the epoch with milliseconds, for wall-clock measurements.
now_s() { date +%s.%N; }
# elapsed START END -> seconds with 3 decimals
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# --- running things as postgres -----------------------------------------------

# PostgreSQL refuses to run as root: every server-side tool runs as postgres.
as_pg() { runuser -u postgres -- "$@"; }

# psql against the benchmark cluster: no psqlrc, quiet, unaligned, stop on the
# first error.  Extra arguments are passed through; -d overrides the database.
q() {
	as_pg env PGOPTIONS="-c client_min_messages=warning" "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 \
		-h "$SOCKDIR" -p "$PORT" -d "${QDB:-$DB}" "$@"
}

# sql "STATEMENTS" -> their output.  Each call is a new backend (and so loads
# btlayout.so afresh: see activate_build in pgo.sh).
sql() { q -c "$1"; }

# sql_timed "SETUP" "STATEMENT": runs SETUP, then STATEMENT with \timing, in
# one session.  Sets TIMED_MS (the statement's client-side elapsed time) and
# TIMED_OUT (everything the session printed, "Time:" lines removed).
TIMED_MS=
TIMED_OUT=
sql_timed() {
	local out
	out=$(printf '%s\n\\timing on\n%s\n' "$1" "$2" | q -f -) ||
		die "statement failed: $2"
	timed_result "$out" "$2"
}

# timed_result OUTPUT STATEMENT: TIMED_MS and TIMED_OUT from what a session
# printed around STATEMENT run with \timing
timed_result() {
	TIMED_MS=$(awk '/^Time: /{ t = $2 } END { if (t == "") exit 1; print t }' <<<"$1") ||
		die "no timing for: $2"
	TIMED_OUT=$(grep -v '^Time: ' <<<"$1" || true)
}

# Sessions kept open: one psql, so one backend, for several timed
# statements, fed through a pair of FIFOs.  session_open NAME starts it;
# session_timed NAME "SETUP" "STATEMENT" runs like sql_timed, in that
# backend; session_close NAME ends it (session_close_all: every one).
declare -A SESSION_IN=() SESSION_OUT=() SESSION_PID=()
SESSION_END=__btlayout_bench_end__
session_open() {
	local f=$TMPD/session.$1 fd
	rm -f "$f.in" "$f.out"
	mkfifo "$f.in" "$f.out"
	# psql opens the input FIFO, then the output one; each open waits for
	# its other end, opened here in the same order.  It must not hold the
	# other sessions' FIFOs open (a session sees the end of its input only
	# when every writer has closed it), so it closes the copies it inherits.
	(
		for fd in "${SESSION_IN[@]}" "${SESSION_OUT[@]}"; do
			exec {fd}>&-
		done
		q -f - <"$f.in" >"$f.out" 2>&1
	) &
	SESSION_PID[$1]=$!
	exec {fd}>"$f.in"
	SESSION_IN[$1]=$fd
	exec {fd}<"$f.out"
	SESSION_OUT[$1]=$fd
}
session_timed() {
	local line out=
	printf '%s\n\\timing on\n%s\n\\timing off\n\\echo %s\n' "$2" "$3" "$SESSION_END" \
		>&"${SESSION_IN[$1]}" || die "session $1 is gone (statement: $3)"
	while IFS= read -r line <&"${SESSION_OUT[$1]}"; do
		[[ $line == "$SESSION_END" ]] && break
		out+=$line$'\n'
	done
	[[ $line == "$SESSION_END" ]] || die "session $1 ended (statement: $3): $out"
	timed_result "$out" "$3"
}
session_close() {
	local in=${SESSION_IN[$1]} out=${SESSION_OUT[$1]}
	exec {in}>&-
	wait "${SESSION_PID[$1]}" || die "session $1 failed (see the statements before)"
	exec {out}<&-
	rm -f "$TMPD/session.$1.in" "$TMPD/session.$1.out"
	unset "SESSION_IN[$1]" "SESSION_OUT[$1]" "SESSION_PID[$1]"
}
session_close_all() {
	local s
	for s in "${!SESSION_PID[@]}"; do
		session_close "$s"
	done
}

# run_pgbench PGOPTIONS ARGS... -> prints the tps pgbench reports.  Fails on a
# non-zero exit, on failed transactions and on a missing tps line.
run_pgbench() {
	local opts=$1 out tps failed
	shift
	if ! out=$(cd "$TMPD" && as_pg env PGOPTIONS="$opts" "$PGBIN/pgbench" \
		-h "$SOCKDIR" -p "$PORT" -n "$@" "$DB" 2>&1); then
		printf '%s\n' "$out" >>"$LOG"
		die "pgbench failed ($*): $(tail -n 3 <<<"$out" | tr '\n' ' ')"
	fi
	printf '%s\n' "$out" >>"$LOG.pgbench"
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
	[[ -z $failed || $failed == 0 ]] || die "pgbench: $failed failed transactions ($*)"
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | tail -n 1)
	[[ -n $tps ]] || die "pgbench printed no tps ($*)"
	printf '%s\n' "$tps"
}

# --- results -----------------------------------------------------------------

# record ROUND WORKLOAD VARIANT METRIC VALUE: one row of raw.csv.  Round 0 is
# the warm-up round: recorded for transparency, left out of every summary.
record() {
	printf '%s,%s,%s,%s,%s\n' "$1" "$2" "$3" "$4" "$5" >>"$RAW"
}

# meta KEY VALUE: one line of meta.tsv, which the report prints.
meta() {
	printf '%s\t%s\n' "$1" "$2" >>"$RESULTS/meta.tsv"
}

# loadavg -> the 1-minute load average
loadavg() { cut -d' ' -f1 /proc/loadavg; }

# fmt_num VALUE -> value with thousands separators and no more than 1 decimal
fmt_num() { LC_ALL=C awk -v x="$1" 'BEGIN { if (x >= 100) printf "%.0f", x; else printf "%.3g", x }'; }

# round_order ROUND ARRAY: the variants of the named array in the order a
# round runs them: as listed in even rounds, reversed in odd ones.  A run
# can depend on what ran just before it (caches, clock speed, a library
# just swapped in), so no variant always follows the same one, and with an
# even number of measured rounds each pair runs in both orders equally.
round_order() {
	local -n arr=$2
	local i
	if (($1 % 2 == 0)); then
		printf '%s\n' "${arr[@]}"
	else
		for ((i = ${#arr[@]} - 1; i >= 0; i--)); do
			printf '%s\n' "${arr[i]}"
		done
	fi
}

# round_rotation ROUND ARRAY: the named array rotated by ROUND places (round
# 0 as listed, round 1 from its second element on, ...): over as many rounds
# as it has elements, each element takes each place once.
round_rotation() {
	local -n arr=$2
	local n=${#arr[@]} i
	for ((i = 0; i < n; i++)); do
		printf '%s\n' "${arr[(i + $1) % n]}"
	done
}

