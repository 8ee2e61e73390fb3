#!/usr/bin/env bash
# A soak run of the whole loop on the embedded BOINC stand-in: many chains of
# several steps, computed by the stand-in's volunteer loop, every step's hook
# call going through the spool to the creator; then every result retrieved.
# Prints how long the chains took, how many files came back, and the server's
# errors (there should be none). Fails when a chain does not finish.
#
# Usage: bench/soak.sh [CHAINS] [STEPS] [WORKDIR]   (default: 150 4, a new temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
chains=${1:-150} steps=${2:-4}
work=${3:-$(mktemp -d /tmp/rboinc-soak.XXXXXX)}
mkdir -p "$work"
go build -o "$work/bin/" ./cmd/rboinc-server ./cmd/rboinc-hook ./cmd/rboinc-submit ./cmd/rboinc-retrieve
export PATH="$work/bin:$PATH"
root="$work/server"
rboinc-server init --root "$root" >/dev/null
rboinc-server serve --root "$root" --listen 127.0.0.1:0 --addr-file "$work/addr" 2>"$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.1; done
[ -s "$work/addr" ] || { echo "server did not start:"; cat "$work/server.log"; exit 1; }
export RBOINC_URL="http://$(cat "$work/addr")/rboinc_cgi"
export RBOINC_TOKEN=$(rboinc-server user add --root "$root" soak)
ex="$PWD/examples/langevin"
for i in $(seq 1 "$chains"); do echo "c$i -coor_file $ex/input.coor"; done >"$work/jobs"
rboinc-submit -app_name langevin -group soak -jobs "$work/jobs" -vel_file "$ex/input.vel" -num_steps "$steps" >/dev/null
t0=$(date +%s)
while :; do
	st=$(rboinc-retrieve -group soak -status)
	finished=$(printf '%s\n' "$st" | grep -c $'\tdone\t' || true)
	failed=$(printf '%s\n' "$st" | grep -c $'\tfailed' || true)
	[ $((finished + failed)) -ge "$chains" ] && break
	if [ $(($(date +%s) - t0)) -gt 1800 ]; then
		echo "chains still running after 30 minutes:"; printf '%s\n' "$st" | cut -f3 | sort | uniq -c; exit 1
	fi
	sleep 1
done
echo "$chains chains of $steps steps: $finished done, $failed failed, in $(($(date +%s) - t0)) s"
rboinc-retrieve -group soak -into "$work/results" >/dev/null
echo "retrieved $(ls "$work/results" | wc -l) files"
errors=$(grep -c 'level=ERROR' "$work/server.log" || true)
echo "server errors: $errors"
grep 'level=ERROR' "$work/server.log" | head -5
[ "$failed" -eq 0 ] && [ "$errors" -eq 0 ]
