#!/usr/bin/env bash
# rboinc against a real BOINC server: builds BOINC's server programs from
# BOINC_SRC, makes a project with its own MariaDB and Apache on loopback,
# installs rboinc on it, attaches Debian's boinc-client as the volunteer,
# submits chains with rboinc-submit and checks what rboinc-retrieve brings
# back. Not run by CI; needs root on Debian. See README.md in this directory.
#
#   BOINC_SRC=/path/to/boinc [ASSIMILATOR=hook|native] [KEEP=1] e2e/realboinc/run.sh
#   [WORK=DIR] e2e/realboinc/run.sh --stop    # stop what a KEEP=1 run left running
#   BOINC_SRC=/path/to/boinc TIMING=only e2e/realboinc/run.sh  # issue 31's timing (stage 10) alone
#
# Exit status: 0 the chains came back right; 1 they did not (or a stage
# failed); 2 bad usage; 77 skipped (ASSIMILATOR=native without the
# `rboinc-server assimilator` command).
set -euo pipefail

# ---------------------------------------------------------------- settings
BOINC_SRC=${BOINC_SRC:-}
ASSIMILATOR=${ASSIMILATOR:-hook}         # hook: script_assimilator + rboinc_hook; native: rboinc's own daemon
WORK=${WORK:-/tmp/rboinc-realboinc}     # build cache, run state and logs
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) # this directory: the application's source
REPO=${REPO:-$(cd "$HERE/../.." && pwd)}          # the rboinc to build and test
PROJECT_NAME=${PROJECT_NAME:-rbtest}
PROJECT_USER=${PROJECT_USER:-boincadm}  # owns the project, runs Apache, the daemons, MariaDB, rboinc
APP_NAME=${APP_NAME:-rbstep}            # the BOINC application
QUEUE=${QUEUE:-rbstep}                  # the rboinc queue (templates rboinc_<QUEUE>_wu/_result)
HTTP_PORT=${HTTP_PORT:-8088}            # Apache (the BOINC project)
DB_PORT=${DB_PORT:-3307}                # MariaDB
RBOINC_PORT=${RBOINC_PORT:-8089}        # rboinc-server serve
GUI_RPC_PORT=${GUI_RPC_PORT:-31426}     # the volunteer's boinc client
CHAINS=${CHAINS:-3}                     # chains that must come back done
STEPS=${STEPS:-3}
FAIL_CHAINS=${FAIL_CHAINS:-1}           # more chains whose step 2 fails in the application: they must end "failed"
MAX_ERROR_RESULTS=${MAX_ERROR_RESULTS:-2} # rboinc.json max_error_results (BOINC tries a failing step this often)
FOREIGN_WUS=${FOREIGN_WUS:-1}           # work units of the same application made without rboinc: it must leave them alone
TIMEOUT=${TIMEOUT:-1500}                # seconds to wait for the chains
CRON_EVERY=${CRON_EVERY:-60}            # run `bin/start --cron` this often while waiting (0: never)
CONTROL=${CONTROL:-1}                   # 7: cancel a stopped chain's work unit, a replica and priority for a late step (0: skip)
CTL_GROUP=ctl
COEX=${COEX:-1}                         # 8: a batch of BOINC's own remote job submission beside rboinc, aborted (0: skip)
COEX_CHAINS=${COEX_CHAINS:-4}           # rboinc chains (2 steps) waiting in BOINC meanwhile, on the shared content
BOINC_JOBS=${BOINC_JOBS:-25}            # jobs of the BOINC batch (more than 20: several upload calls)
RELINK_WAIT=${RELINK_WAIT:-90}          # seconds to wait for a missing input of a waiting work unit to be back
COEX_TIMEOUT=${COEX_TIMEOUT:-900}       # seconds to wait for rboinc's chains after BOINC's batch
COEX_GROUP=coex
FIDELITY=${FIDELITY:-1}                 # 9: the same chains made by create_work and natively, BOINC's rows compared (0: skip)
FID_MODES=${FID_MODES:-create_work native} # the creation modes of the two submissions compared
FID_BREAK=${FID_BREAK:-0}               # 1: change the queue's rsc_memory_bound between the two submissions (the stage must fail)
FID_BATCH=${FID_BATCH:-7}               # the BOINC batch id the fidelity chains are given
FID_MEMORY_BOUND=2e8                    # the queue's rsc_memory_bound (FID_BREAK changes it)
FID_TIMEOUT=${FID_TIMEOUT:-900}         # seconds for the fidelity chains to run
TIMING=${TIMING:-0}                     # 10: issue 31's timing against BOINC's own create_work (1: after stage 9; only: stages 1-4 and 10 alone; 0: skip)
TIMING_JOBS=${TIMING_JOBS:-2000}        # chains per submission (and create_work jobs) in stage 10
TIMING_ROUNDS=${TIMING_ROUNDS:-3}       # rounds of stage 10 (each figure is the best of them)
KEEP=${KEEP:-0}                         # 1: leave the project running after the checks (run.sh --stop stops it)
JOBS=${JOBS:-$(nproc)}
SKIP_APT=${SKIP_APT:-0}

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
STOP_ONLY=0
case "${1:-}" in
-h | --help) usage; exit 0 ;;
--stop) STOP_ONLY=1 ;;
'') ;;
*) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "run.sh: run as root (apt, a project user, services on loopback)" >&2; exit 2; }
if [ "$STOP_ONLY" = 0 ]; then
	[ -n "$BOINC_SRC" ] || { echo "run.sh: set BOINC_SRC to a checkout of github.com/BOINC/boinc" >&2; usage >&2; exit 2; }
	[ -f "$BOINC_SRC/_autosetup" ] || { echo "run.sh: $BOINC_SRC is not a BOINC source tree (no _autosetup)" >&2; exit 2; }
	BOINC_SRC=$(cd "$BOINC_SRC" && pwd)
fi
case "$ASSIMILATOR" in hook | native) ;; *) echo "run.sh: ASSIMILATOR must be hook or native, not $ASSIMILATOR" >&2; exit 2 ;; esac
case "$KEEP" in 0 | 1) ;; *) echo "run.sh: KEEP must be 0 or 1, not $KEEP" >&2; exit 2 ;; esac
case "$TIMING" in 0 | 1 | only) ;; *) echo "run.sh: TIMING must be 0, 1 or only, not $TIMING" >&2; exit 2 ;; esac
# BOINC's Python tools (make_project, bin/start) run `python` from PATH and
# need Debian's (python-is-python3, with MySQLdb), not a pyenv or venv one.
GO=${GO:-$(command -v go || true)}
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

BUILD=$WORK/boinc-build          # cached between runs
RUN=$WORK/run                    # made afresh by every run, left for inspection
LOGS=$RUN/logs
PROJECT_DIR=$RUN/projects/$PROJECT_NAME
RROOT=$RUN/rboinc                # rboinc's server root
CLIENT_DIR=$RUN/client
SCI=$RUN/scientist
URL_BASE=http://127.0.0.1:$HTTP_PORT/
MASTER_URL=${URL_BASE}$PROJECT_NAME/
GROUP=g1
SCI_USER=scientist

T0=$(date +%s)
declare -A TIMES=()
COEX_FIGURES=()
PIDS_DB="" PID_APACHE="" PID_SERVE="" PID_CLIENT="" GUI_RPC_PASS="" SCI_TOKEN="" DB_USER="" DB_PASS=""

log() { printf '[%s +%4ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - T0))" "$*"; }
stage() { log "== $*"; }
fail() {
	log "FAILED: $*"
	coex_report
	diagnostics || true
	log "FAILED: $* (work dir left in $RUN; see $LOGS)"
	exit 1
}
indent() { sed 's/^/    | /'; }
# coex_report prints what stage 8 measured so far.
coex_report() {
	[ "${#COEX_FIGURES[@]}" -gt 0 ] || return 0
	log "coexistence figures:"
	printf '    - %s\n' "${COEX_FIGURES[@]}"
}
as_owner() { runuser -u "$PROJECT_USER" -- "$@"; }
# secret prints a throwaway random hex string.
secret() { od -An -N"${1:-12}" -tx1 /dev/urandom | tr -d ' \n'; }

# sql runs a query on the project's database (tab-separated, with headers).
sql() { mariadb --no-defaults -S "$RUN/db/mysqld.sock" -uroot "$PROJECT_NAME" -e "$1"; }

# ------------------------------------------------------------- cleanup
cleanup() {
	local rc=$?
	set +e
	trap - EXIT
	trap '' INT TERM HUP
	exec 3>>"$LOGS/cleanup.trace"
	BASH_XTRACEFD=3
	set -x
	if [ "$KEEP" = 1 ]; then
		keep_info "$rc"
		exit "$rc"
	fi
	log "cleaning up (exit status $rc)"
	if [ -n "$PID_CLIENT" ]; then
		client --quit >/dev/null 2>&1
		stop_pid "$PID_CLIENT" boinc-client
	fi
	[ -n "$PID_SERVE" ] && stop_pid "$PID_SERVE" "rboinc-server serve"
	if [ -x "$PROJECT_DIR/bin/stop" ]; then
		(cd "$PROJECT_DIR" && as_owner bin/stop) >>"$LOGS/bin-stop.log" 2>&1
		local f
		for f in "$PROJECT_DIR"/pid_*/*.pid; do
			[ -f "$f" ] && stop_pid "$(cat "$f")" "BOINC daemon $(basename "$f" .pid)"
		done
	fi
	[ -n "$PID_APACHE" ] && stop_pid "$PID_APACHE" apache2
	[ -n "$PIDS_DB" ] && stop_pid "$PIDS_DB" mariadbd
	log "work dir left for inspection: $RUN (logs in $LOGS)"
	exit "$rc"
}

# keep_info prints, for KEEP=1, how to reach what is left running and how
# to stop it.
keep_info() {
	local rc=$1 self
	self=$(cd "$HERE" && pwd)/run.sh
	set +x
	log "KEEP=1: the project keeps running (exit status $rc)"
	cat <<EOF
    BOINC project     $MASTER_URL  (ops pages: ${MASTER_URL%/}_ops/)
                      $PROJECT_DIR (daemon logs in log_*/; bin/status as $PROJECT_USER)
    rboinc server     http://127.0.0.1:$RBOINC_PORT/rboinc_cgi  (root $RROOT, config $RROOT/rboinc.json, log $LOGS/serve.log)
    scientist         . $RUN/scientist.env   (RBOINC_URL, RBOINC_TOKEN, PATH; mode 600), then e.g.
                      cd $SCI && rboinc-retrieve -group $GROUP -status
    database          mariadb --no-defaults -S $RUN/db/mysqld.sock -uroot $PROJECT_NAME
                      (or 127.0.0.1:$DB_PORT as $DB_USER; the password is in $PROJECT_DIR/config.xml)
    volunteer         cd $CLIENT_DIR && boinccmd --host 127.0.0.1:$GUI_RPC_PORT --passwd "\$(cat gui_rpc_auth.cfg)" --get_tasks
EOF
	[ -s "$RUN/submitter.auth" ] && echo "    BOINC submitter   remote job submission as 'submitter': authenticator in $RUN/submitter.auth (mode 600)"
	echo "    logs              $LOGS"
	echo "    stop it all       WORK=$WORK $self --stop"
}

# stop_pid sends TERM to one process we started, waits up to 20 s, then KILLs it.
stop_pid() {
	local pid=$1 what=$2
	kill -0 "$pid" 2>/dev/null || return 0
	kill "$pid" 2>/dev/null
	for _ in $(seq 40); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
		sleep 0.5
	done
	log "$what (pid $pid) ignored TERM; killing it"
	kill -9 "$pid" 2>/dev/null
}

# ---------------------------------------------------------- diagnostics
diagnostics() {
	set +e
	log "---- diagnostics"
	if [ -S "$RUN/db/mysqld.sock" ]; then
		echo "-- workunits"
		sql "select id, name, batch, canonical_resultid, error_mask, assimilate_state, file_delete_state, need_validate, from_unixtime(transition_time) as transition from workunit order by id" 2>&1
		echo "-- results"
		sql "select id, name, workunitid, server_state, outcome, client_state, validate_state, file_delete_state, exit_status, hostid from result order by id" 2>&1
	fi
	if [ -n "$PID_SERVE" ] && [ -x "$RUN/bin/rboinc-retrieve" ]; then
		echo "-- rboinc-retrieve -status"
		sci rboinc-retrieve -group "$GROUP" -status 2>&1
	fi
	if [ -d "$RROOT" ]; then
		echo "-- rboinc-server doctor"
		as_owner "$RUN/bin/rboinc-server" doctor --root "$RROOT" 2>&1
		echo "-- spool"
		ls -la "$RROOT/spool" 2>&1
		[ -f "$RROOT/spool/.last-failure" ] && cat "$RROOT/spool/.last-failure"
	fi
	if [ -d "$PROJECT_DIR" ]; then
		local f
		for f in "$PROJECT_DIR"/log_*/*.log; do
			[ -f "$f" ] || continue
			echo "-- tail $f"
			tail -n 25 "$f"
		done
	fi
	if [ -n "$PID_CLIENT" ]; then
		echo "-- client tasks"
		client --get_tasks 2>&1 | head -n 80
		echo "-- client messages"
		client --get_messages 2>&1 | tail -n 40
	fi
	for f in "$LOGS/serve.log" "$LOGS/apache-error.log"; do
		[ -f "$f" ] && { echo "-- tail $f"; tail -n 25 "$f"; }
	done
	log "---- end of diagnostics"
}

# client runs boinccmd against the volunteer's client.
client() { (cd "$CLIENT_DIR" && boinccmd --host "127.0.0.1:$GUI_RPC_PORT" --passwd "$GUI_RPC_PASS" "$@"); }

# sci runs an rboinc client command as the scientist.
sci() { (cd "$SCI" && env RBOINC_URL="http://127.0.0.1:$RBOINC_PORT/rboinc_cgi" RBOINC_TOKEN="$SCI_TOKEN" PATH="$RUN/bin:$PATH" "$@"); }

# ---------------------------------------------------------- 1. packages
install_packages() {
	stage "1. packages"
	local pkgs=(autoconf automake libtool pkg-config make g++ m4 nlohmann-json3-dev
		libmariadb-dev libmariadb-dev-compat libssl-dev libcurl4-openssl-dev zlib1g-dev libzip-dev
		python3 python-is-python3 python3-mysqldb python3-requests mariadb-server mariadb-client
		apache2 php-cli php-mysql php-xml libapache2-mod-php
		boinc-client curl procps util-linux)
	local missing=() p
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		log "all packages present"
	elif [ "$SKIP_APT" = 1 ]; then
		fail "missing packages and SKIP_APT=1: ${missing[*]}"
	else
		log "installing: ${missing[*]}"
		apt-get update >>"$LOGS/apt.log" 2>&1 || fail "apt-get update (see $LOGS/apt.log)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >>"$LOGS/apt.log" 2>&1 ||
			fail "apt-get install (see $LOGS/apt.log)"
	fi
	[ -n "$GO" ] || fail "go is not on PATH (rboinc needs Go 1.26; or set GO)"
	id "$PROJECT_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$PROJECT_USER"
}

# ------------------------------------------------------------- 2. build
build_boinc() {
	stage "2. BOINC server build (cached in $BUILD)"
	local rev t
	rev=$(git -C "$BOINC_SRC" rev-parse HEAD 2>/dev/null || echo "tree:$BOINC_SRC")
	# TIMING=only needs a part of the server build (no scheduler, no
	# volunteer): cached apart from a whole one.
	[ "$TIMING" = only ] && rev="$rev timing"
	if [ -f "$BUILD/.rboinc-built" ] && [ "$(cat "$BUILD/.rboinc-built")" = "$rev" ]; then
		log "cached build of $rev"
		TIMES[build]=cached
	else
		t=$(date +%s)
		rm -rf "$BUILD"
		mkdir -p "$BUILD"
		(cd "$BOINC_SRC" && tar --exclude=.git -cf - .) | tar -x -C "$BUILD"
		log "building $rev (log: $WORK/boinc-build.log)"
		(cd "$BUILD" && ./_autosetup && ./configure --disable-client --disable-manager) >"$WORK/boinc-build.log" 2>&1 ||
			{ tail -n 30 "$WORK/boinc-build.log"; fail "configuring BOINC (see $WORK/boinc-build.log)"; }
		# A parallel make races with itself in lib/: lib/Makefile links
		# parse_test against ../lib/.libs/libboinc.a without depending on it,
		# and api/ builds ../lib/libboinc.la while lib/ does (each object
		# compiled twice at once: "is not a valid libtool object", "ar: unable
		# to copy file"). A second make, one job at a time, finishes the build.
		if [ "$TIMING" = only ]; then
			build_boinc_timing
		elif ! (cd "$BUILD" && make -j"$JOBS") >>"$WORK/boinc-build.log" 2>&1; then
			log "make -j$JOBS failed ($(grep -m1 -E 'cannot find|error:' "$WORK/boinc-build.log" || true)); running make again, one job at a time"
			(cd "$BUILD" && make -j1) >>"$WORK/boinc-build.log" 2>&1 ||
				{ tail -n 30 "$WORK/boinc-build.log"; fail "building BOINC (see $WORK/boinc-build.log)"; }
		fi
		echo "$rev" >"$BUILD/.rboinc-built"
		TIMES[build]=$(($(date +%s) - t))s
		log "built in ${TIMES[build]}"
	fi
	chmod -R a+rX "$BUILD"
	# The application: one chain step (app/rbstep.cpp) against BOINC's API.
	mkdir -p "$RUN/app"
	g++ -O2 -o "$RUN/app/$APP_NAME" "$HERE/app/rbstep.cpp" \
		-I"$BUILD" -I"$BUILD/api" -I"$BUILD/lib" "$BUILD/api/libboinc_api.a" "$BUILD/lib/libboinc.a" -pthread \
		>"$LOGS/app-build.log" 2>&1 || fail "building the application (see $LOGS/app-build.log)"
}

# build_boinc_timing builds what TIMING=only uses: the libraries (and the
# application's API), the daemons bin/start runs, create_work and the tools
# make_project and update_versions call. A directory's libraries first, on
# their own: its programs name them as ../lib/libboinc.la, a target of its
# own that runs another make, so that make -j compiled every object of
# libboinc twice at once; make -j1 again when -j fails. Static libraries
# only (libtool's --tag=disable-shared): every object compiled once, not
# twice (PIC and not); the programs link BOINC's libraries statically.
build_boinc_timing() {
	local d targets
	for d in "lib:libboinc.la libboinc_crypt.la" "lib:" "api:" "sched:libsched.la" \
		"sched:feeder transitioner file_deleter sample_trivial_validator script_assimilator" \
		"tools:create_work dir_hier_path sign_executable"; do
		targets=${d#*:}
		d=${d%%:*}
		# shellcheck disable=SC2086 # the targets are words
		(cd "$BUILD/$d" && { make -j"$JOBS" LIBTOOLFLAGS=--tag=disable-shared $targets ||
			make -j1 LIBTOOLFLAGS=--tag=disable-shared $targets; }) >>"$WORK/boinc-build.log" 2>&1 ||
			{ tail -n 30 "$WORK/boinc-build.log"; fail "building BOINC's $d/ (see $WORK/boinc-build.log)"; }
	done
}

# ------------------------------------------------------------ 3a. database
start_db() {
	stage "3. MariaDB on 127.0.0.1:$DB_PORT (datadir $RUN/db/data)"
	mkdir -p "$RUN/db/data"
	chown -R "$PROJECT_USER:" "$RUN/db"
	mariadb-install-db --no-defaults --user="$PROJECT_USER" --datadir="$RUN/db/data" \
		--auth-root-authentication-method=socket --skip-test-db >"$LOGS/mariadb-install.log" 2>&1 ||
		fail "mariadb-install-db (see $LOGS/mariadb-install.log)"
	setsid mariadbd --no-defaults --user="$PROJECT_USER" --datadir="$RUN/db/data" \
		--socket="$RUN/db/mysqld.sock" --pid-file="$RUN/db/mysqld.pid" \
		--port="$DB_PORT" --bind-address=127.0.0.1 --skip-name-resolve \
		--log-error="$LOGS/mariadb.err" >"$LOGS/mariadb.out" 2>&1 &
	PIDS_DB=$!
	echo "$PIDS_DB" >"$RUN/pids/mariadbd"
		for _ in $(seq 60); do
		mariadb-admin --no-defaults -S "$RUN/db/mysqld.sock" -uroot ping >/dev/null 2>&1 && break
		kill -0 "$PIDS_DB" 2>/dev/null || fail "mariadbd exited (see $LOGS/mariadb.err)"
		sleep 0.5
	done
	mariadb-admin --no-defaults -S "$RUN/db/mysqld.sock" -uroot ping >/dev/null 2>&1 || fail "mariadbd did not answer in 30 s"
	DB_USER=$PROJECT_USER
	DB_PASS=$(secret 12)
	mariadb --no-defaults -S "$RUN/db/mysqld.sock" -uroot -e "
		CREATE USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
		GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'127.0.0.1' WITH GRANT OPTION;" ||
		fail "creating the database user"
	log "mariadbd pid $PIDS_DB, user $DB_USER"
}

# -------------------------------------------------------- 3b. the project
# config_edit edits the project's config.xml: `config_edit set TAG VALUE`
# sets <config><TAG>; `config_edit daemon XML` adds a <daemon> element.
config_edit() {
	python3 - "$PROJECT_DIR/config.xml" "$@" <<'PY'
import re, sys
path, op, *args = sys.argv[1:]
text = open(path).read()
if op == "set":
    tag, value = args
    new = "<%s>%s</%s>" % (tag, value, tag)
    pat = re.compile(r"<%s>.*?</%s>|<%s/>" % (tag, tag, tag), re.S)
    m = pat.search(text)
    text = text[:m.start()] + new + text[m.end():] if m else text.replace("<config>", "<config>\n    " + new, 1)
elif op == "daemon":
    if args[0] not in text:
        text = text.replace("</daemons>", "    " + args[0] + "\n    </daemons>", 1)
else:
    sys.exit("config_edit: unknown operation " + op)
open(path + ".new", "w").write(text)
PY
	mv "$PROJECT_DIR/config.xml.new" "$PROJECT_DIR/config.xml"
	chown "$PROJECT_USER:" "$PROJECT_DIR/config.xml"
}

make_project() {
	stage "3. make_project $PROJECT_NAME at $PROJECT_DIR (url_base $URL_BASE)"
	mkdir -p "$RUN/projects"
	chown "$PROJECT_USER:" "$RUN/projects"
	(cd "$BUILD/tools" && as_owner ./make_project --srcdir "$BUILD" --url_base "$URL_BASE" \
		--db_host "127.0.0.1:$DB_PORT" --db_user "$DB_USER" --db_passwd "$DB_PASS" \
		--project_root "$PROJECT_DIR" --no_query --delete_prev_inst --drop_db_first \
		"$PROJECT_NAME" "rboinc real-BOINC test") >"$LOGS/make_project.log" 2>&1 ||
		fail "make_project (see $LOGS/make_project.log)"
	tail -n 3 "$LOGS/make_project.log"
	HOST_SHORT=$(python3 -c 'import socket; print(socket.gethostname().split(".")[0])')
	config_edit set host "$HOST_SHORT"
	config_edit daemon "<daemon><cmd>sample_trivial_validator -d 3 --app $APP_NAME</cmd></daemon>"

	# The application and its version.
	python3 - "$PROJECT_DIR/project.xml" "$APP_NAME" <<'PY'
import sys
path, app = sys.argv[1:]
text = open(path).read()
if "<name>%s</name>" % app not in text:
    text = text.replace("</boinc>", "    <app>\n        <name>%s</name>\n        <user_friendly_name>rboinc chain step</user_friendly_name>\n    </app>\n</boinc>" % app, 1)
open(path, "w").write(text)
PY
	(cd "$PROJECT_DIR" && as_owner bin/xadd) >"$LOGS/xadd.log" 2>&1 || fail "bin/xadd (see $LOGS/xadd.log)"
	local platform=x86_64-pc-linux-gnu vdir
	vdir=$PROJECT_DIR/apps/$APP_NAME/1.0/$platform
	mkdir -p "$vdir"
	cp "$RUN/app/$APP_NAME" "$vdir/${APP_NAME}_1.0_$platform"
	chown -R "$PROJECT_USER:" "$PROJECT_DIR/apps"
	(cd "$PROJECT_DIR" && as_owner bin/update_versions --noconfirm) >"$LOGS/update_versions.log" 2>&1 ||
		fail "bin/update_versions (see $LOGS/update_versions.log)"
	grep -i "added\|error" "$LOGS/update_versions.log" | head -n 3

	# The rboinc queue: annotated templates (rboinc strips the annotations
	# before create_work sees them).
	cat >"$PROJECT_DIR/templates/rboinc_${QUEUE}_wu" <<EOF
<rboinc application="$APP_NAME" description="One step of a test chain: appends a line to the state"/>
<file_info>
    <number>0</number>
</file_info>
<file_info>
    <number>1</number>
</file_info>
<workunit>
    <file_ref>
        <file_number>0</file_number>
        <open_name>in</open_name>
        <copy_file/>
        <rboinc parameter_name="state_file" parameter_description="The chain's state: lines of text"/>
    </file_ref>
    <file_ref>
        <file_number>1</file_number>
        <open_name>conf</open_name>
        <rboinc parameter_name="conf_file" parameter_description="One line, copied into each step line" optional="true"/>
    </file_ref>
    <rsc_fpops_est>1e9</rsc_fpops_est>
    <rsc_fpops_bound>1e12</rsc_fpops_bound>
    <rsc_memory_bound>1e8</rsc_memory_bound>
    <rsc_disk_bound>1e8</rsc_disk_bound>
    <delay_bound>3600</delay_bound>
</workunit>
EOF
	cat >"$PROJECT_DIR/templates/rboinc_${QUEUE}_result" <<'EOF'
<file_info>
    <name><OUTFILE_0/></name>
    <generated_locally/>
    <upload_when_present/>
    <max_nbytes>1000000</max_nbytes>
    <url><UPLOAD_URL/></url>
    <rboinc aliases=".state" chain="0"/>
</file_info>
<file_info>
    <name><OUTFILE_1/></name>
    <generated_locally/>
    <upload_when_present/>
    <max_nbytes>1000000</max_nbytes>
    <url><UPLOAD_URL/></url>
    <rboinc aliases=".log"/>
</file_info>
<result>
    <file_ref>
        <file_name><OUTFILE_0/></file_name>
        <open_name>out</open_name>
        <copy_file/>
    </file_ref>
    <file_ref>
        <file_name><OUTFILE_1/></file_name>
        <open_name>log</open_name>
    </file_ref>
</result>
EOF
	chown "$PROJECT_USER:" "$PROJECT_DIR"/templates/rboinc_*
}

# --------------------------------------------------------- 3c. Apache
start_apache() {
	stage "3. Apache on 127.0.0.1:$HTTP_PORT"
	local conf=$RUN/apache/httpd.conf php_so m
	mkdir -p "$RUN/apache"
	php_so=$(find /usr/lib/apache2/modules -name 'libphp*.so' | head -n 1)
	[ -n "$php_so" ] || fail "no PHP module for Apache (libapache2-mod-php)"
	{
		echo "ServerRoot /etc/apache2"
		echo "ServerName 127.0.0.1"
		echo "Listen 127.0.0.1:$HTTP_PORT"
		echo "PidFile $RUN/apache/httpd.pid"
		echo "Mutex file:$RUN/apache default"
		echo "User $PROJECT_USER"
		echo "Group $(id -gn "$PROJECT_USER")"
		for m in mpm_prefork authz_core authz_host access_compat authn_core auth_basic authz_user \
			mime dir alias cgi env headers rewrite setenvif; do
			echo "LoadModule ${m}_module /usr/lib/apache2/modules/mod_$m.so"
		done
		echo "LoadModule php_module $php_so"
		echo "TypesConfig /etc/mime.types"
		echo "DirectoryIndex index.php index.html"
		echo "ErrorLog $LOGS/apache-error.log"
		echo "LogLevel info"
		echo "LogFormat \"%h %t \\\"%r\\\" %>s %b %D\" short"
		echo "CustomLog $LOGS/apache-access.log short"
		echo "<FilesMatch \"\\.php\$\">"
		echo "    SetHandler application/x-httpd-php"
		echo "</FilesMatch>"
		echo "<Directory />"
		echo "    AllowOverride None"
		echo "    Require all denied"
		echo "</Directory>"
		echo "Include $PROJECT_DIR/$PROJECT_NAME.httpd.conf"
	} >"$conf"
	apache2 -f "$conf" -t >"$LOGS/apache-configtest.log" 2>&1 || { cat "$LOGS/apache-configtest.log"; fail "Apache's configuration"; }
	# Its own session: Apache stopping kills its whole process group, which
	# would otherwise be this script's.
	setsid apache2 -f "$conf" -DFOREGROUND >>"$LOGS/apache.out" 2>&1 &
	PID_APACHE=$!
	echo "$PID_APACHE" >"$RUN/pids/apache2"
		for _ in $(seq 40); do
		curl -fsS -o /dev/null "$MASTER_URL" 2>/dev/null && break
		kill -0 "$PID_APACHE" 2>/dev/null || fail "apache2 exited (see $LOGS/apache-error.log)"
		sleep 0.5
	done
	curl -fsS "$MASTER_URL" >"$LOGS/master-page.html" 2>&1 || fail "GET $MASTER_URL failed (see $LOGS/apache-error.log)"
	grep -q 'boinc_scheduler' "$LOGS/master-page.html" || fail "the master page names no scheduler (see $LOGS/master-page.html)"
	log "apache2 pid $PID_APACHE; master page names $(grep -o 'href="[^"]*cgi"' "$LOGS/master-page.html" | head -n 1)"
}

# ------------------------------------------------------------ 4. rboinc
build_rboinc() {
	stage "2. rboinc: go build ./cmd/... in $REPO"
	mkdir -p "$RUN/bin"
	(cd "$REPO" && "$GO" build -o "$RUN/bin/" ./cmd/...) >"$LOGS/go-build.log" 2>&1 || fail "go build (see $LOGS/go-build.log)"
	# Stage 9's program, from this directory (it is part of the test).
	(cd "$HERE/fidelity" && "$GO" build -o "$RUN/bin/fidelity" .) >>"$LOGS/go-build.log" 2>&1 || fail "go build of $HERE/fidelity (see $LOGS/go-build.log)"
	# Stage 10's program, from this directory too.
	(cd "$HERE/cwtime" && "$GO" build -o "$RUN/bin/cwtime" .) >>"$LOGS/go-build.log" 2>&1 || fail "go build of $HERE/cwtime (see $LOGS/go-build.log)"
	chmod -R a+rX "$RUN/bin"
	if [ "$ASSIMILATOR" = native ] && ! "$RUN/bin/rboinc-server" assimilator --help >"$LOGS/assimilator-help.log" 2>&1; then
		log "SKIP: ASSIMILATOR=native, but this rboinc has no \`rboinc-server assimilator\` command:"
		indent <"$LOGS/assimilator-help.log"
		exit 77
	fi
}

install_rboinc() {
	stage "4. rboinc: init (ASSIMILATOR=$ASSIMILATOR)"
	local initargs=(--root "$RROOT" --boinc-project "$PROJECT_DIR" --url "http://127.0.0.1:$RBOINC_PORT")
	[ "$ASSIMILATOR" = native ] && initargs+=(--assimilator native)
	mkdir -p "$RROOT"
	chown "$PROJECT_USER:" "$RROOT"
	(cd "$RUN" && as_owner "$RUN/bin/rboinc-server" init "${initargs[@]}") >"$LOGS/rboinc-init.log" 2>&1 ||
		{ cat "$LOGS/rboinc-init.log"; fail "rboinc-server init"; }
	indent <"$LOGS/rboinc-init.log"
	local lines
	lines=$(grep -o '<daemon>.*</daemon>' "$LOGS/rboinc-init.log" || true)
	[ -n "$lines" ] || fail "rboinc-server init printed no <daemon> line"
	while IFS= read -r l; do
		log "adding to config.xml: $l"
		config_edit daemon "$l"
	done <<<"$lines"
	# Fewer tries of a failing step than rboinc's default, to keep the run short.
	python3 - "$RROOT/rboinc.json" "$MAX_ERROR_RESULTS" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
cfg = json.load(open(path))
cfg["max_error_results"] = n
cfg["max_total_results"] = max(cfg.get("max_total_results", 0), n + 1)
open(path, "w").write(json.dumps(cfg, indent=2) + "\n")
PY
	# The optional input's server default, shared by every chain that gives none.
	mkdir -p "$RROOT/etc/$QUEUE"
	echo "default-param" >"$RROOT/etc/$QUEUE/default_conf_file"
	chown -R "$PROJECT_USER:" "$RROOT/etc"
}

start_project() {
	stage "4. bin/start"
	(cd "$PROJECT_DIR" && as_owner bin/start) >"$LOGS/bin-start.log" 2>&1 || { cat "$LOGS/bin-start.log"; fail "bin/start"; }
	sleep 3
	(cd "$PROJECT_DIR" && as_owner bin/status) >"$LOGS/bin-status.log" 2>&1 || true
	indent <"$LOGS/bin-status.log"
}

# launch_serve starts `rboinc-server serve` and waits until it listens.
launch_serve() {
	rm -f "$RUN/serve.addr"
	(cd "$RUN" && exec setsid runuser -u "$PROJECT_USER" -- "$RUN/bin/rboinc-server" serve --root "$RROOT" \
		--listen "127.0.0.1:$RBOINC_PORT" --addr-file "$RUN/serve.addr") >>"$LOGS/serve.log" 2>&1 &
	PID_SERVE=$!
	echo "$PID_SERVE" >"$RUN/pids/serve"
	for _ in $(seq 100); do
		[ -s "$RUN/serve.addr" ] && break
		kill -0 "$PID_SERVE" 2>/dev/null || fail "rboinc-server serve exited (see $LOGS/serve.log)"
		sleep 0.1
	done
	[ -s "$RUN/serve.addr" ] || fail "rboinc-server serve did not start (see $LOGS/serve.log)"
}

start_serve() {
	stage "4. rboinc-server serve on 127.0.0.1:$RBOINC_PORT"
	: >"$LOGS/serve.log"
	launch_serve
	SCI_TOKEN=$(cd "$RUN" && as_owner "$RUN/bin/rboinc-server" user add --root "$RROOT" "$SCI_USER")
	(
		umask 077
		printf 'export RBOINC_URL=%q\nexport RBOINC_TOKEN=%q\nexport PATH=%q\n' \
			"http://127.0.0.1:$RBOINC_PORT/rboinc_cgi" "$SCI_TOKEN" "$RUN/bin:$PATH" >"$RUN/scientist.env"
	)
	log "serve pid $PID_SERVE; user $SCI_USER added"
}

# ---------------------------------------------------------- 4b. volunteer
start_client() {
	stage "4. the volunteer: boinc-client in $CLIENT_DIR, GUI RPC port $GUI_RPC_PORT"
	mkdir -p "$CLIENT_DIR"
	GUI_RPC_PASS=$(secret 8)
	printf '%s\n' "$GUI_RPC_PASS" >"$CLIENT_DIR/gui_rpc_auth.cfg"
	cat >"$CLIENT_DIR/cc_config.xml" <<'EOF'
<cc_config>
    <log_flags>
        <task>1</task>
        <file_xfer>1</file_xfer>
        <sched_ops>1</sched_ops>
        <sched_op_debug>1</sched_op_debug>
    </log_flags>
    <options>
        <report_results_immediately>1</report_results_immediately>
    </options>
</cc_config>
EOF
	cat >"$CLIENT_DIR/global_prefs_override.xml" <<'EOF'
<global_preferences>
    <run_if_user_active>1</run_if_user_active>
    <run_gpu_if_user_active>1</run_gpu_if_user_active>
    <idle_time_to_run>0</idle_time_to_run>
    <suspend_cpu_usage>0</suspend_cpu_usage>
    <cpu_usage_limit>100</cpu_usage_limit>
    <max_ncpus_pct>100</max_ncpus_pct>
    <work_buf_min_days>0.01</work_buf_min_days>
    <work_buf_additional_days>0.01</work_buf_additional_days>
    <disk_max_used_pct>90</disk_max_used_pct>
    <disk_min_free_gb>0.1</disk_min_free_gb>
</global_preferences>
EOF
	chown -R "$PROJECT_USER:" "$CLIENT_DIR"
	(cd "$CLIENT_DIR" && exec setsid runuser -u "$PROJECT_USER" -- boinc --dir "$CLIENT_DIR" --gui_rpc_port "$GUI_RPC_PORT" \
		--allow_multiple_clients --skip_cpu_benchmarks --no_info_fetch --no_gpus --no_priority_change \
		--sched_retry_delay_min 5 --sched_retry_delay_max 30 --pers_retry_delay_min 5 --pers_retry_delay_max 30) \
		>"$LOGS/client.log" 2>&1 &
	PID_CLIENT=$!
	echo "$PID_CLIENT" >"$RUN/pids/client"
	local out key
	for _ in $(seq 60); do
		client --get_state >/dev/null 2>&1 && break
		kill -0 "$PID_CLIENT" 2>/dev/null || fail "the boinc client exited (see $LOGS/client.log)"
		sleep 0.5
	done
	out=$(client --create_account "$MASTER_URL" volunteer@example.invalid "$(secret 8)" volunteer 2>&1) ||
		fail "boinccmd --create_account: $out"
	indent <<<"$out"
	key=$(echo "$out" | sed -n 's/^account key: *//p')
	[ -n "$key" ] || fail "no account key from --create_account"
	client --project_attach "$MASTER_URL" "$key" || fail "boinccmd --project_attach"
	log "client pid $PID_CLIENT attached to $MASTER_URL"
}

# ------------------------------------------------------------- 5. chains
# foreign_work makes work units of the application with plain create_work,
# as a project does for work of its own: rboinc's assimilator must let them
# pass (the hook ignores them) and keep advancing the chains.
foreign_work() {
	[ "$FOREIGN_WUS" -gt 0 ] || return 0
	stage "5. $FOREIGN_WUS work unit(s) of $APP_NAME made without rboinc"
	cat >"$PROJECT_DIR/templates/${APP_NAME}_foreign_in" <<'EOF'
<file_info>
    <number>0</number>
</file_info>
<workunit>
    <file_ref>
        <file_number>0</file_number>
        <open_name>in</open_name>
        <copy_file/>
    </file_ref>
    <rsc_fpops_est>1e9</rsc_fpops_est>
    <delay_bound>3600</delay_bound>
</workunit>
EOF
	sed 's/<rboinc [^>]*\/>//' "$PROJECT_DIR/templates/rboinc_${QUEUE}_result" >"$PROJECT_DIR/templates/${APP_NAME}_foreign_out"
	chown "$PROJECT_USER:" "$PROJECT_DIR/templates/${APP_NAME}_foreign_"*
	local i path
	for i in $(seq "$FOREIGN_WUS"); do
		path=$(cd "$PROJECT_DIR" && as_owner bin/dir_hier_path "foreign_in_$i") || fail "bin/dir_hier_path"
		echo "foreign $i" >"$path"
		chown "$PROJECT_USER:" "$path"
		(cd "$PROJECT_DIR" && as_owner bin/create_work --appname "$APP_NAME" --wu_name "foreign_$i" \
			--wu_template "templates/${APP_NAME}_foreign_in" --result_template "templates/${APP_NAME}_foreign_out" \
			"foreign_in_$i") 2>&1 | indent
		[ "${PIPESTATUS[0]}" = 0 ] || fail "bin/create_work of foreign_$i"
	done
}

submit() {
	stage "5. submit $CHAINS chains x $STEPS steps, and $FAIL_CHAINS failing at step 2 (queue $QUEUE, group $GROUP)"
	mkdir -p "$SCI/in"
	: >"$SCI/in/jobs.txt"
	local c name
	for c in $(seq "$CHAINS"); do
		name=chain$c
		echo "chain $name" >"$SCI/in/$name.state"
		if [ $((c % 2)) -eq 0 ]; then # every other chain brings its own parameter
			echo "param-$name" >"$SCI/in/$name.conf"
			echo "$name -state_file $name.state -conf_file $name.conf" >>"$SCI/in/jobs.txt"
		else
			echo "$name -state_file $name.state" >>"$SCI/in/jobs.txt"
		fi
	done
	for c in $(seq "$FAIL_CHAINS"); do
		name=failchain$c
		printf 'chain %s\nfail-at 2\n' "$name" >"$SCI/in/$name.state"
		echo "$name -state_file $name.state" >>"$SCI/in/jobs.txt"
	done
	sci rboinc-submit -app_name "$QUEUE" -help_parameters 2>&1 | indent
	SUBMIT_T=$(date +%s)
	sci rboinc-submit -app_name "$QUEUE" -group "$GROUP" -num_steps "$STEPS" -jobs in/jobs.txt 2>&1 |
		tee "$LOGS/submit.log" | indent
	[ "${PIPESTATUS[0]}" = 0 ] || fail "rboinc-submit"
}

wait_chains() {
	stage "5. waiting for the chains (timeout ${TIMEOUT}s)"
	local deadline=$(($(date +%s) + TIMEOUT)) last="" st now ndone nfailed nbad last_poke=0 last_cron first_done=""
	last_cron=$(date +%s)
	while :; do
		now=$(date +%s)
		st=$(sci rboinc-retrieve -group "$GROUP" -status 2>&1) || true
		if [ "$st" != "$last" ]; then
			log "status:"
			indent <<<"$st"
			last=$st
		fi
		ndone=$(echo "$st" | awk -F'\t' '$1 ~ /^chain/ && $3 == "done"' | wc -l)
		nfailed=$(echo "$st" | awk -F'\t' '$1 ~ /^failchain/ && $3 == "failed"' | wc -l)
		nbad=$(echo "$st" | awk -F'\t' '($1 ~ /^chain/ && $3 ~ /fail|stop|attention/) || ($1 ~ /^failchain/ && $3 == "done") || $5 ~ /attention/' | wc -l)
		if [ -z "${TIMES[first_step]:-}" ] && echo "$st" | awk -F'\t' '$2 > 0 {f = 1} END {exit !f}'; then
			TIMES[first_step]=$((now - SUBMIT_T))s
		fi
		if [ -z "$first_done" ] && [ "$ndone" -gt 0 ]; then
			first_done=$((now - SUBMIT_T))
			TIMES[first_chain]=${first_done}s
		fi
		[ "$ndone" -eq "$CHAINS" ] && [ "$nfailed" -eq "$FAIL_CHAINS" ] && break
		[ "$nbad" -gt 0 ] && fail "a chain ended wrong (see the status above)"
		[ "$now" -ge "$deadline" ] && fail "timeout: the chains were not done after ${TIMEOUT}s"
		check_daemons
		# The client backs off when told "no work"; nudge it as a volunteer would.
		if [ $((now - last_poke)) -ge 20 ]; then
			client --project "$MASTER_URL" update >/dev/null 2>&1 || true
			last_poke=$now
		fi
		if [ "$CRON_EVERY" -gt 0 ] && [ $((now - last_cron)) -ge "$CRON_EVERY" ]; then
			(cd "$PROJECT_DIR" && as_owner bin/start --cron) >>"$LOGS/bin-start-cron.log" 2>&1 || true
			last_cron=$now
		fi
		sleep 5
	done
	TIMES[all_chains]=$(($(date +%s) - SUBMIT_T))s
	log "all chains settled ($CHAINS done, $FAIL_CHAINS failed) in ${TIMES[all_chains]} (first step after ${TIMES[first_step]}, first chain after ${TIMES[first_chain]})"
}

# check_daemons reports (once per death) a BOINC daemon of the project that
# is no longer running: a failing hook makes script_assimilator exit.
declare -A DEAD_SEEN=()
DAEMON_DEATHS=0
DOCTOR_PROBLEMS=0
check_daemons() {
	local f pid name
	for f in "$PROJECT_DIR"/pid_*/*.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f" 2>/dev/null) || continue
		name=$(basename "$f" .pid)
		if ! kill -0 "$pid" 2>/dev/null && [ -z "${DEAD_SEEN[$name:$pid]:-}" ]; then
			DEAD_SEEN[$name:$pid]=1
			DAEMON_DEATHS=$((DAEMON_DEATHS + 1))
			log "WARNING: BOINC daemon $name (pid $pid) is not running; its log ends:"
			tail -n 15 "$PROJECT_DIR"/log_*/"$name".log 2>/dev/null | indent
		fi
	done
}

retrieve_and_check() {
	stage "6. retrieve and check"
	mkdir -p "$SCI/results"
	sci rboinc-retrieve -group "$GROUP" -into results 2>&1 | tee "$LOGS/retrieve.log" | indent
	[ "${PIPESTATUS[0]}" = 0 ] || fail "rboinc-retrieve"
	find "$SCI/results" -maxdepth 1 -type f -printf '%f %s\n' | sort | indent
	local c s name param f want bad=0 n
	for c in $(seq "$CHAINS"); do
		name=chain$c
		param=default-param
		[ $((c % 2)) -eq 0 ] && param=param-$name
		want="chain $name"
		for s in $(seq 0 $((STEPS - 1))); do
			want=$(printf '%s\nstep %d %s' "$want" $((s + 1)) "$param")
			n=$(find "$SCI/results" -maxdepth 1 -regextype posix-extended \
				-iregex ".*/$name-${SCI_USER}_$GROUP-$s-$STEPS-RND[0-9]+_0\.state" | wc -l)
			f=$(find "$SCI/results" -maxdepth 1 -regextype posix-extended \
				-iregex ".*/$name-${SCI_USER}_$GROUP-$s-$STEPS-RND[0-9]+_0\.state" | head -n 1)
			if [ "$n" != 1 ]; then
				log "MISSING: $name step $s: $n state files"
				bad=$((bad + 1))
				continue
			fi
			if [ "$(cat "$f")" != "$want" ]; then
				log "WRONG: $f holds:"
				indent <"$f"
				log "  expected:"
				indent <<<"$want"
				bad=$((bad + 1))
			fi
			if ! grep -qx "rbstep: wrote step $((s + 1))" "${f%_0.state}_1.log" 2>/dev/null; then
				log "MISSING or WRONG: ${f%_0.state}_1.log"
				bad=$((bad + 1))
			fi
		done
	done
	# The failing chains: step 0 came back, step 1 failed in BOINC, nothing after.
	for c in $(seq "$FAIL_CHAINS"); do
		name=failchain$c
		want=$(printf 'chain %s\nfail-at 2\nstep 1 default-param' "$name")
		f=$(find "$SCI/results" -maxdepth 1 -regextype posix-extended \
			-iregex ".*/$name-${SCI_USER}_$GROUP-0-$STEPS-RND[0-9]+_0\.state" | head -n 1)
		if [ -z "$f" ] || [ "$(cat "$f")" != "$want" ]; then
			log "MISSING or WRONG: $name step 0 (${f:-no file})"
			bad=$((bad + 1))
		fi
		n=$(find "$SCI/results" -maxdepth 1 -name "$name-*" | wc -l)
		[ "$n" = 2 ] || { log "WRONG: $n files of $name, want 2 (step 0's state and log)"; bad=$((bad + 1)); }
	done
	local st
	st=$(sci rboinc-retrieve -group "$GROUP" -status 2>&1)
	indent <<<"$st"
	n=$(echo "$st" | awk -F'\t' -v steps="$STEPS" '$1 ~ /^chain/ && $2 == steps && $3 == "done" && $4 == steps' | wc -l)
	[ "$n" = "$CHAINS" ] || { log "WRONG: $n of $CHAINS chains report $STEPS/$STEPS done"; bad=$((bad + 1)); }
	n=$(echo "$st" | awk -F'\t' -v steps="$STEPS" '$1 ~ /^failchain/ && $2 == 1 && $3 == "failed" && $4 == steps && $5 ~ /error mask/' | wc -l)
	[ "$n" = "$FAIL_CHAINS" ] || { log "WRONG: $n of $FAIL_CHAINS failing chains report 1/$STEPS failed with BOINC's error mask"; bad=$((bad + 1)); }
	if [ "$FOREIGN_WUS" -gt 0 ]; then
		n=$(sql "select count(*) from workunit where name like 'foreign\_%' and assimilate_state = 2" 2>&1 | tail -n 1)
		[ "$n" = "$FOREIGN_WUS" ] || { log "WRONG: $n of $FOREIGN_WUS foreign work units assimilated"; bad=$((bad + 1)); }
	fi
	if compgen -G "$RROOT/spool/.unplaced-*" >/dev/null || compgen -G "$RROOT/spool/.bad-*" >/dev/null; then
		log "WRONG: hook calls set aside in $RROOT/spool:"
		find "$RROOT/spool" -maxdepth 1 -printf "%M %u %s %f\n" | indent
		bad=$((bad + 1))
	fi
	log "BOINC's work units and results at the end:"
	sql "select id, name, canonical_resultid, error_mask, assimilate_state from workunit order by id" 2>&1 | indent
	sql "select id, name, server_state, outcome, client_state, validate_state, exit_status from result order by id" 2>&1 | indent
	log "rboinc-server doctor --url (a real upload through the running server):"
	if ! (cd "$RUN" && as_owner "$RUN/bin/rboinc-server" doctor --root "$RROOT" --url "http://127.0.0.1:$RBOINC_PORT/rboinc_cgi") >"$LOGS/doctor.log" 2>&1; then
		indent <"$LOGS/doctor.log"
		log "WARNING: rboinc-server doctor reported problems (above)"
		DOCTOR_PROBLEMS=1
	else
		grep -v '^ok:' "$LOGS/doctor.log" | indent
	fi
	[ "$bad" = 0 ] || fail "$bad problems in the retrieved results"
	log "every step's output arrived and is right; all $CHAINS chains are done"
}

# ------------------------------------------------------------ 7. control
# sqlv prints the value(s) of a query, without headers.
sqlv() { mariadb --no-defaults -S "$RUN/db/mysqld.sock" -uroot "$PROJECT_NAME" -N -B -e "$1"; }

# wait_sql waits at most $2 seconds until query $1 prints $3.
wait_sql() {
	local q=$1 secs=$2 want=$3 got=""
	for _ in $(seq "$secs"); do
		got=$(sqlv "$q" 2>&1) && [ "$got" = "$want" ] && return 0
		sleep 1
	done
	log "waited ${secs}s for [$q] to print $want; it prints: $got"
	return 1
}

# wait_sql_poking is wait_sql while work is to be computed: the volunteer
# is told to ask for work every 20 s (its client backs off when it got
# none) and BOINC's daemons are checked.
wait_sql_poking() {
	local q=$1 secs=$2 want=$3 got="" start now last_poke=0
	start=$(date +%s)
	while :; do
		got=$(sqlv "$q" 2>&1) && [ "$got" = "$want" ] && return 0
		now=$(date +%s)
		[ $((now - start)) -ge "$secs" ] && break
		if [ $((now - last_poke)) -ge 20 ]; then
			client --project "$MASTER_URL" update >/dev/null 2>&1 || true
			last_poke=$now
		fi
		check_daemons
		sleep 2
	done
	log "waited ${secs}s for [$q] to print $want; it prints: $got"
	return 1
}

# control_work: live control of work units already in BOINC, done by rboinc
# in BOINC's database as BOINC's own tools do it; BOINC's daemons (the
# transitioner, the feeder, the assimilator) must then do the rest. A
# stopped chain's unsent work unit is cancelled (-abort, cancel_jobs' way); a late
# step gets one more replica (target_nresults, transition_time: the
# transitioner makes the result) and a raised priority, then comes back
# right from the volunteer.
control_work() {
	[ "$CONTROL" = 1 ] || return 0
	stage "7. live control through BOINC's database (group $CTL_GROUP): cancel, one more replica, priority"
	local up=${SCI_USER^^} name t0
	local swu="abortme-${up}\\_${CTL_GROUP}-0-2-%" lwu="lateone-${up}\\_${CTL_GROUP}-0-2-%"
	# The volunteer takes no new work meanwhile: both work units stay unsent.
	client --project "$MASTER_URL" nomorework >/dev/null 2>&1 || fail "boinccmd --project $MASTER_URL nomorework"
	mkdir -p "$SCI/ctl"
	: >"$SCI/ctl/jobs.txt"
	for name in abortme lateone; do
		echo "chain $name" >"$SCI/ctl/$name.state"
		echo "$name -state_file $name.state" >>"$SCI/ctl/jobs.txt" # relative to the jobs file
	done
	sci rboinc-submit -app_name "$QUEUE" -group "$CTL_GROUP" -num_steps 2 -jobs ctl/jobs.txt 2>&1 | indent
	[ "${PIPESTATUS[0]}" = 0 ] || fail "rboinc-submit of group $CTL_GROUP"
	local target prio
	for w in "$swu" "$lwu"; do
		wait_sql "select count(*) > 0 from workunit where name like '$w'" 60 1 || fail "no work unit $w in BOINC"
		target=$(sqlv "select target_nresults from workunit where name like '$w'")
		wait_sql "select count(*) from result r join workunit w on w.id = r.workunitid where w.name like '$w' and r.server_state = 2" 120 "$target" ||
			fail "BOINC's transitioner made no unsent results for $w"
	done
	target=$(sqlv "select target_nresults from workunit where name like '$lwu'")
	prio=$(sqlv "select priority from workunit where name like '$lwu'")
	log "both work units unsent in BOINC; the late one: target_nresults $target, priority $prio"

	# Cancel: -abort stops the chain and cancels its work unit in BOINC.
	sci rboinc-retrieve -group "$CTL_GROUP" -name abortme -abort -yes 2>&1 | tee "$LOGS/ctl-abort.log" | indent
	[ "${PIPESTATUS[0]}" = 0 ] || fail "rboinc-retrieve -abort"
	grep -qE "1 work unit(\(s\))? cancelled in BOINC" "$LOGS/ctl-abort.log" || fail "-abort cancelled no work unit in BOINC"
	wait_sql "select error_mask & 16 from workunit where name like '$swu'" 5 16 || fail "the stopped chain's work unit lacks error_mask bit 16 (cancelled)"
	wait_sql "select count(*) from result r join workunit w on w.id = r.workunitid where w.name like '$swu' and not (r.server_state = 5 and r.outcome = 5)" 5 0 ||
		fail "the cancelled work unit's results are not over (5) and not needed (5)"
	t0=$(date +%s)
	wait_sql "select assimilate_state from workunit where name like '$swu'" 180 2 ||
		fail "BOINC's transitioner and the assimilator did not take the cancelled work unit in"
	TIMES[cancel_assimilated]=$(($(date +%s) - t0))s
	log "cancelled: error_mask 16, results over and not needed, assimilated ${TIMES[cancel_assimilated]} later"

	# One more replica and a raised priority for the late step.
	sleep 2
	(cd "$RUN" && as_owner "$RUN/bin/rboinc-server" late --root "$RROOT" --after 1s) 2>&1 | tee "$LOGS/ctl-late.log" | indent
	[ "${PIPESTATUS[0]}" = 0 ] || fail "rboinc-server late"
	grep -qxE "1 late step(\(s\))? given one more replica" "$LOGS/ctl-late.log" || fail "rboinc-server late did not give exactly one step a replica"
	wait_sql "select target_nresults from workunit where name like '$lwu'" 5 $((target + 1)) || fail "target_nresults not raised"
	wait_sql "select priority from workunit where name like '$lwu'" 5 $((prio + 1000)) || fail "the work unit's priority not raised by 1000"
	t0=$(date +%s)
	wait_sql "select count(*) from result r join workunit w on w.id = r.workunitid where w.name like '$lwu'" 120 $((target + 1)) ||
		fail "BOINC's transitioner made no extra result"
	TIMES[replica]=$(($(date +%s) - t0))s
	wait_sql "select count(*) from result r join workunit w on w.id = r.workunitid where w.name like '$lwu' and r.server_state = 2 and r.priority < $((prio + 1000))" 5 0 ||
		fail "unsent results of the late step keep a lower priority"
	log "late step: target_nresults $((target + 1)), priority $((prio + 1000)), the transitioner's extra result ${TIMES[replica]} later"
	sql "select r.id, r.name, r.server_state, r.outcome, r.priority from result r join workunit w on w.id = r.workunitid where w.name like '$lwu' or w.name like '$swu'" 2>&1 | indent

	# The scientist's own command: a new base priority for the late chain
	# (its step 0's work unit gets it, and the results BOINC has not sent).
	local np=$((prio + 3000))
	sci rboinc-retrieve -group "$CTL_GROUP" -name lateone -priority "$np" 2>&1 | tee "$LOGS/ctl-priority.log" | indent
	[ "${PIPESTATUS[0]}" = 0 ] || fail "rboinc-retrieve -priority $np"
	grep -qxE "priority of 1 chain(\(s\))? set to $np; 1 work unit(\(s\))? changed in BOINC" "$LOGS/ctl-priority.log" ||
		fail "rboinc-retrieve -priority changed no work unit in BOINC"
	wait_sql "select priority from workunit where name like '$lwu'" 5 "$np" || fail "the work unit's priority is not $np"
	wait_sql "select count(*) from result r join workunit w on w.id = r.workunitid where w.name like '$lwu' and r.server_state = 2 and r.priority != $np" 5 0 ||
		fail "unsent results of the late step do not have priority $np"
	log "rboinc-retrieve -priority $np: the work unit and its unsent results have it"

	# The volunteer may work again: the late chain must finish right.
	client --project "$MASTER_URL" allowmorework >/dev/null 2>&1 || fail "boinccmd --project $MASTER_URL allowmorework"
	local deadline=$(($(date +%s) + TIMEOUT)) st last_poke=0 now
	t0=$(date +%s)
	while :; do
		now=$(date +%s)
		st=$(sci rboinc-retrieve -group "$CTL_GROUP" -status 2>&1) || true
		echo "$st" | awk -F'\t' '$1 == "lateone" && $3 == "done" {f = 1} END {exit !f}' && break
		echo "$st" | awk -F'\t' '$1 == "lateone" && $3 ~ /fail|stop/ {f = 1} END {exit !f}' && { indent <<<"$st"; fail "the late chain ended wrong"; }
		[ "$now" -ge "$deadline" ] && { indent <<<"$st"; fail "timeout: the late chain was not done after ${TIMEOUT}s"; }
		if [ $((now - last_poke)) -ge 20 ]; then
			client --project "$MASTER_URL" update >/dev/null 2>&1 || true
			last_poke=$now
		fi
		sleep 5
	done
	TIMES[late_chain]=$(($(date +%s) - t0))s
	st=$(sci rboinc-retrieve -group "$CTL_GROUP" -status 2>&1)
	indent <<<"$st"
	echo "$st" | awk -F'\t' '$1 == "abortme" && $3 == "aborted" {f = 1} END {exit !f}' || fail "the aborted chain does not say aborted"
	mkdir -p "$SCI/ctlres"
	sci rboinc-retrieve -group "$CTL_GROUP" -into ctlres 2>&1 | indent
	[ "${PIPESTATUS[0]}" = 0 ] || fail "rboinc-retrieve of group $CTL_GROUP"
	local f want
	want=$(printf 'chain lateone\nstep 1 default-param\nstep 2 default-param')
	f=$(find "$SCI/ctlres" -maxdepth 1 -regextype posix-extended -iregex ".*/lateone-${SCI_USER}_$CTL_GROUP-1-2-RND[0-9]+_0\.state" | head -n 1)
	if [ -z "$f" ] || [ "$(cat "$f")" != "$want" ]; then
		[ -n "$f" ] && indent <"$f"
		fail "the late chain's last state is missing or wrong (${f:-no file})"
	fi
	[ -z "$(find "$SCI/ctlres" -maxdepth 1 -name 'abortme-*')" ] || fail "the aborted chain brought results back"
	sql "select r.id, r.name, r.server_state, r.outcome, r.validate_state, r.hostid from result r join workunit w on w.id = r.workunitid where w.name like '$lwu'" 2>&1 | indent
	log "live control: cancel, replica and priorities done by BOINC as asked; the late chain came back right in ${TIMES[late_chain]}"
}

# ------------------------------------------------------- 8. coexistence
# wu_inputs prints the download names of the input files of rboinc's work
# units (names matching the LIKE pattern $1) that BOINC still holds, one a line.
wu_inputs() {
	sqlv "select xml_doc from workunit where name like '$1' and assimilate_state < 2" |
		grep -o '<name>[^<]*</name>' | sed 's/<[^>]*>//g' | sort -u || true
}

# shared_input prints the download name every one of the $2 work units
# matching $1 refers to (one of them, if several).
shared_input() {
	local x n
	while IFS= read -r x; do
		grep -o '<name>[^<]*</name>' <<<"$x" | sed 's/<[^>]*>//g' | sort -u
	done < <(sqlv "select xml_doc from workunit where name like '$1'") | sort | uniq -c |
		while read -r n x; do if [ "$n" = "$2" ]; then echo "$x"; fi; done | head -n 1 || true
}

# download_path prints where BOINC's download hierarchy keeps name $1.
download_path() { (cd "$PROJECT_DIR" && as_owner bin/dir_hier_path "$1"); }

# missing_inputs prints those of the names on stdin whose file is absent
# from download/ or does not hold the content its .md5 file names.
missing_inputs() {
	local n p want
	while IFS= read -r n; do
		[ -n "$n" ] || continue
		p=$(download_path "$n") || { echo "$n"; continue; }
		if [ ! -f "$p" ]; then
			echo "$n"
			continue
		fi
		want=$(cut -d' ' -f1 "$p.md5" 2>/dev/null || true)
		[ -z "$want" ] || [ "$(md5sum <"$p" | cut -d' ' -f1)" = "$want" ] || echo "$n"
	done
}

# make_submitter makes a BOINC account with remote job submission rights,
# as BOINC's documentation says: an account (create_account.php, the web
# RPC the volunteer's account came from too) and a user_submit row with
# submit_all, what the project's admin page (ops/manage_user.php) writes.
make_submitter() {
	local email=submitter@example.invalid pass hash out auth uid
	pass=$(secret 8)
	hash=$(printf '%s%s' "$pass" "$email" | md5sum | cut -d' ' -f1)
	out=$(curl -fsS -G "${MASTER_URL}create_account.php" --data-urlencode "email_addr=$email" \
		--data-urlencode "passwd_hash=$hash" --data-urlencode "user_name=submitter") ||
		fail "create_account.php for the submitter: $out"
	auth=$(sed -n 's:.*<authenticator>\([0-9a-f]*\)</authenticator>.*:\1:p' <<<"$out")
	[ -n "$auth" ] || fail "create_account.php gave no authenticator: $out"
	uid=$(sqlv "select id from user where authenticator = '$auth'")
	[ -n "$uid" ] || fail "no user with the submitter's authenticator"
	sql "insert into user_submit (user_id, quota, logical_start_time, submit_all, manage_all, max_jobs_in_progress)
		values ($uid, 0, 0, 1, 0, 0)" || fail "granting the submitter remote job submission"
	(
		umask 077
		printf '%s\n' "$auth" >"$RUN/submitter.auth"
	)
	log "BOINC account 'submitter' (user $uid) may submit to every application"
	# job_file.php records a batch's files in batch_file_assoc, a table only
	# db/schema_condor.sql makes (make_project does not load it); without it
	# query_files with a batch dies in PHP (an uncaught mysqli_sql_exception).
	# Its last statement, an index make_project's schema has already, fails.
	if [ "$(sqlv "select count(*) from information_schema.tables where table_schema = '$PROJECT_NAME' and table_name = 'batch_file_assoc'")" != 1 ]; then
		mariadb --no-defaults -S "$RUN/db/mysqld.sock" -uroot --force "$PROJECT_NAME" <"$BUILD/db/schema_condor.sql" >"$LOGS/schema_condor.log" 2>&1 || true
		[ "$(sqlv "select count(*) from information_schema.tables where table_schema = '$PROJECT_NAME' and table_name = 'batch_file_assoc'")" = 1 ] ||
			fail "loading db/schema_condor.sql (see $LOGS/schema_condor.log)"
		log "loaded BOINC's db/schema_condor.sql (table batch_file_assoc, for job_file.php)"
	fi
}

# boinc_side runs BOINC's own Python binding (boinc_side.py over the
# build's lib/boinc_submit.py) against the project.
boinc_side() {
	local op=$1
	shift
	PYTHONDONTWRITEBYTECODE=1 python3 "$HERE/boinc_side.py" "$op" --lib "$BUILD/lib" --url "$MASTER_URL" --auth-file "$RUN/submitter.auth" "$@"
}

# state_count prints how many chains of the -status text $1 are in state $2.
state_count() { awk -F'\t' -v s="$2" '$3 == s' <<<"$1" | grep -c . || true; }

# coexist: BOINC's own remote job submission (submit_rpc_handler.php,
# job_file.php, lib/boinc_submit.py, as science gateways and BOINC's GAHP
# use it) beside rboinc on one project. rboinc's chains wait in BOINC on a
# content (the queue's server default) while a BOINC batch stages the same
# bytes under BOINC's job-file name jf_<md5> and is aborted; BOINC's
# file_deleter then removes the batch's inputs (its template has no
# <no_delete/>). Whatever BOINC removed, and an input of a waiting work unit
# an operator removes from download/, rboinc's chains must still complete,
# with the right outputs.
coexist() {
	[ "$COEX" = 1 ] || return 0
	stage "8. coexistence: a batch of BOINC's own remote job submission beside rboinc (group $COEX_GROUP)"
	local up=${SCI_USER^^} c name i st n t0 batch out shared_name shared_present n_missing_end
	local pat="coex%-${up}\\_${COEX_GROUP}-%"
	client --project "$MASTER_URL" nomorework >/dev/null 2>&1 || fail "boinccmd --project $MASTER_URL nomorework"
	make_submitter

	# rboinc's chains: every one uses the queue's server default, so its
	# step-0 work units all refer to one download file.
	mkdir -p "$SCI/coex"
	: >"$SCI/coex/jobs.txt"
	for c in $(seq "$COEX_CHAINS"); do
		echo "chain coex$c" >"$SCI/coex/coex$c.state"
		echo "coex$c -state_file coex$c.state" >>"$SCI/coex/jobs.txt"
	done
	out=$(sci rboinc-submit -app_name "$QUEUE" -group "$COEX_GROUP" -num_steps 2 -jobs coex/jobs.txt 2>&1) ||
		{ indent <<<"$out"; fail "rboinc-submit of group $COEX_GROUP"; }
	indent <<<"$out"
	wait_sql "select count(*) from workunit where name like '$pat'" 60 "$COEX_CHAINS" || fail "rboinc's $COEX_CHAINS work units are not in BOINC"
	wait_sql "select count(*) from result r join workunit w on w.id = r.workunitid where w.name like '$pat' and r.server_state = 2" 120 "$COEX_CHAINS" ||
		fail "BOINC's transitioner made no unsent results for rboinc's work units"
	wu_inputs "$pat" >"$RUN/coex-inputs.txt"
	log "rboinc's $COEX_CHAINS work units wait in BOINC, unsent; their inputs in download/:"
	indent <"$RUN/coex-inputs.txt"
	n=$(missing_inputs <"$RUN/coex-inputs.txt" | wc -l)
	[ "$n" = 0 ] || fail "$n of rboinc's inputs are missing before BOINC's batch"

	# BOINC's batch: its own input per job, and the same bytes as rboinc's
	# shared default as the second input, staged by name jf_<md5>.
	mkdir -p "$RUN/boincjobs"
	for i in $(seq "$BOINC_JOBS"); do
		printf 'chain boincjob%d\n' "$i" >"$RUN/boincjobs/state$i"
	done
	cp "$RROOT/etc/$QUEUE/default_conf_file" "$RUN/boincjobs/shared"
	sed -n '/<file_info>/,$p' "$PROJECT_DIR/templates/rboinc_${QUEUE}_wu" | sed 's/<rboinc [^>]*\/>//' |
		{ echo "<input_template>"; cat; echo "</input_template>"; } >"$RUN/boincjobs/in_template.xml"
	grep -q no_delete "$RUN/boincjobs/in_template.xml" && fail "the BOINC batch's input template has <no_delete/>"
	sed 's/<rboinc [^>]*\/>//' "$PROJECT_DIR/templates/rboinc_${QUEUE}_result" |
		{ echo "<output_template>"; cat; echo "</output_template>"; } >"$RUN/boincjobs/out_template.xml"
	chown -R "$PROJECT_USER:" "$RUN/boincjobs"
	t0=$(date +%s)
	out=$(boinc_side submit --app "$APP_NAME" --batch-name boincjob --in-template "$RUN/boincjobs/in_template.xml" \
		--out-template "$RUN/boincjobs/out_template.xml" --shared "$RUN/boincjobs/shared" \
		"$RUN"/boincjobs/state*) || { indent <<<"$out"; fail "BOINC's remote job submission"; }
	indent <<<"$out"
	TIMES[boinc_submit]=$(($(date +%s) - t0))s
	batch=$(sed -n 's/^batch_id=//p' <<<"$out")
	shared_name=$(sed -n 's/^shared_name=//p' <<<"$out")
	shared_present=$(sed -n 's/^shared_present=//p' <<<"$out")
	[[ $batch =~ ^[0-9]+$ ]] || fail "BOINC's remote job submission gave no batch id"
	COEX_FIGURES+=("BOINC's side (query_files, $(sed -n 's/.*upload_calls=//p' <<<"$out") upload_files calls, submit_batch of $BOINC_JOBS jobs) took ${TIMES[boinc_submit]}")
	wait_sql "select count(*) from workunit where batch = $batch" 30 "$BOINC_JOBS" || fail "BOINC's batch $batch has not $BOINC_JOBS work units"
	if grep -qxF "$shared_name" "$RUN/coex-inputs.txt"; then
		log "BOINC's job-file staging found the shared content already in download/ as $shared_name (rboinc's file): present=$shared_present"
		COEX_FIGURES+=("BOINC's batch used rboinc's own download file $shared_name")
	else
		log "BOINC staged the shared content as $shared_name (present before: $shared_present); rboinc's work units use other names"
		COEX_FIGURES+=("BOINC's batch staged the shared content as $shared_name, a name rboinc's work units do not use")
	fi
	{ sql "select j.id, j.name, from_unixtime(j.create_time) as created, a.batch_id from job_file j left join batch_file_assoc a on a.job_file_id = j.id where j.name = '$shared_name'" 2>&1 || true; } | indent

	# Abort: abort_batch marks the batch's work units cancelled and ready for
	# the file deleter at once.
	out=$(boinc_side abort --batch-id "$batch" 2>&1) || { indent <<<"$out"; fail "abort_batch $batch"; }
	indent <<<"$out"
	t0=$(date +%s)
	wait_sql "select count(*) from workunit where batch = $batch and file_delete_state = 2" 180 "$BOINC_JOBS" ||
		fail "BOINC's file_deleter did not take in the aborted batch's work units"
	TIMES[file_deleter]=$(($(date +%s) - t0))s
	n=$(sqlv "select count(*) from workunit where batch = $batch and error_mask & 16")
	log "batch $batch aborted ($n work units cancelled); file_deleter done with them ${TIMES[file_deleter]} later"
	{ grep 'jf_' "$PROJECT_DIR"/log_*/file_deleter.log 2>/dev/null || true; } | tail -n 3 | indent
	missing_inputs <"$RUN/coex-inputs.txt" >"$RUN/coex-missing.txt"
	n=$(wc -l <"$RUN/coex-missing.txt")
	COEX_FIGURES+=("after the abort, BOINC's file deleter had removed $n of the $(wc -l <"$RUN/coex-inputs.txt") inputs of rboinc's waiting work units")
	if [ "$n" -gt 0 ]; then
		log "BOINC's file deleter removed $n input(s) rboinc's waiting work units need:"
		indent <"$RUN/coex-missing.txt"
	else
		# An operator cleaning download/ (or any other user of the project)
		# takes the shared input away instead.
		name=$(shared_input "$pat" "$COEX_CHAINS")
		[ -n "$name" ] || fail "no input shared by rboinc's $COEX_CHAINS work units"
		echo "$name" >"$RUN/coex-missing.txt"
		rm -f "$(download_path "$name")"
		log "nothing of rboinc's removed by BOINC; removed the shared input $name from download/ as an operator would"
		COEX_FIGURES+=("an operator removed the shared input $name of $COEX_CHAINS waiting work units")
	fi

	# rboinc should notice and link what is missing again.
	t0=$(date +%s)
	while :; do
		n=$(missing_inputs <"$RUN/coex-inputs.txt" | wc -l)
		[ "$n" = 0 ] && break
		[ $(($(date +%s) - t0)) -ge "$RELINK_WAIT" ] && break
		sleep 2
	done
	n_missing_end=$n
	if [ "$n" = 0 ]; then
		TIMES[relinked]=$(($(date +%s) - t0))s
		log "every input of rboinc's waiting work units is back in download/ after ${TIMES[relinked]}"
		COEX_FIGURES+=("the missing input was back in download/ ${TIMES[relinked]} later")
	else
		TIMES[relinked]="not after ${RELINK_WAIT}s"
		log "after ${RELINK_WAIT}s, $n input(s) of rboinc's waiting work units still missing from download/"
		COEX_FIGURES+=("$n input(s) still missing after ${RELINK_WAIT}s")
	fi

	# The volunteer works again: rboinc's chains must complete.
	client --project "$MASTER_URL" allowmorework >/dev/null 2>&1 || fail "boinccmd --project $MASTER_URL allowmorework"
	local deadline=$(($(date +%s) + COEX_TIMEOUT)) last_poke=0 last_cron now ndone nfail
	last_cron=$(date +%s)
	t0=$(date +%s)
	while :; do
		now=$(date +%s)
		st=$(sci rboinc-retrieve -group "$COEX_GROUP" -status 2>&1) || true
		ndone=$(state_count "$st" "done")
		nfail=$(awk -F'\t' '$3 ~ /fail|stop|abort/' <<<"$st" | grep -c . || true)
		[ $((ndone + nfail)) -ge "$COEX_CHAINS" ] && break
		[ "$now" -ge "$deadline" ] && break
		check_daemons
		if [ $((now - last_poke)) -ge 20 ]; then
			client --project "$MASTER_URL" update >/dev/null 2>&1 || true
			last_poke=$now
		fi
		if [ "$CRON_EVERY" -gt 0 ] && [ $((now - last_cron)) -ge "$CRON_EVERY" ]; then
			(cd "$PROJECT_DIR" && as_owner bin/start --cron) >>"$LOGS/bin-start-cron.log" 2>&1 || true
			last_cron=$now
		fi
		sleep 5
	done
	TIMES[coex_chains]=$(($(date +%s) - t0))s
	indent <<<"$st"
	n=$(sqlv "select count(*) from result r join workunit w on w.id = r.workunitid where w.name like '$pat' and r.outcome = 3")
	local nres
	nres=$(sqlv "select count(*) from result r join workunit w on w.id = r.workunitid where w.name like '$pat'")
	COEX_FIGURES+=("rboinc's chains: $ndone of $COEX_CHAINS done, $nfail failed, ${TIMES[coex_chains]} after the volunteer took work again; $n of $nres results of their work units were client errors")
	log "BOINC's results of rboinc's group $COEX_GROUP:"
	{ sql "select r.name, r.server_state, r.outcome, r.client_state, r.exit_status from result r join workunit w on w.id = r.workunitid where w.name like '$pat' order by r.id" 2>&1 || true; } | indent
	[ "$ndone" = "$COEX_CHAINS" ] || fail "only $ndone of rboinc's $COEX_CHAINS chains completed beside BOINC's batch (${TIMES[coex_chains]}; inputs back: ${TIMES[relinked]})"

	# Nothing of rboinc's lost: every chain's output is there and right.
	mkdir -p "$SCI/coexres"
	out=$(sci rboinc-retrieve -group "$COEX_GROUP" -into coexres 2>&1) || { indent <<<"$out"; fail "rboinc-retrieve of group $COEX_GROUP"; }
	indent <<<"$out"
	local f want bad=0
	for c in $(seq "$COEX_CHAINS"); do
		want=$(printf 'chain coex%d\nstep 1 default-param\nstep 2 default-param' "$c")
		f=$(find "$SCI/coexres" -maxdepth 1 -regextype posix-extended -iregex ".*/coex$c-${SCI_USER}_$COEX_GROUP-1-2-RND[0-9]+_0\.state" | head -n 1)
		if [ -z "$f" ] || [ "$(cat "$f")" != "$want" ]; then
			log "MISSING or WRONG: coex$c's last state (${f:-no file})"
			bad=$((bad + 1))
		fi
	done
	[ "$bad" = 0 ] || fail "$bad of rboinc's chains came back wrong beside BOINC's batch"
	# rboinc must put back what was taken, not only finish by making steps again.
	[ "$n_missing_end" = 0 ] || fail "inputs of rboinc's waiting work units were not back in download/ within ${RELINK_WAIT}s"
	log "coexistence: all $COEX_CHAINS of rboinc's chains complete and right beside BOINC's aborted batch"
}

# ------------------------------------------------------------ 9. fidelity
# set_create_mode sets rboinc.json's "create" (how rboinc makes BOINC's
# work units: "create_work" or "native").
set_create_mode() {
	python3 - "$RROOT/rboinc.json" "$1" <<'PY'
import json, sys
path, mode = sys.argv[1:]
cfg = json.load(open(path))
cfg["create"] = mode
open(path, "w").write(json.dumps(cfg, indent=2) + "\n")
PY
}

# native_creation_known tells whether this rboinc has native creation
# (`rboinc-server init --create`); an rboinc without it ignores rboinc.json's
# "create" and would compare create_work with itself.
# The help is read whole first: grep -q leaving a pipe early kills the
# writer with SIGPIPE, which pipefail turns into "no" (the first run did so).
native_creation_known() {
	local help
	help=$("$RUN/bin/rboinc-server" init --help 2>&1) || return 1
	grep -qE -- '--create( |=|$)' <<<"$help"
}

# count_create_work puts a wrapper in front of BOINC's bin/create_work
# that logs each call to $RUN/fid-create_work-calls.log (emptied);
# uncount_create_work puts create_work back.
count_create_work() {
	local cw=$PROJECT_DIR/bin/create_work
	if [ ! -e "$cw.real" ]; then
		mv "$cw" "$cw.real"
		printf '#!/bin/sh\n# the real-BOINC run counts create_work calls (stage 9)\necho "$$ $*" >>%q\nexec "$0.real" "$@"\n' \
			"$RUN/fid-create_work-calls.log" >"$cw"
		chmod 755 "$cw"
		chown "$PROJECT_USER:" "$cw"
	fi
	: >"$RUN/fid-create_work-calls.log"
	chown "$PROJECT_USER:" "$RUN/fid-create_work-calls.log"
}
uncount_create_work() {
	local cw=$PROJECT_DIR/bin/create_work
	[ -e "$cw.real" ] && mv -f "$cw.real" "$cw"
	return 0
}

# fid_use_mode makes rboinc create work units in mode $1 (create_work or
# native) from now on: rboinc.json's "create", and serve restarted to read
# it.
fid_use_mode() {
	set_create_mode "$1"
	stop_pid "$PID_SERVE" "rboinc-server serve"
	launch_serve
}

# fid_submit submits the fidelity chains (fid/jobs.txt, two steps each) as
# group $1, made in mode $2 (named in a failure).
fid_submit() {
	local group=$1 mode=$2 out
	out=$(sci "$RUN/bin/fidelity" submit -queue fid -group "$group" -jobs fid/jobs.txt -num_steps 2 \
		-priority 50 -batch "$FID_BATCH" -min_quorum 1 -fpops_bound 5e12 2>&1) || { indent <<<"$out"; fail "fidelity submit of group $group ($mode)"; }
	indent <<<"$out"
}

# fid_check_calls checks the create_work calls counted since
# $RUN/fid-create_work-calls.log was emptied, in mode $1: none when native,
# at least $2 with create_work; $3 says what ran ("for ...").
fid_check_calls() {
	local mode=$1 min=$2 what=$3 calls
	calls=$(wc -l <"$RUN/fid-create_work-calls.log")
	log "$mode: bin/create_work ran $calls time(s) $what"
	if [ "$mode" = native ]; then
		[ "$calls" = 0 ] || fail "rboinc.json \"create\": \"native\", yet bin/create_work ran $calls time(s) $what"
	else
		[ "$calls" -ge "$min" ] || fail "rboinc.json \"create\": \"create_work\", yet bin/create_work ran $calls time(s) $what (want $min or more)"
	fi
}

# fid runs the stage's program (fidelity/) as the project's user: it reads
# the database's password from config.xml, as rboinc does. (Its submit runs
# as the scientist, through sci.)
fid() { (cd "$RUN" && as_owner "$RUN/bin/fidelity" "$@"); }

# fidelity: the same chains submitted twice, once in each creation mode
# (FID_MODES), with BOINC's daemons stopped so that the rows stay as made;
# then fidelity/ compares BOINC's rows of the two submissions column by
# column (workunit and assignment, then the results the transitioner makes),
# and the chains run through the real transitioner, scheduler, volunteer,
# validator and assimilator in the second mode and must come back right.
fidelity() {
	[ "$FIDELITY" = 1 ] || return 0
	local ma mb
	read -r ma mb <<<"$FID_MODES"
	stage "9. fidelity: the same chains made by rboinc.json \"create\": \"$ma\", then \"$mb\"; BOINC's rows compared"
	local m
	for m in "$ma" "$mb"; do
		case "$m" in create_work | native) ;; *) fail "FID_MODES must be two of create_work and native, not '$FID_MODES'" ;; esac
	done
	if { [ "$ma" = native ] || [ "$mb" = native ]; } && ! native_creation_known; then
		log "SKIP: this rboinc has no native creation (\`rboinc-server init --help\` names no --create); FID_MODES=\"create_work create_work\" runs the stage on it"
		TIMES[fidelity]="skipped (no native creation)"
		return 0
	fi
	local t0 fq=fid up=${SCI_USER^^} vid c n path sum
	t0=$(date +%s)
	client --project "$MASTER_URL" nomorework >/dev/null 2>&1 || fail "boinccmd --project $MASTER_URL nomorework"
	vid=$(sqlv "select id from user where email_addr = 'volunteer@example.invalid'")
	[[ $vid =~ ^[0-9]+$ ]] || fail "no BOINC user id for the volunteer"
	# Targeted work reaches a volunteer only with <enable_assignment> (the
	# scheduler makes its result; the transitioner does not).
	config_edit set enable_assignment 1

	# The queue: every kind of input rboinc hands create_work (a file per
	# chain; an optional one with a server default; an immutable server
	# default; a constant file by <physical_name>), a template command line,
	# the template's resource and replication options, elements BOINC copies
	# as they are (<sticky/>, <no_delete/>).
	cat >"$PROJECT_DIR/templates/rboinc_${fq}_wu" <<EOT
<rboinc application="$APP_NAME" description="Fidelity: create_work and native creation compared"/>
<file_info>
    <number>0</number>
</file_info>
<file_info>
    <number>1</number>
</file_info>
<file_info>
    <number>2</number>
    <sticky/>
</file_info>
<file_info>
    <number>3</number>
    <physical_name>rboinc_fid_const</physical_name>
    <no_delete/>
</file_info>
<workunit>
    <file_ref>
        <file_number>0</file_number>
        <open_name>in</open_name>
        <copy_file/>
        <rboinc parameter_name="state_file" parameter_description="The chain's state"/>
    </file_ref>
    <file_ref>
        <file_number>1</file_number>
        <open_name>conf</open_name>
        <rboinc parameter_name="conf_file" parameter_description="One line, copied into each step line" optional="true"/>
    </file_ref>
    <file_ref>
        <file_number>2</file_number>
        <open_name>shared</open_name>
        <rboinc immutable="true"/>
    </file_ref>
    <file_ref>
        <file_number>3</file_number>
        <open_name>const</open_name>
    </file_ref>
    <command_line>fixedarg</command_line>
    <rsc_fpops_est>2e9</rsc_fpops_est>
    <rsc_fpops_bound>1e13</rsc_fpops_bound>
    <rsc_memory_bound>$FID_MEMORY_BOUND</rsc_memory_bound>
    <rsc_disk_bound>2e8</rsc_disk_bound>
    <rsc_bandwidth_bound>1000</rsc_bandwidth_bound>
    <delay_bound>7200</delay_bound>
    <min_quorum>1</min_quorum>
    <target_nresults>1</target_nresults>
    <max_error_results>9</max_error_results>
    <max_success_results>4</max_success_results>
</workunit>
EOT
	cp "$PROJECT_DIR/templates/rboinc_${QUEUE}_result" "$PROJECT_DIR/templates/rboinc_${fq}_result"
	chown "$PROJECT_USER:" "$PROJECT_DIR"/templates/rboinc_${fq}_*
	mkdir -p "$RROOT/etc/$fq"
	echo "fid-default" >"$RROOT/etc/$fq/default_conf_file"
	echo "shared by every step" >"$RROOT/etc/$fq/default_shared"
	chown -R "$PROJECT_USER:" "$RROOT/etc"
	path=$(download_path rboinc_fid_const) || fail "bin/dir_hier_path rboinc_fid_const"
	echo "a constant file" >"$path"
	sum=$(md5sum <"$path" | cut -d' ' -f1)
	printf '%s %s\n' "$sum" "$(stat -c %s "$path")" >"$path.md5"
	chown "$PROJECT_USER:" "$path" "$path.md5"

	# The chains: own and default parameters, command-line arguments on
	# some; and one chain of targeted work (assigned to the volunteer).
	mkdir -p "$SCI/fid"
	for c in 1 2 3 4 t1; do echo "chain f$c" >"$SCI/fid/f$c.state"; done
	echo "param-f1" >"$SCI/fid/f1.conf"
	echo "param-f3" >"$SCI/fid/f3.conf"
	printf '%s\n' "f1 -state_file f1.state -conf_file f1.conf -- alpha beta" "f2 -state_file f2.state -- gamma" \
		"f3 -state_file f3.state -conf_file f3.conf" "f4 -state_file f4.state" >"$SCI/fid/jobs.txt"
	echo "t1 -state_file ft1.state" >"$SCI/fid/jobs-assigned.txt"
	chown -R "$PROJECT_USER:" "$SCI/fid"

	# create_work's calls are counted: one side must run it, native none.
	local cw=$PROJECT_DIR/bin/create_work
	count_create_work

	# BOINC's daemons stay stopped while both sides submit: the rows stay as
	# made, untouched by the transitioner.
	(cd "$PROJECT_DIR" && as_owner bin/stop) >>"$LOGS/bin-stop.log" 2>&1 || fail "bin/stop"
	local side mode group out
	for side in a b; do
		mode=$ma
		[ "$side" = b ] && mode=$mb
		group=fid$side
		fid_use_mode "$mode"
		log "rboinc.json \"create\": \"$mode\"; serve restarted (pid $PID_SERVE); submitting groups $group and ${group}t"
		: >"$RUN/fid-create_work-calls.log"
		fid_submit "$group" "$mode"
		out=$(sci "$RUN/bin/fidelity" submit -queue "$fq" -group "${group}t" -jobs fid/jobs-assigned.txt -num_steps 1 \
			-assign_user_all "$vid" 2>&1) || { indent <<<"$out"; fail "fidelity submit of group ${group}t ($mode)"; }
		indent <<<"$out"
		fid_check_calls "$mode" 1 "for the two submissions"
		if [ "$side" = a ] && [ "$FID_BREAK" = 1 ]; then
			sed -i 's|<rsc_memory_bound>[^<]*</rsc_memory_bound>|<rsc_memory_bound>3e8</rsc_memory_bound>|' "$PROJECT_DIR/templates/rboinc_${fq}_wu"
			log "FID_BREAK=1: the queue's rsc_memory_bound changed before the second submission: the comparison must fail"
		fi
	done
	TIMES[fid_submit]=$(($(date +%s) - t0))s

	local labels=(-label-a "$ma" -label-b "$mb") rc
	log "BOINC's rows as made (no BOINC daemon running): workunit and assignment"
	fid compare -project "$PROJECT_DIR" -a fida,fidat -b fidb,fidbt "${labels[@]}" \
		-tables workunit,assignment -want workunit=5,assignment=1 >"$LOGS/fid-compare-made.log" 2>&1 && rc=0 || rc=$?
	indent <"$LOGS/fid-compare-made.log"
	[ "$rc" = 0 ] || fail "the work units made by $ma and by $mb differ (above; $LOGS/fid-compare-made.log)"

	# The transitioner makes the results (not for assigned work: the
	# scheduler makes those, with <enable_assignment>).
	(cd "$PROJECT_DIR" && as_owner bin/start) >>"$LOGS/bin-start.log" 2>&1 || fail "bin/start"
	local pat="(w.name like 'f%-${up}\\_fida-0-%' or w.name like 'f%-${up}\\_fidb-0-%')"
	wait_sql "select count(*) from result r join workunit w on w.id = r.workunitid where $pat and r.server_state = 2" 120 8 ||
		fail "BOINC's transitioner made no unsent result for some of the 8 work units"
	log "BOINC's rows after the transitioner: result, and workunit again"
	fid compare -project "$PROJECT_DIR" -a fida,fidat -b fidb,fidbt "${labels[@]}" \
		-tables result,workunit,assignment -want result=4,workunit=5,assignment=1 >"$LOGS/fid-compare-transitioned.log" 2>&1 && rc=0 || rc=$?
	indent <"$LOGS/fid-compare-transitioned.log"
	[ "$rc" = 0 ] || fail "the results (or work units) of $ma and $mb differ after the transitioner (above; $LOGS/fid-compare-transitioned.log)"
	TIMES[fid_compare]=$(($(date +%s) - t0))s

	# doctor in the second mode: native creation's schema check must pass.
	log "rboinc-server doctor with \"create\": \"$mb\":"
	(cd "$RUN" && as_owner "$RUN/bin/rboinc-server" doctor --root "$RROOT") >"$LOGS/fid-doctor.log" 2>&1 && rc=0 || rc=$?
	indent <"$LOGS/fid-doctor.log"
	# (Its words: a finding that names native creation or BOINC's columns;
	# "schema" alone would also match the state database's own line.)
	if [ "$mb" = native ]; then
		grep -iE 'native creation|"create"|columns' "$LOGS/fid-doctor.log" | grep -qv '^PROBLEM' ||
			fail "doctor in native mode said nothing about the columns native creation writes"
		! grep '^PROBLEM' "$LOGS/fid-doctor.log" | grep -qiE 'native|column|schema' || fail "doctor in native mode refuses BOINC's schema (above)"
	fi
	[ "$rc" = 0 ] || log "WARNING: rboinc-server doctor reported problems (above)"

	# The chains run in the second mode: its next steps too (create_work's
	# runs still counted); the assigned ones through the scheduler's
	# assignment.
	: >"$RUN/fid-create_work-calls.log"
	client --project "$MASTER_URL" allowmorework >/dev/null 2>&1 || fail "boinccmd --project $MASTER_URL allowmorework"
	local deadline=$(($(date +%s) + FID_TIMEOUT)) st last="" last_poke=0 last_cron now ndone t1
	t1=$(date +%s)
	last_cron=$t1
	while :; do
		now=$(date +%s)
		st=$(for group in fida fidb fidat fidbt; do sci rboinc-retrieve -group "$group" -status 2>&1 | sed "s/^/$group\t/"; done)
		if [ "$st" != "$last" ]; then
			log "status:"
			indent <<<"$st"
			last=$st
		fi
		ndone=$(awk -F'\t' '$4 == "done"' <<<"$st" | grep -c . || true)
		[ "$ndone" = 10 ] && break
		awk -F'\t' '$4 ~ /fail|stop|abort|attention/' <<<"$st" | grep -q . && fail "a fidelity chain ended wrong (see the status above)"
		[ "$now" -ge "$deadline" ] && fail "timeout: the fidelity chains were not done after ${FID_TIMEOUT}s"
		check_daemons
		if [ $((now - last_poke)) -ge 20 ]; then
			client --project "$MASTER_URL" update >/dev/null 2>&1 || true
			last_poke=$now
		fi
		if [ "$CRON_EVERY" -gt 0 ] && [ $((now - last_cron)) -ge "$CRON_EVERY" ]; then
			(cd "$PROJECT_DIR" && as_owner bin/start --cron) >>"$LOGS/bin-start-cron.log" 2>&1 || true
			last_cron=$now
		fi
		sleep 5
	done
	TIMES[fid_chains]=$(($(date +%s) - t1))s
	uncount_create_work # (the calls' log stays)
	fid_check_calls "$mb" 1 "while the chains ran (their next steps)"
	local bad=0 want wantlog f s param args
	for group in fida fidb; do
		mkdir -p "$SCI/fidres-$group"
		sci rboinc-retrieve -group "$group" -into "fidres-$group" >>"$LOGS/fid-retrieve.log" 2>&1 || fail "rboinc-retrieve -group $group"
		for c in 1 2 3 4; do
			param=fid-default args="fixedarg"
			case $c in 1) param=param-f1 args="fixedarg alpha beta" ;; 2) args="fixedarg gamma" ;; 3) param=param-f3 ;; esac
			want=$(printf 'chain f%d\nstep 1 %s\nstep 2 %s' "$c" "$param" "$param")
			f=$(find "$SCI/fidres-$group" -maxdepth 1 -regextype posix-extended -iregex ".*/f$c-${SCI_USER}_$group-1-2-RND[0-9]+_0\.state" | head -n 1)
			if [ -z "$f" ] || [ "$(cat "$f")" != "$want" ]; then
				log "MISSING or WRONG: f$c of $group, last state (${f:-no file})"
				bad=$((bad + 1))
				continue
			fi
			for s in 0 1; do
				wantlog="rbstep: wrote step $((s + 1)) args: $args"
				f=$(find "$SCI/fidres-$group" -maxdepth 1 -regextype posix-extended -iregex ".*/f$c-${SCI_USER}_$group-$s-2-RND[0-9]+_1\.log" | head -n 1)
				if [ -z "$f" ] || [ "$(cat "$f")" != "$wantlog" ]; then
					log "MISSING or WRONG: f$c of $group, step $s's log (${f:-no file}): want '$wantlog', got '$(cat "$f" 2>/dev/null)'"
					bad=$((bad + 1))
				fi
			done
		done
	done
	# The assigned chain: one step, no arguments of its own, the template's
	# command line (its work unit holds create_work's empty <command_line>
	# first, then the template's).
	for group in fidat fidbt; do
		mkdir -p "$SCI/fidres-$group"
		sci rboinc-retrieve -group "$group" -into "fidres-$group" >>"$LOGS/fid-retrieve.log" 2>&1 || fail "rboinc-retrieve -group $group"
		want=$(printf 'chain ft1\nstep 1 fid-default')
		f=$(find "$SCI/fidres-$group" -maxdepth 1 -regextype posix-extended -iregex ".*/t1-${SCI_USER}_$group-0-1-RND[0-9]+(_asgn)?_0\.state" | head -n 1)
		if [ -z "$f" ] || [ "$(cat "$f")" != "$want" ]; then
			log "MISSING or WRONG: t1 of $group, state (${f:-no file}): $(cat "$f" 2>/dev/null)"
			bad=$((bad + 1))
		fi
		wantlog="rbstep: wrote step 1 args: fixedarg"
		f=$(find "$SCI/fidres-$group" -maxdepth 1 -regextype posix-extended -iregex ".*/t1-${SCI_USER}_$group-0-1-RND[0-9]+(_asgn)?_1\.log" | head -n 1)
		if [ -z "$f" ] || [ "$(cat "$f")" != "$wantlog" ]; then
			log "MISSING or WRONG: t1 of $group, log (${f:-no file}): want '$wantlog', got '$(cat "$f" 2>/dev/null)'"
			bad=$((bad + 1))
		fi
	done
	[ "$bad" = 0 ] || fail "$bad problems in the fidelity chains' results"
	n=$(sqlv "select count(*) from workunit where name like 'f%-${up}\\_fidb-1-2-%'")
	[ "$n" = 4 ] || fail "$n step-1 work units of group fidb in BOINC, want 4"
	log "fidelity: 0 differing columns between $ma and $mb; all 10 chains (5 per mode, 1 of them assigned; next steps made by $mb) came back right with their arguments (both submissions ${TIMES[fid_submit]}, compared by ${TIMES[fid_compare]}, chains ${TIMES[fid_chains]})"
}

# fidelity_next: next steps made by each mode, compared. Each side's
# group is submitted alone in its mode, with BOINC's daemons and the
# volunteer running, and the stage waits until the assimilator has made its
# step 1 (the other side's chains do not exist yet, so every next step of a
# group is made in its mode). Both groups' work units are compared once all
# are over (-settled: ids and times BOINC's daemons wrote while the work ran
# are compared by whether they are set).
fidelity_next() {
	[ "$FIDELITY" = 1 ] && [ "$FID_BREAK" != 1 ] || return 0
	local ma mb
	read -r ma mb <<<"$FID_MODES"
	if { [ "$ma" = native ] || [ "$mb" = native ]; } && ! native_creation_known; then
		return 0
	fi
	stage "9b. fidelity of next steps: a group's step 1 made by the assimilator with \"create\": \"$ma\", another's with \"$mb\"; BOINC's rows compared"
	local t0 up=${SCI_USER^^} side mode group rc
	t0=$(date +%s)
	for side in a b; do
		mode=$ma
		[ "$side" = b ] && mode=$mb
		group=fidn$side
		fid_use_mode "$mode"
		# The assimilator (the hook, or rboinc's own daemon) reads the mode
		# when BOINC starts it.
		(cd "$PROJECT_DIR" && as_owner bin/stop && as_owner bin/start) >>"$LOGS/bin-start.log" 2>&1 || fail "bin/stop, bin/start"
		count_create_work
		log "rboinc.json \"create\": \"$mode\"; serve and BOINC's daemons restarted; submitting group $group"
		fid_submit "$group" "$mode"
		wait_sql_poking "select count(*) from workunit where name like 'f%-${up}\\_${group}-1-2-%'" "$FID_TIMEOUT" 4 ||
			fail "the assimilator made no step 1 for all 4 chains of group $group within ${FID_TIMEOUT}s"
		uncount_create_work
		fid_check_calls "$mode" 2 "for group $group's submission and next steps"
	done
	local pat="(name like 'f%-${up}\\_fidna-%' or name like 'f%-${up}\\_fidnb-%')"
	wait_sql_poking "select count(*) from workunit where $pat and assimilate_state = 2" "$FID_TIMEOUT" 16 ||
		fail "the 16 work units of groups fidna and fidnb were not all assimilated within ${FID_TIMEOUT}s"
	# A work unit is over once the transitioner has seen it assimilated
	# (transition_time INT_MAX, its files for the deleter) and BOINC's
	# file_deleter has taken its files (file_delete_state 2): both sides are
	# compared in that state (the first run compared a work unit one
	# transitioner pass before it).
	wait_sql "select count(*) from workunit where $pat and transition_time = 2147483647 and file_delete_state = 2" 300 16 ||
		fail "the 16 work units of groups fidna and fidnb were not over (transitioner and file_deleter done) within 300s"
	fid compare -project "$PROJECT_DIR" -a fidna -b fidnb -label-a "$ma" -label-b "$mb" -settled \
		-tables workunit -want workunit=8 >"$LOGS/fid-compare-next.log" 2>&1 && rc=0 || rc=$?
	indent <"$LOGS/fid-compare-next.log"
	[ "$rc" = 0 ] || fail "the work units (first and next steps) made by $ma and by $mb differ (above; $LOGS/fid-compare-next.log)"
	TIMES[fid_next]=$(($(date +%s) - t0))s
	log "fidelity of next steps: 0 differing columns between $ma's and $mb's 8 work units (4 chains of 2 steps each, next steps made by the assimilator), in ${TIMES[fid_next]}"
}

# ------------------------------------------------------------ 10. timing
# Issue 31's figures against BOINC's own create_work (C++, on this
# project's MariaDB) where bench/run.sh has the stand-in's (Go, SQLite).
# BOINC's daemons are stopped meanwhile (no transitioner making results of
# the new work units), the volunteer asks for no work. Two phases, serve
# started once for each (and warmed by a small untimed submission):
#   "create": "native", per round: b (a first submission of TIMING_JOBS
#   chains, new contents: a state file each and one -conf_file for all,
#   TIMING_JOBS+1 inputs), a-hash and a (BOINC's bin/create_work --stdin
#   alone for the same jobs under new names: first on the inputs as native
#   creation staged them, without .md5 sidecars, so create_work hashes each
#   and writes its sidecar, make_project's cache_md5_info; then again with
#   the sidecars there), c (the same chains again into a new group);
#   "create": "create_work", per round: d1 (a first submission, new
#   contents), a (create_work alone for its jobs), d2 (its resubmission).
# Each figure: the command's wall time (bash's time inside the process
# tree: not runuser's start), its own CPU, the server's and mariadbd's CPU
# over it (/proc), and MariaDB's statement counters over it (SHOW GLOBAL
# STATUS). Written to $RUN/timing/figures.tsv and figures.md.
TD=$RUN/timing
# (MariaDB 10.11 has no Innodb_rows_inserted nor Innodb_os_log_fsyncs: the
# first run's columns of them were empty; Handler_write counts rows written.)
TM_VARS="Questions Com_insert Com_select Com_update Com_delete Com_commit Com_begin Com_rollback Handler_write Innodb_data_fsyncs Bytes_received"
declare -A TM0=() TM1=()
TM_SERVE0=0 TM_DB0=0 TM_LOAD=""

# proc_cpu_ms prints a process's user and system time so far, in ms.
proc_cpu_ms() {
	if [ -r "/proc/$1/stat" ]; then
		awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"
	else
		echo 0
	fi
}
# serve_pid prints the rboinc-server serve process (runuser's child).
serve_pid() { pgrep -P "$PID_SERVE" -x rboinc-server || echo "$PID_SERVE"; }
# db_snap fills the associative array named $1 with MariaDB's counters.
db_snap() {
	local -n into=$1
	local k v list
	list=$(printf "'%s'," $TM_VARS)
	while read -r k v; do into[$k]=$v; done < <(sqlv "show global status where Variable_name in (${list%,})")
}
tm_begin() {
	TM_LOAD=$(cut -d' ' -f1 /proc/loadavg)
	TM_SERVE0=$(proc_cpu_ms "$(serve_pid)")
	TM_DB0=$(proc_cpu_ms "$PIDS_DB")
	db_snap TM0
}
# tm_end LABEL ROUND TIMEFILE appends the figure's row to figures.tsv.
tm_end() {
	local label=$1 r=$2 tf=$3 serve1 db1 wall user sys row k
	db_snap TM1
	serve1=$(proc_cpu_ms "$(serve_pid)")
	db1=$(proc_cpu_ms "$PIDS_DB")
	read -r wall user sys <"$tf"
	row="$label	$r	$wall	$user	$sys	$((serve1 - TM_SERVE0))	$((db1 - TM_DB0))	$TM_LOAD"
	for k in $TM_VARS; do
		# SHOW GLOBAL STATUS counts itself: one statement (tm_begin's).
		if [ "$k" = Questions ]; then
			row+="	$((TM1[$k] - TM0[$k] - 1))"
		else
			row+="	$((TM1[$k] - TM0[$k]))"
		fi
	done
	printf '%s\n' "$row" >>"$TD/figures.tsv"
	log "timing: $label round $r: ${wall}s (command CPU ${user}+${sys}s, serve $((serve1 - TM_SERVE0)) ms, mariadbd $((db1 - TM_DB0)) ms, load $TM_LOAD); statements $((TM1[Questions] - TM0[Questions] - 1)), inserts $((TM1[Com_insert] - TM0[Com_insert])), rows $((TM1[Innodb_rows_inserted] - TM0[Innodb_rows_inserted]))"
}

# tm_jobs DIR TAG writes TIMING_JOBS chains' state files and a conf file
# (contents new: TAG in each) and DIR/jobs.txt naming them.
tm_jobs() {
	local dir=$1 tag=$2 i name
	mkdir -p "$dir"
	printf 'param-%s\n' "$tag" >"$dir/conf"
	: >"$dir/jobs.txt"
	for ((i = 0; i < TIMING_JOBS; i++)); do
		printf -v name 'c%04d' "$i"
		printf 'chain %s %s\n' "$name" "$tag" >"$dir/$name.state"
		printf '%s -state_file %s\n' "$name" "$dir/$name.state" >>"$dir/jobs.txt"
	done
}

# wu_count prints how many work units BOINC's database holds.
wu_count() { sqlv "select count(*) from workunit"; }

# tm_submit LABEL ROUND GROUP DIR: rboinc-submit -jobs DIR/jobs.txt with
# DIR/conf into GROUP, timed; every chain must be in BOINC afterwards.
tm_submit() {
	local label=$1 r=$2 group=$3 dir=$4 n0 n1 chains
	n0=$(wu_count)
	tm_begin
	sci "$TD/tm.sh" "$TD/$label-$r.time" /dev/null "$TD/$label-$r.json" "$TD/$label-$r.err" \
		rboinc-submit -json -app_name "$QUEUE" -group "$group" -num_steps 3 -jobs "$dir/jobs.txt" -conf_file "$dir/conf" ||
		{ tail -n 20 "$TD/$label-$r.err"; fail "timing: rboinc-submit ($label, round $r)"; }
	tm_end "$label" "$r" "$TD/$label-$r.time"
	chains=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["chains"]))' "$TD/$label-$r.json")
	n1=$(wu_count)
	[ "$chains" = "$TIMING_JOBS" ] && [ "$((n1 - n0))" = "$TIMING_JOBS" ] ||
		fail "timing: $label round $r made $chains chains and $((n1 - n0)) work units in BOINC, want $TIMING_JOBS of each"
}

# tm_cw LABEL ROUND REPORT: BOINC's create_work --stdin alone, timed, for
# the jobs of the submission REPORT names (cwtime's lines: the same
# templates, priority and staged inputs, new work unit names).
tm_cw() {
	local label=$1 r=$2 report=$3 prefix=${1//-/}${2}_ n args=()
	(cd "$RUN" && as_owner "$RUN/bin/cwtime" lines -root "$RROOT" -report "$report" -prefix "$prefix" \
		-args "$TD/$label-$r.args" -lines "$TD/$label-$r.lines") || fail "timing: cwtime lines ($label, round $r)"
	mapfile -t args <"$TD/$label-$r.args"
	tm_begin
	(cd "$PROJECT_DIR" && as_owner "$TD/tm.sh" "$TD/$label-$r.time" "$TD/$label-$r.lines" "$TD/$label-$r.out" "$TD/$label-$r.err" \
		bin/create_work "${args[@]}") || { tail -n 20 "$TD/$label-$r.err"; fail "timing: BOINC's create_work alone ($label, round $r)"; }
	tm_end "$label" "$r" "$TD/$label-$r.time"
	n=$(sqlv "select count(*) from workunit where left(name, ${#prefix}) = '$prefix'")
	[ "$n" = "$TIMING_JOBS" ] || fail "timing: create_work alone ($label, round $r) made $n work units, want $TIMING_JOBS"
}

# tm_mode MODE: rboinc.json "create" set, serve restarted, and warmed by
# an untimed submission of 10 chains (its connections, templates).
tm_mode() {
	local mode=$1
	fid_use_mode "$mode"
	mkdir -p "$SCI/timing/warm-$mode"
	local i
	: >"$SCI/timing/warm-$mode/jobs.txt"
	for i in $(seq 10); do
		echo "warm $mode $i" >"$SCI/timing/warm-$mode/w$i.state"
		echo "w$i -state_file $SCI/timing/warm-$mode/w$i.state" >>"$SCI/timing/warm-$mode/jobs.txt"
	done
	echo "warm $mode" >"$SCI/timing/warm-$mode/conf"
	sci rboinc-submit -app_name "$QUEUE" -group "tw${mode//_/}" -num_steps 3 -jobs "$SCI/timing/warm-$mode/jobs.txt" \
		-conf_file "$SCI/timing/warm-$mode/conf" >"$TD/warm-$mode.log" 2>&1 || { cat "$TD/warm-$mode.log"; fail "timing: the warm-up submission ($mode)"; }
}

timing() {
	[ "$TIMING" != 0 ] || return 0
	stage "10. timing (issue 31): BOINC's create_work --stdin alone against rboinc's submissions, $TIMING_JOBS jobs, best of $TIMING_ROUNDS"
	native_creation_known || fail "timing: this rboinc has no native creation (rboinc-server init --help names no --create)"
	local t0 r
	t0=$(date +%s)
	(cd "$PROJECT_DIR" && as_owner bin/stop) >>"$LOGS/bin-start.log" 2>&1 || fail "bin/stop"
	[ -n "$PID_CLIENT" ] && { client --project "$MASTER_URL" nomorework >/dev/null 2>&1 || true; }
	mkdir -p "$TD" "$SCI/timing"
	chown "$PROJECT_USER:" "$TD"
	cat >"$TD/tm.sh" <<'TMEOF'
#!/bin/bash
# tm.sh TIMEFILE STDIN STDOUT STDERR COMMAND...: COMMAND's wall, user and
# system time (its process tree's) in seconds into TIMEFILE.
tf=$1 in=$2 out=$3 err=$4
shift 4
TIMEFORMAT='%3R %3U %3S'
{ time "$@" <"$in" >"$out" 2>"$err"; } 2>"$tf"
TMEOF
	chmod 755 "$TD/tm.sh"
	printf 'label\tround\twall_s\tuser_s\tsys_s\tserve_cpu_ms\tmariadbd_cpu_ms\tload1' >"$TD/figures.tsv"
	printf '\t%s' $TM_VARS >>"$TD/figures.tsv"
	echo >>"$TD/figures.tsv"
	chown "$PROJECT_USER:" "$TD/figures.tsv"
	log "timing: BOINC $(git -C "$BOINC_SRC" rev-parse HEAD 2>/dev/null || echo '?'); $(uptime)"
	log "timing: MariaDB $(sqlv 'select version()'), innodb_flush_log_at_trx_commit $(sqlv 'select @@innodb_flush_log_at_trx_commit'); BOINC's daemons stopped"

	tm_mode native
	for r in $(seq "$TIMING_ROUNDS"); do
		tm_jobs "$SCI/timing/n$r" "n$r-$(secret 4)"
		tm_submit b "$r" "tn$r" "$SCI/timing/n$r"
		tm_cw a-hash "$r" "$TD/b-$r.json"
		tm_cw a "$r" "$TD/b-$r.json"
		tm_submit c "$r" "tn${r}r" "$SCI/timing/n$r"
	done
	tm_mode create_work
	for r in $(seq "$TIMING_ROUNDS"); do
		tm_jobs "$SCI/timing/w$r" "w$r-$(secret 4)"
		tm_submit d1 "$r" "tw$r" "$SCI/timing/w$r"
		tm_cw a "$((r + TIMING_ROUNDS))" "$TD/d1-$r.json"
		tm_submit d2 "$r" "tw${r}r" "$SCI/timing/w$r"
	done
	log "timing: $(uptime)"
	python3 - "$TD/figures.tsv" "$TIMING_JOBS" >"$TD/figures.md" <<'PY' || fail "timing: the figures' table"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
n = int(sys.argv[2])
what = {
    "a": "BOINC's create_work --stdin alone, inputs with .md5 sidecars",
    "a-hash": "BOINC's create_work --stdin alone, inputs without sidecars (it hashes each, writes its sidecar)",
    "b": '"create": "native", first submission (%d new contents)' % (n + 1),
    "c": '"create": "native", resubmission (no content new)',
    "d1": '"create": "create_work", first submission (%d new contents)' % (n + 1),
    "d2": '"create": "create_work", resubmission',
}
by = {}
for r in rows:
    by.setdefault(r["label"], []).append(r)
def ms(s): return "%d ms" % round(float(s) * 1000)
base = min(float(r["wall_s"]) for r in by["a"])
print("| figure (%d jobs) | best wall | rounds | ratio to a | command CPU (best round) | serve CPU | mariadbd CPU | statements | inserts | selects | updates | commits | rows written | InnoDB fsyncs | load |" % n)
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for label in ["a", "a-hash", "b", "c", "d1", "d2"]:
    rs = by.get(label)
    if not rs:
        continue
    best = min(rs, key=lambda r: float(r["wall_s"]))
    walls = sorted(float(r["wall_s"]) for r in rs)
    print("| %s: %s | %s | %s | %.2fx | %s | %s ms | %s ms | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        label, what[label], ms(best["wall_s"]), ", ".join(ms(w) for w in walls), float(best["wall_s"]) / base,
        ms(float(best["user_s"]) + float(best["sys_s"])), best["serve_cpu_ms"], best["mariadbd_cpu_ms"],
        best["Questions"], best["Com_insert"], best["Com_select"], best["Com_update"], best["Com_commit"],
        best["Handler_write"], best["Innodb_data_fsyncs"],
        ", ".join(sorted(set(r["load1"] for r in rs), key=float))))
PY
	indent <"$TD/figures.md"
	TIMES[timing]=$(($(date +%s) - t0))s
	log "timing: done in ${TIMES[timing]} (figures: $TD/figures.md, $TD/figures.tsv)"
}

# -------------------------------------------------------------- main
mkdir -p "$WORK"
# stop_stale stops what a previous run that could not clean up (killed with
# SIGKILL, machine trouble) left running: only processes recorded in its
# pid files whose command line or working directory is in that run's
# directory, so never anything of someone else's.
stop_stale() {
	local f pid
	# The volunteer and rboinc first, then BOINC's daemons, Apache, the database.
	for f in "$RUN/pids/client" "$RUN/pids/serve" "$RUN"/projects/*/pid_*/*.pid "$RUN/pids/apache2" "$RUN/pids/mariadbd"; do
		[ -f "$f" ] || continue
		pid=$(cat "$f" 2>/dev/null) || continue
		case "$pid" in '' | *[!0-9]*) continue ;; esac
		[ -d "/proc/$pid" ] || continue
		if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$RUN" ||
			readlink "/proc/$pid/cwd" 2>/dev/null | grep -q "^$RUN/"; then
			echo "run.sh: stopping process $pid of the run in $RUN ($(basename "$f"))"
			stop_pid "$pid" "process $pid of the previous run"
		fi
	done
	return 0
}
if [ "$STOP_ONLY" = 1 ]; then
	[ -d "$RUN" ] || { echo "run.sh: nothing to stop: no $RUN"; exit 0; }
	stop_stale
	echo "run.sh: stopped what ran in $RUN (left for inspection)"
	exit 0
fi
if [ -d "$RUN" ]; then
	stop_stale
	rm -rf "$RUN"
fi
mkdir -p "$LOGS" "$RUN/pids"
exec > >(tee -a "$LOGS/run.log") 2>&1
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
log "rboinc real-BOINC run: BOINC_SRC=$BOINC_SRC ASSIMILATOR=$ASSIMILATOR WORK=$WORK REPO=$REPO"

install_packages
chown -R "$PROJECT_USER:" "$RUN"
build_boinc
build_rboinc
start_db
make_project
start_apache
install_rboinc
start_project
start_serve
if [ "$TIMING" = only ]; then
	timing
	log "PASS (TIMING=only): build ${TIMES[build]}, timing ${TIMES[timing]}, total $(($(date +%s) - T0))s; figures in $RUN/timing/figures.md"
	exit 0
fi
start_client
foreign_work
submit
wait_chains
retrieve_and_check
control_work
coexist
fidelity
fidelity_next
timing
coex_report
[ "$DAEMON_DEATHS" = 0 ] || log "note: $DAEMON_DEATHS BOINC daemon exit(s) seen while waiting (see the warnings above)"
[ "$DOCTOR_PROBLEMS" = 0 ] || log "note: rboinc-server doctor reported problems (see above)"
log "PASS (ASSIMILATOR=$ASSIMILATOR): build ${TIMES[build]}, first step ${TIMES[first_step]}, first chain ${TIMES[first_chain]}, all chains settled ${TIMES[all_chains]}, control ${TIMES[late_chain]:-skipped}, coexistence ${TIMES[coex_chains]:-skipped}, fidelity ${TIMES[fidelity]:-${TIMES[fid_chains]:-skipped}}, next steps ${TIMES[fid_next]:-skipped}, total $(($(date +%s) - T0))s"
