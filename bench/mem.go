package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ErrNoPeakRSS: a /proc/<pid>/status document without a VmHWM line.
var ErrNoPeakRSS = errors.New("no VmHWM line")

// PeakRSS returns this process's peak resident set size in bytes (VmHWM
// of /proc/self/status; Linux only).
func PeakRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("bench: peak RSS: %w", err)
	}
	defer f.Close()
	return ParsePeakRSS(f)
}

// ParsePeakRSS reads the VmHWM line of a /proc/<pid>/status document
// ("VmHWM:    123456 kB") and returns it in bytes.
func ParsePeakRSS(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("bench: malformed VmHWM line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<53/1024 {
			return 0, fmt.Errorf("bench: malformed VmHWM value %q", fields[0])
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("bench: read status: %w", err)
	}
	return 0, fmt.Errorf("bench: %w", ErrNoPeakRSS)
}
