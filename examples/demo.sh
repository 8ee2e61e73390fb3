#!/usr/bin/env bash
# The whole loop on the embedded BOINC stand-in: build, init a server root,
# serve, add a user, submit a 3-step chain of the example Langevin queue,
# wait for it, retrieve the results and show them.
# Usage: bash examples/demo.sh [WORKDIR]   (default: a new temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d /tmp/rboinc-demo.XXXXXX)}
mkdir -p "$work"
echo "== building into $work/bin"
# RBOINC_PREBUILT=DIR: the programs were built from this source already
# (.ci/run builds them once for all its stages): hard-linked, not built.
if [ -n "${RBOINC_PREBUILT:-}" ]; then
	mkdir -p "$work/bin"
	for p in rboinc-server rboinc-hook rboinc-submit rboinc-retrieve; do
		ln -f "$RBOINC_PREBUILT/$p" "$work/bin/" 2>/dev/null || cp -f "$RBOINC_PREBUILT/$p" "$work/bin/"
	done
else
	go build -o "$work/bin/" ./cmd/rboinc-server ./cmd/rboinc-hook ./cmd/rboinc-submit ./cmd/rboinc-retrieve
fi
export PATH="$work/bin:$PATH"
root="$work/server"

echo "== rboinc-server init --root $root"
rboinc-server init --root "$root"
rboinc-server serve --root "$root" --listen 127.0.0.1:0 --addr-file "$work/addr" 2>"$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.1; done
[ -s "$work/addr" ] || { echo "server did not start:"; cat "$work/server.log"; exit 1; }
export RBOINC_URL="http://$(cat "$work/addr")/rboinc_cgi"
export RBOINC_TOKEN=$(rboinc-server user add --root "$root" scientist)
echo "== server at $RBOINC_URL, user 'scientist'"

echo "== the queue's parameters"
rboinc-submit -app_name langevin -help_parameters

echo "== rboinc-submit: a 3-step chain"
ex=examples/langevin
rboinc-submit -app_name langevin -group demo -name run1 -num_steps 3 \
	-coor_file "$ex/input.coor" -vel_file "$ex/input.vel"

echo "== waiting for the chain (the BOINC stand-in runs each step, the hook chains them)"
for _ in $(seq 600); do
	line=$(rboinc-retrieve -group demo -status | grep '^run1	' || true)
	case "$line" in *done*|*failed*) break ;; esac
	sleep 0.2
done
echo "$line"
case "$line" in *done*) ;; *) echo "chain did not finish"; tail -20 "$work/server.log"; exit 1 ;; esac

echo "== rboinc-retrieve into $work/results"
rboinc-retrieve -group demo -into "$work/results" -quiet=false
ls -l "$work/results"
last=$(ls "$work/results" | grep -- '-2-3-RND[0-9]*_0.coor$')
echo "== final coordinates ($last)"
cat "$work/results/$last"
echo "== progress log of the last step"
cat "$work/results/${last%_0.coor}_2.log"
