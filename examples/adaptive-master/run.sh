#!/usr/bin/env bash
# The adaptive master on the embedded BOINC stand-in, in one command: build,
# init a server root, serve, add a user, run the master to its target.
# Usage: bash examples/adaptive-master/run.sh [WORKDIR] [MASTER FLAGS...]
#        (default WORKDIR: a new temporary directory)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-$(mktemp -d /tmp/rboinc-adaptive.XXXXXX)}
shift || true
mkdir -p "$work"
echo "== building into $work/bin"
go build -o "$work/bin/" ./cmd/rboinc-server ./cmd/rboinc-hook ./examples/adaptive-master
root="$work/server"
"$work/bin/rboinc-server" init --root "$root" >/dev/null
"$work/bin/rboinc-server" serve --root "$root" --listen 127.0.0.1:0 --addr-file "$work/addr" 2>"$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.1; done
[ -s "$work/addr" ] || { echo "server did not start:"; cat "$work/server.log"; exit 1; }
export RBOINC_URL="http://$(cat "$work/addr")/rboinc_cgi"
export RBOINC_TOKEN=$("$work/bin/rboinc-server" user add --root "$root" scientist)
echo "== server at $RBOINC_URL; the master works in $work/master"
"$work/bin/adaptive-master" -dir "$work/master" "$@"
