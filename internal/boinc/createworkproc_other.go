//go:build !unix

package boinc

import (
	"errors"
	"os"
	"syscall"
)

// Only the client programs are built for systems without Unix processes;
// the server, which runs create_work, is not. These keep the package
// building there.

func createWorkProcAttr() *syscall.SysProcAttr { return nil }

func killCreateWork(p *os.Process) error { return p.Kill() }

var errNoProcessGroups = errors.New("create_work runs only on Unix systems: its guard needs process groups")

func guardExecutable() (string, error) { return "", errNoProcessGroups }

func guardProcAttr(int) (*syscall.SysProcAttr, error) { return nil, errNoProcessGroups }
