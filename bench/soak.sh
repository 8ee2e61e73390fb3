#!/usr/bin/env bash
# The soak of issue 30: builds the binaries and runs bench/rbsoak, a real
# rboinc-server on the embedded BOINC stand-in with several users
# submitting, cron-like retrievers, control and purges all at once, while
# the server, the creator, the notifier, the native assimilator, clients
# mid-transfer (and with --mariadb, MariaDB) are killed with SIGKILL and the
# server root's disk (a tmpfs; needs root) fills up, at random moments. It
# fails on a chain in the wrong state, a work unit made twice, a result
# lost, retrieved twice or damaged, a webhook event lost, anything left
# behind after purging everything, and memory or descriptors that grow.
#
# Usage: bench/soak.sh [--short] [WORKDIR] [-- RBSOAK-FLAGS...]
#   --short   the CI run (1,200 chains, most of one step; every fault at least 5 times)
#   WORKDIR   a directory of its own (default: a new one under /tmp)
# Any rbsoak flag after --, e.g. -- -mariadb -chains 250000 -steps 4 -duration 20h
# (go run ./bench/rbsoak -h lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
short="" work=""
while [ $# -gt 0 ]; do
	case "$1" in
	--short) short=-short ;;
	--) shift; break ;;
	-h | --help) sed -n '2,16p' "$0"; exit 0 ;;
	-*) echo "bench/soak.sh: unknown option $1 (rbsoak's flags go after --)" >&2; exit 2 ;;
	*) work=$1 ;;
	esac
	shift
done
work=${work:-$(mktemp -d /tmp/rboinc-soak.XXXXXX)}
mkdir -p "$work/bin"
work=$(cd "$work" && pwd)
go build -o "$work/bin/" ./cmd/rboinc-server ./cmd/rboinc-hook ./cmd/rboinc-submit ./cmd/rboinc-retrieve ./bench/rbsoak
"$work/bin/rbsoak" -bin "$work/bin" -work "$work" $short "$@"
