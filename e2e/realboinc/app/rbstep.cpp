// rbstep: the BOINC application of the real-BOINC end-to-end run
// (e2e/realboinc/run.sh). One chain step: it copies its input "in" to its
// output "out", adds the line "step N PARAM" (N = the number of step lines
// already in the input, plus one; PARAM = the first line of the input
// "conf"), and writes a one-line report to the output "log". A chain of K
// steps thus ends with K step lines, which the script checks. An input line
// "fail-at N" makes step N fail (exit status 1), as a broken job would.
// Command-line arguments, if any, are appended to the report line
// (" args: A B ..."), so that the run can check they reached the step.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "boinc_api.h"
#include "filesys.h"
#include "util.h"

static bool read_lines(const char* logical, std::vector<std::string>& lines) {
    std::string path;
    if (boinc_resolve_filename_s(logical, path)) return false;
    FILE* f = boinc_fopen(path.c_str(), "r");
    if (!f) return false;
    char buf[4096];
    while (fgets(buf, sizeof buf, f)) {
        size_t n = strlen(buf);
        while (n && (buf[n-1] == '\n' || buf[n-1] == '\r')) buf[--n] = 0;
        lines.push_back(buf);
    }
    fclose(f);
    return true;
}

static bool write_text(const char* logical, const std::string& text) {
    std::string path;
    if (boinc_resolve_filename_s(logical, path)) return false;
    FILE* f = boinc_fopen(path.c_str(), "w");
    if (!f) return false;
    bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
    return fclose(f) == 0 && ok;
}

int main(int argc, char** argv) {
    int rv = boinc_init();
    if (rv) {
        fprintf(stderr, "rbstep: boinc_init failed: %d\n", rv);
        return rv;
    }
    std::vector<std::string> in, conf;
    if (!read_lines("in", in)) {
        fprintf(stderr, "rbstep: cannot read input 'in'\n");
        boinc_finish(1);
    }
    read_lines("conf", conf);  // optional: an empty parameter is fine
    int steps = 0, fail_at = 0;
    std::string text;
    for (const std::string& l : in) {
        if (l.compare(0, 5, "step ") == 0) steps++;
        if (l.compare(0, 8, "fail-at ") == 0) fail_at = atoi(l.c_str() + 8);
        text += l + "\n";
    }
    steps++;
    if (steps == fail_at) {
        fprintf(stderr, "rbstep: step %d fails on purpose (fail-at)\n", steps);
        boinc_finish(1);
    }
    std::string param = conf.empty() ? "-" : conf[0];
    text += "step " + std::to_string(steps) + " " + param + "\n";
    boinc_fraction_done(0.5);
    boinc_sleep(1);  // long enough for the client to see the task run
    std::string report = "rbstep: wrote step " + std::to_string(steps);
    if (argc > 1) {
        report += " args:";
        for (int i = 1; i < argc; i++) report += std::string(" ") + argv[i];
    }
    if (!write_text("out", text) || !write_text("log", report + "\n")) {
        fprintf(stderr, "rbstep: cannot write the outputs\n");
        boinc_finish(1);
    }
    fprintf(stderr, "rbstep: step %d done\n", steps);
    boinc_finish(0);
}
