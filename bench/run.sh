#!/usr/bin/env bash
# rboinc benchmarks (see BENCHMARKS.md). Builds the binaries, starts a real
# `rboinc-server serve` on the embedded BOINC stand-in and measures every
# target next to a baseline measured in the same run: md5sum and cp of the
# same bytes, the stand-in's `create_work --stdin` alone for the same work
# units, curl from a plain HTTP file server for the same files. Prints each
# figure, its baseline and the ratio, and writes WORK/results.md and
# WORK/results.json. Then runs the Go benchmarks next to the code.
#
# Usage: bench/run.sh [--short] [--keep] [--no-go-bench] [--stages=LIST] [--create=MODE] [WORKDIR]
#   WORKDIR        a directory of its own (default: a new one under /tmp)
#   --short        small sizes, a smoke run (CI) in well under a minute
#   --stages=LIST  only these stages (and those they build on), e.g. retrieve,status
#   --keep         keep the server root and the data files (several GB)
#   --no-go-bench  skip the Go benchmarks
#   --create=MODE  how the server creates work units: create_work (default)
#                  or native (rboinc.json "create"); the baseline stays the
#                  stand-in's create_work --stdin alone
# No timing is asserted: it fails only when something does not work.
# Before and after a change: bench/compare.sh OLDREV [NEWREV] runs rbbench
# for both revisions interleaved and prints the slowdown of every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
short="" keep="" gobench=1 work="" stages="" create=""
for a in "$@"; do
	case "$a" in
	--short) short=--short ;;
	--keep) keep=1 ;;
	--no-go-bench) gobench="" ;;
	--stages=*) stages=${a#--stages=} ;;
	--create=*) create=${a#--create=} ;;
	-h | --help) sed -n '2,21p' "$0"; exit 0 ;;
	-*) echo "bench/run.sh: unknown option $a" >&2; exit 2 ;;
	*) work=$a ;;
	esac
done
for tool in go md5sum cp curl; do
	command -v "$tool" >/dev/null || { echo "bench/run.sh: $tool is needed" >&2; exit 1; }
done
work=${work:-$(mktemp -d /tmp/rboinc-bench.XXXXXX)}
mkdir -p "$work/bin"
work=$(cd "$work" && pwd)

echo "== building into $work/bin"
# RBOINC_PREBUILT=DIR: the programs were built from this source already
# (.ci/run builds them once for all its stages): hard-linked, not built.
if [ -n "${RBOINC_PREBUILT:-}" ]; then
	for p in ./cmd/rboinc-server ./cmd/rboinc-hook ./cmd/rboinc-submit ./cmd/rboinc-retrieve ./bench/rbbench ./bench/nop; do
		ln -f "$RBOINC_PREBUILT/${p##*/}" "$work/bin/" 2>/dev/null || cp -f "$RBOINC_PREBUILT/${p##*/}" "$work/bin/"
	done
else
	go build -o "$work/bin/" ./cmd/rboinc-server ./cmd/rboinc-hook ./cmd/rboinc-submit ./cmd/rboinc-retrieve ./bench/rbbench ./bench/nop
fi
"$work/bin/rbbench" -bin "$work/bin" -work "$work" -stages "$stages" -create "$create" $short
[ -n "$keep" ] || rm -rf "$work/server" "$work/data"

if [ -n "$gobench" ]; then
	pkgs="./internal/pool ./internal/store ./internal/engine ./workflow/client ./workflow/master ./internal/gahp"
	if [ -n "$short" ]; then
		echo "== Go benchmarks, each once at small sizes (smoke)"
		go test -short -run '^$' -bench . -benchtime 1x $pkgs
	else
		echo "== Go benchmarks"
		go test -run '^$' -bench . -benchtime 3x -timeout 30m $pkgs
	fi
fi
echo "== results: $work/results.md"
