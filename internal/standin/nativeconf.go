package standin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/beevik/etree"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/boinc"
)

// SetNativeAssimilator makes the stand-in's config.xml run rboinc's native
// assimilator with command cmd (its log and pid files named after name),
// replacing any other native assimilator entry; an empty cmd removes them,
// and the stand-in then runs the hook as script_assimilator would. The
// rest of config.xml is kept as it is.
func SetNativeAssimilator(dir, cmd, name string) error {
	path := filepath.Join(dir, "config.xml")
	doc := etree.NewDocument()
	if err := doc.ReadFromFile(path); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	root := doc.Root()
	if root == nil {
		return fmt.Errorf("%s: no root element", path)
	}
	daemons := root.SelectElement("daemons")
	if daemons == nil {
		if cmd == "" {
			return nil
		}
		daemons = root.CreateElement("daemons")
	}
	changed, present := false, false
	for _, d := range daemons.SelectElements("daemon") {
		c := d.SelectElement("cmd")
		if c == nil {
			continue
		}
		text := strings.TrimSpace(c.Text())
		if _, native := boinc.NativeAssimilatorArgs(text); !native {
			continue
		}
		if text == cmd && !present {
			present = true
			continue
		}
		daemons.RemoveChild(d)
		changed = true
	}
	if cmd != "" && !present {
		d := daemons.CreateElement("daemon")
		d.CreateElement("cmd").SetText(cmd)
		d.CreateElement("output").SetText(name + ".log")
		d.CreateElement("pid_file").SetText(name + ".pid")
		changed = true
	}
	if !changed {
		return nil
	}
	doc.Indent(4)
	out, err := doc.WriteToString()
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm() // private when it holds rboinc_db_url's password
	}
	return atomicfile.Write(path, []byte(out), mode)
}
