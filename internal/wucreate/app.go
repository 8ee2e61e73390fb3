package wucreate

import (
	"context"
	"os"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/boincdb"
)

// AppID finds the app in BOINC's app table (0 when it is not there). The
// stand-in (standin true) declares an app by its program,
// <project>/apps/<app>/run; one declared so and not in the table yet is
// added, as xadd would add it from project.xml.
func AppID(ctx context.Context, db boincdb.Execer, projectDir, app string, standin bool) (int64, error) {
	id, found, err := boincdb.AppID(ctx, db, app)
	if err != nil || found || !standin {
		return id, err
	}
	if !appExists(projectDir, app) {
		return 0, nil
	}
	return boincdb.AddApp(ctx, db, app)
}

// appExists stands in for BOINC's app table: an app exists when
// <project>/apps/<app>/run is an executable file.
func appExists(projectDir, app string) bool {
	if BadPhysicalName(app) {
		return false
	}
	fi, err := os.Stat(filepath.Join(projectDir, "apps", app, "run"))
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// AppKnown says, without changing anything, whether work units of app can
// be created: the app is in BOINC's app table or, on the stand-in
// (standin true), declared by its program.
func AppKnown(ctx context.Context, db boincdb.Execer, projectDir, app string, standin bool) (bool, error) {
	_, found, err := boincdb.AppID(ctx, db, app)
	if err != nil || found {
		return found, err
	}
	return standin && appExists(projectDir, app), nil
}
