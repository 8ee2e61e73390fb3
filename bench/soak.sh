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
#        bench/soak.sh --resume WORKDIR [-- RBSOAK-FLAGS...]
#   --short   the CI run (2,100 chains, most of one step; every fault at least 5 times)
#             without it, the long run: 10,000 chains of 100 steps (1,000,000 work units),
#             its server root on an ext4 image in WORKDIR and MariaDB's data there
#   --resume  go on with the run in WORKDIR whose every process was killed (the
#             machine stopped): its binaries, options and ledger (journal.jsonl) are
#             those of WORKDIR; the end checks judge the whole run
#   WORKDIR   a directory of its own (default: a new one under /tmp)
# Any rbsoak flag after --, e.g. -- -mariadb -assimilator hook -chains 300 -steps 30
# (go run ./bench/rbsoak -h lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
short="" work="" resume=""
while [ $# -gt 0 ]; do
	case "$1" in
	--short) short=-short ;;
	--resume) resume=-resume ;;
	--) shift; break ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	-*) echo "bench/soak.sh: unknown option $1 (rbsoak's flags go after --)" >&2; exit 2 ;;
	*) work=$1 ;;
	esac
	shift
done
if [ -n "$resume" ]; then
	[ -n "$work" ] && [ -s "$work/journal.jsonl" ] || { echo "bench/soak.sh: --resume WORKDIR: no run's journal in ${work:-(none given)}" >&2; exit 2; }
	[ -z "$short" ] || { echo "bench/soak.sh: --resume takes the run's own options (from its journal), not --short" >&2; exit 2; }
fi
work=${work:-$(mktemp -d /tmp/rboinc-soak.XXXXXX)}
mkdir -p "$work/bin"
work=$(cd "$work" && pwd)
# A resumed run goes on with the binaries it began with.
# RBOINC_PREBUILT=DIR: the programs were built from this source already
# (.ci/run builds them once for all its stages): hard-linked, not built.
if [ -n "$resume" ]; then
	:
elif [ -n "${RBOINC_PREBUILT:-}" ]; then
	for p in ./cmd/rboinc-server ./cmd/rboinc-hook ./cmd/rboinc-gahp ./cmd/rboinc-submit ./cmd/rboinc-retrieve ./examples/adaptive-master ./bench/rbsoak; do
		ln -f "$RBOINC_PREBUILT/${p##*/}" "$work/bin/" 2>/dev/null || cp -f "$RBOINC_PREBUILT/${p##*/}" "$work/bin/"
	done
else
	go build -o "$work/bin/" ./cmd/rboinc-server ./cmd/rboinc-hook ./cmd/rboinc-gahp ./cmd/rboinc-submit ./cmd/rboinc-retrieve ./examples/adaptive-master ./bench/rbsoak
fi
# The app the stand-in's volunteer runs: bench/langevin's C program (one
# exec a result; the shipped script is a shell and an awk, most of a long
# run's processor time), static where the C library allows. Without cc,
# the shipped script (RBSOAK_APP=script asks for it).
app=()
if [ -z "$resume" ] && [ "${RBSOAK_APP:-}" != script ] && command -v cc >/dev/null; then
	if cc -std=c11 -O2 -static -o "$work/bin/langevin" bench/langevin/langevin.c -lm 2>/dev/null ||
		cc -std=c11 -O2 -o "$work/bin/langevin" bench/langevin/langevin.c -lm; then
		app=(-app "$work/bin/langevin")
	fi
fi
if [ -n "$resume" ]; then
	run=("$work/bin/rbsoak" -resume -work "$work" "$@")
else
	run=("$work/bin/rbsoak" -bin "$work/bin" -work "$work" $short "${app[@]}" "$@")
fi
keep=""
for a in "$@"; do case "$a" in -keep | --keep | -keep=true | --keep=true) keep=1 ;; esac; done
# As root, rbsoak runs in a mount and pid namespace of its own, under a
# shell as the namespace's init (which reaps what a killed server leaves):
# its tmpfs is seen by no other process, and however rbsoak ends (kill -9
# too) the namespace ends with it, taking every process it started (the
# server, its daemons, MariaDB) and the tmpfs along. Not with -keep, whose
# tmpfs must outlive the run, nor with RBSOAK_NO_NAMESPACE=1 (which tries
# the check below).
rc=0
if [ -z "$keep" ] && [ "${RBSOAK_NO_NAMESPACE:-}" != 1 ] && [ "$(id -u)" = 0 ] && unshare --mount --pid --fork true 2>/dev/null; then
	unshare --mount --propagation private --pid --fork --mount-proc --kill-child \
		bash -c '"$@" & wait $!' rbsoak-init "${run[@]}" || rc=$?
else
	"${run[@]}" || rc=$?
fi
[ -n "$keep" ] && exit "$rc"
# Nothing of the run may outlive it: a process of its (one naming its
# binaries or the server root; the grep matches itself too, but is gone
# when its list is read), then a mount under the work directory.
for f in $(grep -alF -e "$work/bin/" -e "$work/rootfs/" /proc/[0-9]*/cmdline 2>/dev/null); do
	pid=${f#/proc/}
	pid=${pid%/cmdline}
	cl=$(tr '\0' ' ' 2>/dev/null <"$f") && [ -n "$cl" ] || continue
	echo "bench/soak.sh: left running after rbsoak: $pid $cl; killing it" >&2
	kill -9 "$pid" 2>/dev/null || true
	rc=1
done
for m in $(awk -v w="$work/" 'index($2 "/", w) == 1 {print $2}' /proc/self/mounts); do
	echo "bench/soak.sh: $m left mounted after rbsoak; unmounting it" >&2
	for _ in 1 2 3 4 5; do umount "$m" 2>/dev/null && break; sleep 1; done
	rc=1
done
# MariaDB's data directory (under /tmp, for its socket's short path), which
# rbsoak removes unless it was killed.
if [ -s "$work/mariadb.dir" ]; then
	d=$(cat "$work/mariadb.dir")
	case "$d" in /tmp/rbsoak-db-*) [ -d "$d" ] && rm -rf "$d" ;; esac
	rm -f "$work/mariadb.dir"
fi
exit "$rc"
