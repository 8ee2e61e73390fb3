// Package fsync makes many new files durable at the price of one journal
// commit instead of one per file: each file's data is written out without
// a commit (Data), then one Barrier commits the names, sizes and links of
// them all. On a journaling file system (ext4, XFS) a commit carries every
// metadata change made before it. Without a journal nothing orders them,
// and a Barrier makes only its own directory durable.
package fsync

import (
	"fmt"
	"os"
)

// DataPath writes the data of the file at path out to the disk and waits
// for it (Data).
func DataPath(path string) error {
	f, err := OpenRead(path)
	if err != nil {
		return err
	}
	err = Data(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Barrier makes every metadata change made so far on dir's file system
// durable: it changes dir itself (touchDir), so that the commit an fsync
// of dir forces is the latest, and a commit carries all before it. It
// needs only the right to write in dir, and leaves nothing there, also
// when the process is killed during it.
func Barrier(dir string) error {
	if err := touchDir(dir); err != nil {
		return err
	}
	return Dir(dir)
}

// Dir fsyncs a directory: the names in it are durable once it returns.
func Dir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// DataAll is DataPath for many files: it starts the writes of up to
// dataWindow of them before it waits for the first, so the disk gets them
// together instead of one wait per file, and opens each file once.
func DataAll(paths []string) error {
	open := make([]*os.File, 0, min(len(paths), dataWindow))
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	// wait makes the oldest started file durable and closes it.
	wait := func() error {
		f := open[0]
		open = open[1:]
		err := Data(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s to disk: %w", f.Name(), err)
		}
		return nil
	}
	for _, p := range paths {
		if len(open) == dataWindow {
			if err := wait(); err != nil {
				return err
			}
		}
		f, err := OpenRead(p)
		if err != nil {
			return err
		}
		open = append(open, f)
		if err := StartData(f); err != nil {
			return fmt.Errorf("writing %s to disk: %w", p, err)
		}
	}
	for len(open) > 0 {
		if err := wait(); err != nil {
			return err
		}
	}
	return nil
}

// dataWindow bounds the files DataAll holds open at once.
const dataWindow = 512

// WaitData makes the data of files whose writes were started (StartData)
// durable: each is waited for, and written now if it was not started.
func WaitData(paths []string) error {
	for _, p := range paths {
		if err := DataPath(p); err != nil {
			return err
		}
	}
	return nil
}
