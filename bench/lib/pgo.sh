# shellcheck shell=bash
# bench/lib/pgo.sh: which btlayout.so the benchmark runs, the profile-guided
# build (--pgo) and the build of another commit (--baseline).  Sourced by
# scripts/bench.sh.
#
# A backend loads btlayout.so when it first touches a btlayout index (the
# postmaster never loads it: no shared_preload_libraries), from the path in
# pg_proc.probin of the extension's C functions.  The benchmark points probin
# (in its own throwaway cluster only) at $TMPD/lib/btlayout.so, a copy of the
# installed module taken at startup (snapshot_module): a `make install` run
# by someone else during a benchmark cannot change the code half-way.
#
# With --pgo it builds, from a scratch copy of the repo:
#
#   normal.so  the same source and flags, no profile (the "normal" variants)
#   instr.so   -fprofile-generate=$TMPD/pgo-prof (training only)
#   pgo.so     -fprofile-use -fprofile-correction from the training profile
#
# activate_build puts the right one at $TMPD/lib/btlayout.so (copy, then an
# atomic rename) before each variant's run.  Every run is a new backend, so it
# loads the file that is there when it starts; no server restart, the buffers
# stay warm, and the normal and PGO variants interleave within each round like
# any other variants.  The system-wide installed btlayout.so is never touched,
# and only one btlayout.so is ever loaded in a backend (two builds in one
# process would interpose each other's global symbols).
#
# The training workload (bench/pgbench/pgo_train.sql) is not a measured one:
# a smaller table with other keys, a mix of probes, range scans, backward
# scans and inserts, plus CREATE INDEX for every btlayout variant.  The gcda
# files are written when the training backends exit normally.

CURRENT_BUILD=
MODULE_SNAPSHOT=0
MODULE_INFO="not loaded"
PGO_INFO=

# activate_build VARIANT: make the variant's build the one new backends load.
activate_build() {
	[[ $MODULE_SNAPSHOT == 1 ]] || return 0
	local want=${V_BUILD[$1]:-normal}
	[[ $want == "$CURRENT_BUILD" ]] && return 0
	cp "$TMPD/lib/$want.so" "$TMPD/lib/.next.so"
	mv -f "$TMPD/lib/.next.so" "$TMPD/lib/btlayout.so"
	CURRENT_BUILD=$want
}

# module_build SRC NAME COPT: build the source tree SRC with COPT, save as
# NAME.so (the --pgo builds and the --baseline one)
module_build() {
	local src=$1 name=$2 copt=$3
	log "building $name.so${copt:+ (COPT=$copt)}"
	make -C "$src" PG_CONFIG="$PG_CONFIG" with_llvm=no clean >>"$LOG" 2>&1
	make -C "$src" PG_CONFIG="$PG_CONFIG" with_llvm=no COPT="$copt" >>"$LOG" 2>&1 ||
		die "build of $name.so failed (see $LOG)"
	install -m 755 "$src/btlayout.so" "$TMPD/lib/$name.so"
}

# pgo_redirect DB: point the extension's C functions in DB at $TMPD/lib.
pgo_redirect() {
	local n
	n=$(QDB=$1 sql "WITH u AS (UPDATE pg_proc SET probin = '$TMPD/lib/btlayout'
	                          WHERE probin = '\$libdir/btlayout' RETURNING 1)
	                SELECT count(*) FROM u")
	((n > 0)) || die "pgo: no btlayout C function found in database $1"
}

# snapshot_module: copy the installed btlayout.so to $TMPD/lib/normal.so and
# point the extension's functions in $DB at $TMPD/lib/btlayout.so.
snapshot_module() {
	local libdir
	libdir=$("$PG_CONFIG" --pkglibdir)
	mkdir -p "$TMPD/lib"
	chmod 755 "$TMPD/lib"
	install -m 755 "$libdir/btlayout.so" "$TMPD/lib/normal.so"
	pgo_redirect "$DB"
	MODULE_SNAPSHOT=1
	CURRENT_BUILD=
	activate_build btlayout
	MODULE_INFO="md5 $(md5sum <"$TMPD/lib/normal.so" | cut -c1-12) (a copy of $libdir/btlayout.so taken at start)"
}

# pgo_prepare: the three builds and the training.  Needs the cluster running
# with the btlayout extension created in $DB.
pgo_prepare() {
	local t0 v id n
	t0=$(now_s)
	PGO_SRC=$TMPD/pgo-src
	PGO_PROF=$TMPD/pgo-prof
	mkdir -p "$PGO_SRC" "$PGO_PROF" "$TMPD/lib"
	chown postgres "$PGO_PROF"
	chmod 755 "$TMPD/lib"
	# A scratch copy of the work tree (tracked and untracked files, as make
	# in the repo would see them), so the repo's objects are left alone.
	tar -C "$REPO" --exclude=./.git --exclude=./bench/results --exclude='*.o' \
		--exclude='*.so' --exclude='*.bc' -cf - . | tar -C "$PGO_SRC" -xf -

	module_build "$PGO_SRC" normal ""
	module_build "$PGO_SRC" instr "-fprofile-generate=$PGO_PROF"
	V_BUILD["_instr"]=instr
	activate_build _instr

	# Training, in its own database.
	sql "CREATE DATABASE train" >/dev/null
	QDB=train sql "CREATE EXTENSION btlayout" >/dev/null
	pgo_redirect train
	local trows=$((ROWS < 200000 ? ROWS : 200000)) tdur tscript nv=0
	for v in "${CONF_VARIANTS[@]}"; do
		[[ $(variant_am "$v") == btlayout && ${V_BUILD[$v]} == normal ]] && nv=$((nv + 1))
	done
	((nv > 0)) || die "pgo: no btlayout variant to train with"
	tdur=$((PGO_TRAIN_SECONDS / nv))
	((tdur >= 1)) || tdur=1
	for v in "${CONF_VARIANTS[@]}"; do
		[[ $(variant_am "$v") == btlayout && ${V_BUILD[$v]} == normal ]] || continue
		id=$(vid "$v")
		# Variants whose reloptions this btlayout rejects are skipped.
		if ! QDB=train sql "CREATE TABLE t_$id (k int4 NOT NULL, v int4 NOT NULL);
		        INSERT INTO t_$id SELECT g * 3, g FROM generate_series(1, $trows) g ORDER BY random();
		        CREATE INDEX t_${id}_idx ON t_$id $(ddl_for "$v" k);" >/dev/null 2>&1; then
			QDB=train sql "DROP TABLE IF EXISTS t_$id" >/dev/null 2>&1 || true
			continue
		fi
		QDB=train sql "VACUUM ANALYZE t_$id" >/dev/null
		tscript="$TMPD/scripts/pgo_train_$id.sql"
		sed -e '/^--/d' -e "s/@TABLE@/t_$id/g" -e "s/@ROWS@/$((trows * 3))/g" \
			"$BENCH/pgbench/pgo_train.sql" >"$tscript"
		chown postgres "$tscript"
		(cd "$TMPD" && as_pg "$PGBIN/pgbench" -h "$SOCKDIR" -p "$PORT" -n -M prepared \
			-f "$tscript" -T "$tdur" -c 2 -j 2 train) >>"$LOG" 2>&1 ||
			die "pgo: training on $v failed (see $LOG)"
		QDB=train sql "DELETE FROM t_$id WHERE k % 7 = 0" >/dev/null
		QDB=train sql "VACUUM t_$id" >/dev/null
		QDB=train sql "SET enable_seqscan = off; SELECT count(*) FROM t_$id WHERE k > 100" >/dev/null
	done
	# Backends write their profile when they exit: wait for all of them.
	for ((n = 0; n < 100; n++)); do
		[[ $(sql "SELECT count(*) FROM pg_stat_activity WHERE datname = 'train'") == 0 ]] && break
		sleep 0.1
	done
	sql "DROP DATABASE train" >/dev/null
	n=$(find "$PGO_PROF" -name '*.gcda' | wc -l)
	((n > 0)) || die "pgo: the training wrote no profile (.gcda) into $PGO_PROF"
	log "pgo: training wrote $n profile files"
	cp -r "$PGO_PROF" "$RESULTS/pgo-profile"

	module_build "$PGO_SRC" pgo "-fprofile-use=$PGO_PROF -fprofile-correction"
	if grep -q 'missing-profile\|profile count data file not found' "$LOG"; then
		warn "pgo: gcc did not find a profile for some files (see $LOG)"
	fi
	cmp -s "$TMPD/lib/normal.so" "$TMPD/lib/pgo.so" && die "pgo: pgo.so is identical to normal.so"
	CURRENT_BUILD=
	activate_build btlayout
	log "pgo: builds and training in $(elapsed "$t0" "$(now_s)") s"
	MODULE_INFO="normal: md5 $(md5sum <"$TMPD/lib/normal.so" | cut -c1-12), pgo: md5 $(md5sum <"$TMPD/lib/pgo.so" | cut -c1-12)"
	PGO_INFO="normal.so and pgo.so built from the same scratch copy; pgo: -fprofile-use -fprofile-correction after ${PGO_TRAIN_SECONDS} s of training (bench/pgbench/pgo_train.sql) on $trows-row tables"
}

# --- --baseline REV: the same variants, run by another commit's build --------
#
# An A/B of two versions of the code on the same data in one run: each
# btlayout variant v gets a twin v-base, the same index definition, whose
# indexes are built and searched by base.so, built from commit REV (git
# archive, so only committed files) with the same server and flags.  Twins
# interleave with the variants in every round like any other variant, and
# the report gives each variant's per-round ratio to its twin.  REV must
# have the installed extension's default_version: base.so serves the same
# SQL functions.
BASELINE_INFO=

# baseline_prepare: build base.so from $BASELINE.
baseline_prepare() {
	local src=$TMPD/base-src want have
	want=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$REPO/btlayout.control")
	have=$(git -C "$REPO" show "$BASELINE:btlayout.control" | sed -n "s/^default_version = '\(.*\)'/\1/p")
	[[ $want == "$have" ]] ||
		die "baseline: $BASELINE has extension version $have, this tree $want; its library would not serve these functions"
	mkdir -p "$src" "$TMPD/lib"
	git -C "$REPO" archive "$BASELINE" | tar -C "$src" -xf - ||
		die "baseline: git archive $BASELINE failed"
	module_build "$src" base ""
	BASELINE_INFO="variants *-base run btlayout.so built from $(git -C "$REPO" log -1 --format='%h (%cs, %s)' "$BASELINE"), md5 $(md5sum <"$TMPD/lib/base.so" | cut -c1-12)"
}

# baseline_twins LIST REQUIRED: after each btlayout variant of the named
# list (normal build), its twin "<variant>-base"; the twin of a variant
# named in the string variable REQUIRED is required too.
baseline_twins() {
	local -n lst=$1 req=$2
	local v t out=()
	for v in "${lst[@]}"; do
		out+=("$v")
		[[ $(variant_am "$v") == btlayout && ${V_BUILD[$v]} == normal ]] || continue
		t=$v-base
		[[ -z ${V_DDL[$t]:-} ]] || die "variants.conf: $t exists; --baseline names its twins so"
		V_KINDS[$t]=${V_KINDS[$v]}
		V_BUILD[$t]=base
		V_DDL[$t]=${V_DDL[$v]}
		V_SET[$t]=${V_SET[$v]}
		V_DEFAULT[$t]=${V_DEFAULT[$v]}
		V_KEY[$t]=${V_KEY[$v]}
		[[ $req == *" $v "* ]] && req+="$t "
		out+=("$t")
	done
	lst=("${out[@]}")
}

