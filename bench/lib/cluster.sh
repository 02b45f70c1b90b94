# shellcheck shell=bash
# bench/lib/cluster.sh: packages, the btlayout build, and the throwaway
# cluster (create, configure, start, stop, remove).  Sourced by
# scripts/bench.sh.

# Debian packages the benchmark needs.  pg_prewarm is in postgresql-15 on
# Debian (postgresql-contrib is the metapackage that names it); the chart is
# drawn with matplotlib.  With probe-text, also locales-all when the
# machine has no en_US.utf8 locale (a fresh Debian 12 has only C, C.utf8
# and POSIX): the libc collation of btree-libc and btlayout-libc-*, which
# initdb takes from the machine's locales (about 11 MB to fetch, 230 MB
# installed; only while that locale is missing).
BENCH_PACKAGES=(gcc make python3 python3-matplotlib)

# install_packages: apt-get only what is missing (a quick dpkg-query when
# everything is there), then the server of version PG_VERSION
# (scripts/install-pg.sh: Debian's packages for 15, a source build for
# 17-19).
install_packages() {
	local p missing=() had_server=1 want=("${BENCH_PACKAGES[@]}")
	if has_workload probe-text && ! locale -a 2>/dev/null | grep -ix 'en_US\.utf-\?8' >/dev/null; then
		want+=(locales-all)
	fi
	for p in "${want[@]}"; do
		if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) != installed ]]; then
			missing+=("$p")
		fi
	done
	if ((${#missing[@]} == 0)); then
		log "packages: all present"
	else
		log "packages: installing ${missing[*]}"
		# (waiting up to ten minutes for another apt or dpkg's lock)
		apt-get update -qq -o DPkg::Lock::Timeout=600 >>"$LOG" 2>&1 || die "apt-get update failed (see $LOG)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends \
			"${missing[@]}" >>"$LOG" 2>&1 || die "apt-get install failed (see $LOG)"
	fi
	[[ -x /usr/lib/postgresql/15/bin/postgres ]] || had_server=0
	"$REPO/scripts/install-pg.sh" "$PG_VERSION" >>"$LOG" 2>&1 ||
		die "installing PostgreSQL $PG_VERSION failed (see $LOG)"
	# Installing Debian's server creates and may start its own cluster on
	# 5432.  The benchmark never uses it: stop it again if we started it.
	if ((had_server == 0)) && [[ $PG_VERSION == 15 ]] && command -v pg_ctlcluster >/dev/null; then
		pg_ctlcluster 15 main stop >/dev/null 2>&1 || true
	fi
}

# select_server: PGBIN and PG_CONFIG of PostgreSQL PG_VERSION, where
# scripts/install-pg.sh puts it (in the sid root of 19: Debian's layout)
select_server() {
	case $PG_VERSION in
		15) PGBIN=/usr/lib/postgresql/15/bin ;;
		1[89]) if [[ ${BTL_IN_ROOT:-} == 1 ]]; then
				PGBIN=/usr/lib/postgresql/$PG_VERSION/bin
			else
				PGBIN=${BTL_PG_ROOT:-/opt/btlayout-pg}/$PG_VERSION/bin
			fi ;;
		1[6-9]) PGBIN=${BTL_PG_ROOT:-/opt/btlayout-pg}/$PG_VERSION/bin ;;
		*) die "PostgreSQL $PG_VERSION is not supported (15-19)" ;;
	esac
	PG_CONFIG=$PGBIN/pg_config
}

# has_icu: was the server built with ICU?
has_icu() { "$PG_CONFIG" --configure | grep -q -- "'--with-icu'"; }

# build_install [DIR]: build btlayout (or the module in DIR of the repo)
# for the server under test and install it.  The build runs in a scratch
# copy of the repo, so that objects left by a build for another server
# version are never linked in.
build_install() {
	local dir=${1:-.} name=${1:-btlayout} build rc=0
	build=$(mktemp -d /tmp/btlayout-build.XXXXXX)
	tar -C "$REPO" -cf - --exclude=./.git --exclude='*.o' --exclude='*.so' \
		--exclude='*.bc' --exclude=./bench/results . | tar -C "$build" -xf -
	log "build: make && make install of $name ($("$PG_CONFIG" --version), in a copy of $REPO)"
	if ! make -C "$build/$dir" PG_CONFIG="$PG_CONFIG" >>"$LOG" 2>&1; then
		rm -rf "$build"
		tail -n 20 "$LOG" >&2
		die "building $name failed (full output in $LOG)"
	fi
	make -C "$build/$dir" PG_CONFIG="$PG_CONFIG" install >>"$LOG" 2>&1 || rc=$?
	rm -rf "$build"
	((rc == 0)) || die "make install of $name failed (see $LOG)"
}

# pick_port: the first port of 5450-5459 that nothing listens on (TCP) and
# that has no socket file in the usual places or in another benchmark's
# directory.  The server itself listens on a unix socket in $TMPD only.
pick_port() {
	local p f used
	for p in $(seq 5450 5459); do
		used=0
		if ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then used=1; fi
		for f in "/tmp/.s.PGSQL.$p" "/var/run/postgresql/.s.PGSQL.$p" /tmp/btlayout-bench.*/".s.PGSQL.$p"; do
			[[ -e $f ]] && used=1
		done
		if ((used == 0)); then
			echo "$p"
			return
		fi
	done
	die "no free port in 5450-5459"
}

# size_shared_buffers NVAR [EXTRA_MB]: enough for every table and index
# under test, from the scale and the number of variants (measured per scale
# unit on PostgreSQL 15: pgbench_accounts 13.0 MB, probe_t 3.6 MB, an int4
# btree index 2.2 MB and a hash index 2.6-4 MB, two per variant; write_t and
# its index a tenth; none of it when NVAR is 0), plus EXTRA_MB (probe-text's
# or probe-uuid's tables), plus a margin, rounded up to 256 MB, capped at
# 60% of memory.
size_shared_buffers() {
	local nvar=$1 extra=${2:-0} mem_mb need cap
	mem_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 }' /proc/meminfo)
	need=$(awk -v s="$SCALE" -v n="$nvar" -v k="$PROBES" -v x="${extra:-0}" \
		'BEGIN { printf "%d", (n > 0 ? s * (13.0 + 3.6 + 1.0 + n * 2 * 3.0) + k * 40 / 1e6 : 0) + x + 384 }')
	need=$(((need + 255) / 256 * 256))
	cap=$((mem_mb * 6 / 10))
	if ((need > cap)); then
		warn "tables need ~${need}MB of shared_buffers, capping at ${cap}MB: runs may read from the OS cache"
		need=$cap
	fi
	echo "${need}MB"
}

# hugepages_reserve SB: reserve enough 2 MB huge pages for shared_buffers
# SB ("<n>MB"), so that the server (huge_pages = try) maps its buffers with
# them: random probes over gigabytes of buffers otherwise pay a TLB miss on
# most page visits, which made run-to-run spread larger (measured: 1M probes
# of 10M keys, 3 rounds, medians 4,910 -> 4,655 ms core btree and 4,013 ->
# 3,635 ms blocked, min-max 3,175-4,296 -> 3,585-3,725 ms).  The pages are
# added to those already reserved (another benchmark's server may hold some)
# and exactly as many are given back at exit (hugepages_restore), so that
# concurrent runs neither take each other's pages nor leave any behind.
hugepages_reserve() {
	local mb=${1%MB} want cur got
	[[ -w /proc/sys/vm/nr_hugepages ]] || { warn "cannot reserve huge pages (not root)"; return 0; }
	want=$((mb / 2 + mb / 64 + 64))
	cur=$(cat /proc/sys/vm/nr_hugepages)
	echo $((cur + want)) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	got=$(($(cat /proc/sys/vm/nr_hugepages) - cur))
	((got > 0)) || got=0
	HUGEPAGES_ADDED=$got
	if ((got < want)); then
		warn "only $got of $want huge pages could be reserved: shared_buffers may use normal pages"
	fi
	HUGEPAGES=$got
	log "huge pages: $got reserved for shared_buffers = $1 (in addition to $cur reserved before)"
}

hugepages_restore() {
	[[ -n ${HUGEPAGES_ADDED:-} ]] || return 0
	local now
	now=$(cat /proc/sys/vm/nr_hugepages)
	now=$((now - HUGEPAGES_ADDED))
	((now > 0)) || now=0
	echo "$now" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	HUGEPAGES_ADDED=
}

# cluster_create: initdb in a fresh temporary directory, configure, start.
# The database default collation is "C" unless INITDB_LOCALE (initdb's
# locale options) says otherwise.
cluster_create() {
	local sb=$1
	# shellcheck disable=SC2086 # INITDB_LOCALE holds several options
	as_pg "$PGBIN/initdb" -D "$PGDATA_DIR" -U postgres -A trust -E UTF8 ${INITDB_LOCALE:---locale=C} \
		--no-sync >>"$LOG" 2>&1 || die "initdb failed (see $LOG)"
	# Settings: see bench/README.md ("Server settings") for the why of each.
	cat >>"$PGDATA_DIR/postgresql.conf" <<-EOF

		# --- btlayout benchmark (scripts/bench.sh) ---
		listen_addresses = ''
		port = $PORT
		unix_socket_directories = '$SOCKDIR'
		shared_buffers = '$sb'
		huge_pages = try
		work_mem = '64MB'
		maintenance_work_mem = '1GB'
		max_parallel_workers_per_gather = 0
		max_parallel_maintenance_workers = 0
		jit = off
		autovacuum = off
		wal_level = minimal
		wal_init_zero = off
		max_wal_senders = 0
		fsync = off
		synchronous_commit = off
		checkpoint_timeout = '1d'
		max_wal_size = '32GB'
		min_wal_size = '1GB'
		bgwriter_lru_maxpages = 0
		logging_collector = off
		log_min_messages = warning
		log_checkpoints = on
	EOF
	local kv
	for kv in "${EXTRA_SETTINGS[@]}"; do
		printf "%s = '%s'\n" "${kv%%=*}" "$(sed "s/'/''/g" <<<"${kv#*=}")" >>"$PGDATA_DIR/postgresql.conf"
	done
	cluster_start
}

cluster_start() {
	as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -l "$SERVER_LOG" -w -t 300 start >>"$LOG" 2>&1 ||
		{ tail -n 20 "$SERVER_LOG" >&2; die "server did not start (log: $SERVER_LOG)"; }
	SERVER_UP=1
}

# cluster_stop: also works when the results directory (and so $LOG) is gone:
# the server must never outlive the script.
cluster_stop() {
	[[ ${SERVER_UP:-0} == 1 ]] || return 0
	local out=/dev/null
	[[ -d $(dirname "${LOG:-/}") ]] && out=$LOG
	as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -m fast -w -t 120 stop >>"$out" 2>&1 ||
		as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -m immediate -w -t 60 stop >>"$out" 2>&1 || true
	SERVER_UP=0
}

# cleanup: the EXIT trap.  Stops the server and removes the temporary
# directory (unless --keep), keeps the server log with the results.
cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM
	cluster_stop
	hugepages_restore
	if [[ -n ${RESULTS:-} && -d ${RESULTS:-} && -f ${SERVER_LOG:-} ]]; then
		cp "$SERVER_LOG" "$RESULTS/server.log" 2>/dev/null
	fi
	if [[ -n ${TMPD:-} && -d ${TMPD:-} ]]; then
		if [[ ${KEEP:-0} == 1 ]]; then
			log "kept $TMPD (--keep)"
		else
			rm -rf -- "$TMPD"
		fi
	fi
	if ((rc != 0)); then
		log "FAILED (exit $rc); partial results in ${RESULTS:-?}"
	fi
	exit "$rc"
}
