#!/usr/bin/env python3
"""BOINC's own remote job submission, driven as its users drive it.

run.sh's coexistence stage (8) uses this to submit and abort a batch
through submit_rpc_handler.php and job_file.php with BOINC's Python
binding (lib/boinc_submit.py of the BOINC build), beside rboinc on the
same project. Input files are staged as BOINC's job-file staging names
them (jf_<md5>, html/inc/submit_util.inc job_file_name), so a content
rboinc also uses has the same name on both sides when rboinc gives it
that name.

  boinc_side.py submit --lib DIR --url URL --auth-file F --app APP \
      --batch-name NAME --in-template F --out-template F --shared F STATE...
  boinc_side.py abort --lib DIR --url URL --auth-file F --batch-id N

Prints key=value lines (batch_id, shared_name, shared_present, ...).
Exits 1 with the server's error message when an RPC fails.
"""
import argparse
import hashlib
import sys

# PHP's max_file_uploads (20 by default) silently drops the files of one
# POST beyond it, and job_file.php then refuses the call ("# of uploaded
# files (20) doesn't agree with request (N)"): upload at most this many
# files a call.
MAX_FILES_PER_CALL = 20


def phys_name(path):
    with open(path, "rb") as f:
        return "jf_" + hashlib.md5(f.read()).hexdigest()


def check(what, reply):
    if isinstance(reply, dict) and "error" in reply:
        err = reply["error"]
        msg = err.get("error_msg") if isinstance(err, dict) else err
        sys.exit("boinc_side.py: %s: BOINC says: %s" % (what, msg))
    return reply


def absent_indices(reply):
    absent = reply.get("absent_files")
    if not isinstance(absent, dict) or "file" not in absent:
        return []
    files = absent["file"]
    if not isinstance(files, list):
        files = [files]
    return [int(i) for i in files]


def server(args, bs):
    with open(args.auth_file) as f:
        auth = f.read().strip()
    return bs.BOINC_SERVER(args.url, auth, rpc_timeout=120)


def submit(args, bs):
    s = server(args, bs)
    r = check("create_batch", s.create_batch(args.app, args.batch_name, 0))
    batch_id = int(r["batch_id"])
    print("batch_id=%d" % batch_id)

    shared = phys_name(args.shared)
    local = [args.shared] + list(args.states)
    phys = [shared] + [phys_name(p) for p in args.states]
    # Whether the server has the shared content already, asked without a
    # batch: a second query_files of a name for the same batch dies in PHP 8
    # (job_file.php's "ignore" of the duplicate batch_file_assoc row is an
    # uncaught mysqli_sql_exception there).
    q = check("query_files", s.query_files([shared], 0, 0))
    shared_present = 0 not in absent_indices(q)
    calls = 0
    for start in range(0, len(phys), MAX_FILES_PER_CALL):
        # upload_files asks query_files (which records the batch's use of
        # what is there) and uploads only what is absent.
        check("upload_files", s.upload_files(local[start:start + MAX_FILES_PER_CALL],
                                             phys[start:start + MAX_FILES_PER_CALL], batch_id, 0))
        calls += 1
    q = check("query_files", s.query_files(phys, 0, 0))
    if absent_indices(q):
        sys.exit("boinc_side.py: files still absent after upload: %s" % absent_indices(q))
    print("shared_name=%s" % shared)
    print("shared_present=%d" % (1 if shared_present else 0))
    print("files=%d upload_calls=%d" % (len(phys), calls))

    # Templates named in the request (per job): PHP 8.2's
    # submit_rpc_handler.php does not read templates/<app>_in.
    with open(args.in_template) as f:
        in_t = f.read().strip()
    with open(args.out_template) as f:
        out_t = f.read().strip()
    jobs = []
    for i, p in enumerate(args.states):
        files = [bs.FILE_DESC(phys_name(p), "local_staged"),
                 bs.FILE_DESC(shared, "local_staged")]
        jobs.append(bs.JOB_DESC(files=files, name="%s_%d" % (args.batch_name, i),
                                input_template=in_t, output_template=out_t))
    b = bs.BATCH_DESC(args.app, jobs, batch_id=batch_id)
    check("submit_batch", s.submit_batch(b))
    print("jobs=%d" % len(jobs))


def abort(args, bs):
    s = server(args, bs)
    check("abort_batch", s.abort_batch(args.batch_id))
    print("aborted=%d" % args.batch_id)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="op", required=True)
    for name in ("submit", "abort"):
        sp = sub.add_parser(name)
        sp.add_argument("--lib", required=True, help="BOINC's lib/ (boinc_submit.py)")
        sp.add_argument("--url", required=True, help="the project's URL, ending in /")
        sp.add_argument("--auth-file", required=True, help="file holding the submitter's authenticator")
    sp = sub.choices["submit"]
    sp.add_argument("--app", required=True)
    sp.add_argument("--batch-name", required=True)
    sp.add_argument("--in-template", required=True)
    sp.add_argument("--out-template", required=True)
    sp.add_argument("--shared", required=True, help="the content rboinc's chains also use")
    sp.add_argument("states", nargs="+", help="one input file per job")
    sub.choices["abort"].add_argument("--batch-id", type=int, required=True)
    args = p.parse_args()
    sys.path.insert(0, args.lib)
    import boinc_submit as bs  # BOINC's own binding, from the build
    {"submit": submit, "abort": abort}[args.op](args, bs)


if __name__ == "__main__":
    main()
