package boincdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/sqldb"
)

// column is one column of a BOINC table as db/schema.sql defines it.
type column struct {
	name, typ string // typ: MySQL's type, translated for SQLite
	def       string // default, "" for none (NOT NULL without default, as BOINC's)
}

type table struct {
	name    string
	cols    []column
	unique  []string   // unique keys, each a column list
	indexes [][]string // name, then columns
}

func cols(spec string) []column {
	var out []column
	for _, line := range strings.Split(strings.TrimSpace(spec), "\n") {
		f := strings.Fields(line)
		c := column{name: f[0], typ: f[1]}
		if len(f) > 2 {
			c.def = f[2]
		}
		out = append(out, c)
	}
	return out
}

// boincTables are the tables of BOINC's schema the stand-in keeps, with all
// of BOINC's columns for app, workunit and result (so that every insert
// names every column, as on a real project in strict mode) and the indexes
// its daemons rely on.
var boincTables = []table{
	{name: "app", cols: cols(`
id integer
create_time integer
name varchar(191)
min_version integer 0
deprecated smallint 0
user_friendly_name varchar(254)
homogeneous_redundancy smallint 0
weight double 1
beta smallint 0
target_nresults smallint 0
min_avg_pfc double 1
host_scale_check tinyint 0
homogeneous_app_version tinyint 0
non_cpu_intensive tinyint 0
locality_scheduling integer 0
n_size_classes smallint 0
fraction_done_exact tinyint 0`), unique: []string{"name"}},
	{name: "workunit", cols: cols(`
id integer
create_time integer
appid integer
name varchar(191)
xml_doc blob
batch integer
rsc_fpops_est double
rsc_fpops_bound double
rsc_memory_bound double
rsc_disk_bound double
need_validate smallint
canonical_resultid integer
canonical_credit double
transition_time integer
delay_bound integer
error_mask integer
file_delete_state integer
assimilate_state integer
hr_class integer
opaque double
min_quorum integer
target_nresults integer
max_error_results integer
max_total_results integer
max_success_results integer
result_template_file varchar(63)
priority integer
mod_time timestamp
rsc_bandwidth_bound double
fileset_id integer
app_version_id integer
transitioner_flags tinyint
size_class smallint -1
keywords varchar(254)
app_version_num integer`), unique: []string{"name"}, indexes: [][]string{
		{"wu_val", "appid", "need_validate"}, {"wu_timeout", "transition_time"}, {"wu_filedel", "file_delete_state"},
		{"wu_assim", "appid", "assimilate_state"}, {"wu_batch", "batch"}}},
	{name: "result", cols: cols(`
id integer
create_time integer
workunitid integer
server_state integer
outcome integer
client_state integer
hostid integer
userid integer
report_deadline integer
sent_time integer
received_time integer
name varchar(191)
cpu_time double
xml_doc_in blob
xml_doc_out blob
stderr_out blob
batch integer
file_delete_state integer
validate_state integer
claimed_credit double
granted_credit double
opaque double
random integer
app_version_num integer
appid integer
exit_status integer
teamid integer
priority integer
mod_time timestamp
elapsed_time double
flops_estimate double
app_version_id integer
runtime_outlier tinyint
size_class smallint -1
peak_working_set_size double
peak_swap_size double
peak_disk_usage double`), unique: []string{"name"}, indexes: [][]string{
		{"res_wuid", "workunitid"}, {"ind_res_st", "server_state", "priority"}, {"res_app_state", "appid", "server_state"},
		{"res_filedel", "file_delete_state"}, {"res_batch", "batch"}}},
	{name: "assignment", cols: cols(`
id integer
create_time integer
target_id integer
target_type integer
multi tinyint
workunitid integer
resultid integer`), indexes: [][]string{{"asgn_target", "target_type", "target_id"}}},
	// BOINC's job-file staging's record of the files it found in or put
	// into download/ (job_file.php), which its job-file deleter removes:
	// rboinc's collection leaves such a file to it.
	{name: "job_file", cols: cols(`
id integer
name varchar(191)
create_time double
delete_time double`), unique: []string{"name"}},
	// The user table's columns rboinc reads (BOINC's has many more), for
	// the stand-in's accounts.
	{name: "user", cols: cols(`
id integer
create_time integer
email_addr varchar(254)
name varchar(254)
authenticator varchar(254)
teamid integer 0`), unique: []string{"email_addr", "authenticator"}},
	{name: "user_submit", cols: cols(`
user_id integer
quota double 0
logical_start_time double 0
submit_all tinyint 0
manage_all tinyint 0
max_jobs_in_progress integer 0`)},
}

// ddl is the CREATE TABLE statement of t for engine e.
func (t table) ddl(e sqldb.Engine) []string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n", quoteName(t.name))
	autoID := t.cols[0].name == "id"
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(",\n")
		}
		switch {
		case c.name == "id" && autoID && e == sqldb.SQLite:
			b.WriteString("\tid INTEGER PRIMARY KEY AUTOINCREMENT")
			continue
		case c.name == "id" && autoID:
			b.WriteString("\tid integer not null auto_increment")
			continue
		}
		typ := c.typ
		if e == sqldb.SQLite {
			typ = sqliteType(typ)
		}
		fmt.Fprintf(&b, "\t%s %s", c.name, typ)
		switch {
		case c.typ == "timestamp" && e == sqldb.MySQL:
			b.WriteString(" default current_timestamp on update current_timestamp")
		case c.typ == "timestamp":
			b.WriteString(" NOT NULL DEFAULT CURRENT_TIMESTAMP")
		case c.typ == "blob":
			// nullable, as in BOINC's schema
		case c.def != "":
			b.WriteString(" NOT NULL DEFAULT " + c.def)
		default:
			b.WriteString(" NOT NULL")
		}
	}
	var extra []string
	if e == sqldb.MySQL {
		if autoID {
			extra = append(extra, "primary key (id)")
		} else {
			extra = append(extra, "primary key ("+t.cols[0].name+")")
		}
		for _, u := range t.unique {
			extra = append(extra, "unique ("+u+")")
		}
		for _, ix := range t.indexes {
			extra = append(extra, "index "+ix[0]+" ("+strings.Join(ix[1:], ", ")+")")
		}
	} else if !autoID {
		extra = append(extra, "PRIMARY KEY ("+t.cols[0].name+")")
	}
	for _, x := range extra {
		b.WriteString(",\n\t" + x)
	}
	b.WriteString("\n)")
	if e == sqldb.MySQL {
		b.WriteString(" engine=InnoDB")
	}
	stmts := []string{b.String()}
	if e == sqldb.SQLite {
		for _, u := range t.unique {
			stmts = append(stmts, fmt.Sprintf("CREATE UNIQUE INDEX IF NOT EXISTS %s_%s ON %s(%s)", t.name, u, quoteName(t.name), u))
		}
		for _, ix := range t.indexes {
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s(%s)", ix[0], quoteName(t.name), strings.Join(ix[1:], ", ")))
		}
	}
	return stmts
}

func sqliteType(t string) string {
	switch {
	case strings.HasPrefix(t, "varchar"):
		return "TEXT"
	case t == "double":
		return "REAL"
	case t == "blob":
		return "BLOB"
	case t == "timestamp":
		return "TEXT"
	}
	return "INTEGER"
}

// quoteName quotes user, a reserved word in both engines' eyes.
func quoteName(n string) string {
	if n == "user" {
		return "`user`"
	}
	return n
}

// CreateTables makes BOINC's tables that are missing (the stand-in's
// database; a real project has them from make_project).
func (d *DB) CreateTables(ctx context.Context) error {
	for _, t := range boincTables {
		for _, s := range t.ddl(d.Engine) {
			if _, err := d.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("creating BOINC table %s in %s: %w", t.name, d.Target, err)
			}
		}
	}
	return nil
}

// needed are the columns rboinc reads or writes on a real project.
var needed = map[string][]string{
	"app": {"id", "name"},
	"workunit": {"id", "create_time", "appid", "name", "xml_doc", "batch", "canonical_resultid", "transition_time",
		"error_mask", "file_delete_state", "assimilate_state", "priority", "target_nresults", "max_total_results",
		"max_success_results", "max_error_results", "min_quorum", "delay_bound"},
	"result": {"id", "workunitid", "server_state", "outcome", "client_state", "hostid", "userid", "sent_time",
		"received_time", "name", "xml_doc_in", "exit_status", "priority", "elapsed_time", "validate_state",
		"file_delete_state", "report_deadline"},
}

// Check makes sure the database has the tables and columns rboinc uses,
// naming the first one missing.
func (d *DB) Check(ctx context.Context) error {
	for _, name := range []string{"app", "workunit", "result"} {
		cs := needed[name]
		if _, err := d.ExecContext(ctx, "SELECT "+strings.Join(cs, ", ")+" FROM "+name+" WHERE 1 = 0"); err == nil {
			continue
		} else if _, terr := d.ExecContext(ctx, "SELECT 1 FROM "+name+" WHERE 1 = 0"); terr != nil {
			return fmt.Errorf("BOINC database %s has no usable table %s (is it a BOINC project's database?): %w", d.Target, name, terr)
		} else {
			for _, c := range cs {
				if _, cerr := d.ExecContext(ctx, "SELECT "+c+" FROM "+name+" WHERE 1 = 0"); cerr != nil {
					return fmt.Errorf("BOINC database %s: table %s lacks column %s, which rboinc needs (a BOINC server older than rboinc supports?): %w", d.Target, name, c, cerr)
				}
			}
			return fmt.Errorf("BOINC database %s: reading table %s: %w", d.Target, name, err)
		}
	}
	return nil
}
