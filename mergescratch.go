package pswap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// mergeScratchPrefix names a merge's scratch folder in its TempDir:
// pswap-merge-<pid>-<random>. The process id lets the next merge tell a
// folder that a killed merge left behind (its process is gone) from one
// that a running merge uses.
const mergeScratchPrefix = "pswap-merge-"

// newMergeScratch removes the scratch folders of merges whose process is
// gone from dir (default os.TempDir()), then makes this merge's.
func newMergeScratch(dir string) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	removeStaleScratch(dir)
	return os.MkdirTemp(dir, fmt.Sprintf("%s%d-*", mergeScratchPrefix, os.Getpid()))
}

// removeStaleScratch removes dir's merge scratch folders whose process no
// longer runs. A folder it cannot attribute (another name, a process it
// cannot check) is left alone; so is everything on Windows, where a
// process cannot be probed with signal 0.
func removeStaleScratch(dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), mergeScratchPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processRuns(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// processRuns reports whether process pid exists (signal 0: an existing
// process of another user answers EPERM, which counts as running).
func processRuns(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
