// Package boinctest plays, for tests and benchmarks, the part of BOINC
// that computes work units: it makes the stand-in's work units finished,
// with a canonical result whose outputs are in the upload hierarchy, and
// ready for assimilation, as BOINC's volunteer, validator and transitioner
// would leave them, without running anything.
package boinctest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
)

// Outputs are the contents of the outputs each finished work unit gets
// (the example langevin application's three).
var Outputs = []string{"4 5 6\n", "0.1 0.1 0.1\n", "log\n"}

// FinishAll finishes every work unit of the project's database not decided
// yet: a canonical result named <wu>_0 whose outputs
// <wu>_0_r1804289383_<k> hold Outputs, the work unit ready for
// assimilation; with fail(name) true, error mask 2 (too many errors)
// instead. It returns how many it finished.
func FinishAll(ctx context.Context, db *boincdb.DB, p *boinc.Project, fail func(string) bool) (int, error) {
	return Finish(ctx, db, p, fail, nil)
}

// Finish is FinishAll for the work units whose names only accepts (nil:
// all of them).
func Finish(ctx context.Context, db *boincdb.DB, p *boinc.Project, fail, only func(string) bool) (int, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, name, appid FROM workunit
		WHERE assimilate_state = ? AND canonical_resultid = 0 AND error_mask = 0 ORDER BY id`, boincdb.AssimilateInit)
	if err != nil {
		return 0, err
	}
	type wu struct {
		id, app int64
		name    string
	}
	var wus []wu
	for rows.Next() {
		var w wu
		if err := rows.Scan(&w.id, &w.name, &w.app); err != nil {
			rows.Close()
			return 0, err
		}
		if only == nil || only(w.name) {
			wus = append(wus, w)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	// One transaction per thousand work units, as a busy project's daemons
	// would commit them.
	for start := 0; start < len(wus); start += 1000 {
		part := wus[start:min(start+1000, len(wus))]
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			for _, w := range part {
				if err := finish(ctx, tx, p, w.id, w.app, w.name, fail); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return len(wus), nil
}

func finish(ctx context.Context, tx *sql.Tx, p *boinc.Project, id, app int64, name string, fail func(string) bool) error {
	if fail != nil && fail(name) {
		_, err := tx.ExecContext(ctx, `UPDATE workunit SET error_mask = ?, assimilate_state = ? WHERE id = ?`,
			boincdb.ErrTooManyErrors, boincdb.AssimilateReady, id)
		return err
	}
	var infos, refs strings.Builder
	for k, c := range Outputs {
		out := fmt.Sprintf("%s_0_r1804289383_%d", name, k)
		path := p.UploadPath(out)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&infos, "<file_info>\n    <name>%s</name>\n</file_info>\n", out)
		fmt.Fprintf(&refs, "    <file_ref>\n        <file_name>%s</file_name>\n        <open_name>out%d</open_name>\n    </file_ref>\n", out, k)
	}
	r := &boincdb.Result{WorkunitID: id, Name: name + "_0", ServerState: boincdb.ServerOver, Outcome: boincdb.OutcomeSuccess,
		AppID: app, XMLDocIn: infos.String() + "<result>\n    <name>" + name + "_0</name>\n" + refs.String() + "</result>\n",
		ValidateState: boincdb.ValidateValid, SizeClass: -1, ElapsedTime: 1}
	if err := r.Insert(ctx, tx); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE workunit SET canonical_resultid = ?, assimilate_state = ?, transition_time = ? WHERE id = ?`,
		r.ID, boincdb.AssimilateReady, boincdb.Never, id)
	return err
}
