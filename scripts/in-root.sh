#!/usr/bin/env bash
#
# scripts/in-root.sh: run a command in the Debian sid root that holds
# PostgreSQL 19 (Debian serves 19 only as binary packages of its
# experimental suite, built for a newer C library than Debian 12's;
# scripts/install-pg.sh 19 makes the root, with sid's 18 beside 19).
#
# Usage: scripts/in-root.sh [--bind DIR]... [--] COMMAND [ARG...]
#
# In the root the command sees this repository, and each DIR given, at the
# path it has on the host (so paths on its command line mean the same
# there), and /proc, /sys and /dev (with /dev/shm and /dev/pts).  It starts in
# the directory it was called from when that is one of those, in / if not,
# with BTL_IN_ROOT=1 in its environment: scripts/install-pg.sh,
# scripts/test.sh and scripts/bench.sh then find the root's servers
# (Debian's layout, /usr/lib/postgresql/V) instead of making the root.
#
# The mounts are made in a mount namespace of the command's own
# (unshare(1)): nothing outside it sees them, and they go with it however
# it ends (its exit, an error, a signal, kill -9): nothing is left mounted
# on the host, and removing the root never reaches into the host's /dev.
# A server the command starts is reachable from the host through its
# socket directory inside the root.
#
# Environment: BTL_PG_ROOT (where scripts/install-pg.sh keeps its servers,
# default /opt/btlayout-pg; the root is its sid/).  Run as root or as a
# user with sudo.

set -euo pipefail

readonly SID_ROOT=${BTL_PG_ROOT:-/opt/btlayout-pg}/sid
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
readonly REPO

die()
{
	printf 'in-root.sh: %s\n' "$*" >&2
	exit 2
}

usage()
{
	sed -n '/^# Usage:/,/^# Environment/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" | sed '$d'
}

binds=("$REPO")
while (($#)); do
	case $1 in
		--bind)
			[[ $# -ge 2 && -d $2 ]] || die "--bind needs an existing directory"
			binds+=("$(cd "$2" && pwd -P)")
			shift 2
			;;
		--)
			shift
			break
			;;
		-h | --help)
			usage
			exit 0
			;;
		*) break ;;
	esac
done
(($#)) || {
	usage >&2
	exit 2
}
[[ -x $SID_ROOT/usr/bin/env && -f $SID_ROOT/.btlayout-stamp ]] ||
	die "no sid root in $SID_ROOT: scripts/install-pg.sh 19 makes it"

sudo=()
((EUID == 0)) || sudo=(sudo --)

# In the new namespace: the mounts, then the command under chroot(8), as
# root there (the scripts drop to the postgres user themselves)
# shellcheck disable=SC2016 # expanded by the inner shell
exec "${sudo[@]}" unshare --mount --propagation private -- bash -c '
	set -e
	root=$1 cwd=$2 nbinds=$3
	shift 3
	mount --rbind /dev "$root/dev"
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	for ((i = 0; i < nbinds; i++)); do
		mkdir -p "$root$1"
		mount --bind "$1" "$root$1"
		shift
	done
	exec chroot "$root" /usr/bin/env -u TMPDIR BTL_IN_ROOT=1 \
		/bin/sh -c '\''cd "$0" 2>/dev/null || cd /; exec "$@"'\'' "$cwd" "$@"
' in-root "$SID_ROOT" "$PWD" "${#binds[@]}" "${binds[@]}" "$@"
