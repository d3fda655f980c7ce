package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pswap/pswap/partition"
)

// selector holds the flags that name partitions: --partition KEY, or
// --interval START/END mapped to keys by --grain and --layout.
type selector struct {
	partition string
	interval  string
	grain     string
	layout    string
	zone      string
}

// addFlags registers the selector's flags on fs.
func (s *selector) addFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&s.partition, "partition", "p", "", "partition key, Hive-style: dt=2026-11-29 or dt=2026-11-29/hr=13")
	fs.StringVarP(&s.interval, "interval", "i", "", "ISO 8601 interval START/END or START/DURATION (2026-11-29/2026-11-30, 2026-11-29T13:00:00Z/PT1H), mapped to a key by --grain/--layout")
	fs.StringVar(&s.grain, "grain", "", "partition grain for --interval: hour, day or month (default day, or the one --layout implies)")
	fs.StringVar(&s.layout, "layout", "", `partition layout for --interval: a grain name or columns such as "year=2006/month=01/day=02" (Go time formats; default dt=2006-01-02, dt=2006-01-02/hr=15 for hour, month=2006-01 for month)`)
	fs.StringVar(&s.zone, "time-zone", "", "IANA time zone of --interval's partitions (Europe/Berlin): days begin at local midnight and keys are local dates; "+
		"a commit that creates the table records it, and later commits must give the table's zone (default UTC)")
}

// parsedLayout returns the layout of --grain, --layout and --time-zone.
func (s *selector) parsedLayout() (partition.Layout, error) {
	l, err := parseLayout(s.grain, s.layout)
	if err != nil || s.zone == "" {
		return l, err
	}
	if l.Zone, err = partition.ParseZone(strings.TrimSpace(s.zone)); err != nil {
		return l, err
	}
	return l.Normalize()
}

// parseLayout returns the layout of --grain and --layout.
func parseLayout(grain, layout string) (partition.Layout, error) {
	var l partition.Layout
	if layout != "" {
		var err error
		if l, err = partition.ParseLayout(layout); err != nil {
			return l, layoutError(layout, err)
		}
	}
	if grain != "" {
		g, err := partition.ParseGrain(grain)
		if err != nil {
			return l, err
		}
		if l.Grain != 0 && l.Grain != g {
			return l, fmt.Errorf("%w: --grain %s disagrees with --layout %s", partition.ErrInvalidLayout, g, layout)
		}
		l.Grain = g
	}
	return l.Normalize()
}

// given reports whether any partition was named.
func (s *selector) given() bool { return s.partition != "" || s.interval != "" }

// check rejects contradictory flags.
func (s *selector) check() error {
	if s.partition != "" && s.interval != "" {
		return usagef("--partition and --interval are mutually exclusive")
	}
	if s.interval == "" && (s.grain != "" || s.layout != "") {
		return usagef("--grain and --layout apply to --interval (or status --from/--to)")
	}
	if s.interval == "" && s.zone != "" {
		return usagef("--time-zone applies to --interval: it maps the interval to the key of a local day (with --partition, the key is the local date already)")
	}
	return nil
}

// keys returns the partitions named: one for --partition, one per grain of
// --interval, none when neither is given.
func (s *selector) keys() ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.partition != "" {
		k, err := partition.Parse(strings.TrimSpace(s.partition))
		if err != nil {
			return nil, err
		}
		return []string{k.String()}, nil
	}
	if s.interval == "" {
		return nil, nil
	}
	l, err := s.parsedLayout()
	if err != nil {
		return nil, err
	}
	iv, err := l.ParseInterval(strings.TrimSpace(s.interval))
	if err != nil {
		return nil, err
	}
	ks, err := l.Keys(iv)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.String()
	}
	return out, nil
}

// one returns the single partition named, which is required: an interval
// must cover exactly one grain.
func (s *selector) one() (string, error) {
	if !s.given() {
		return "", usagef("name the partition with --partition KEY or --interval START/END")
	}
	if err := s.check(); err != nil {
		return "", err
	}
	if s.partition != "" {
		return s.keys1()
	}
	l, err := s.parsedLayout()
	if err != nil {
		return "", err
	}
	iv, err := l.ParseInterval(strings.TrimSpace(s.interval))
	if err != nil {
		return "", err
	}
	k, err := l.Key(iv)
	if errors.Is(err, partition.ErrUnaligned) {
		if ks, kerr := l.Keys(iv); kerr == nil && len(ks) > 1 {
			return "", fmt.Errorf("%w: --interval %s covers %d %s partitions (%s ... %s), and a commit writes exactly one: run one commit per %s",
				partition.ErrUnaligned, iv, len(ks), l.Grain, ks[0], ks[len(ks)-1], l.Grain)
		}
		hint := ""
		if _, remedy, ok := strings.Cut(err.Error(), " (a table's "); ok && l.Zone == "" {
			hint = " (a table's " + remedy // a day that begins at local midnight: name --time-zone
		}
		return "", fmt.Errorf("%w: --interval %s does not cover exactly one %s partition%s: give the partition's start and end, e.g. 2026-11-29/2026-11-30 for a day%s",
			partition.ErrUnaligned, iv, l.Grain, zoneIn(l), hint)
	}
	if err != nil {
		return "", err
	}
	return k.String(), nil
}

// zoneIn names a zoned layout's zone for messages: " in Europe/Berlin".
func zoneIn(l partition.Layout) string {
	if l.Zone == "" {
		return ""
	}
	return " in " + l.Zone
}

// layoutError explains a --layout that does not parse in the user's words:
// layouts are Go time formats, written with Go's reference date.
func layoutError(layout string, err error) error {
	why := ""
	if _, after, ok := strings.Cut(err.Error(), "(the formats must "); ok {
		why = " (the formats must " + after
	}
	return fmt.Errorf("%w: --layout %q: write each column's format with Go's reference date, "+
		"Mon Jan 2 15:04:05 2006: dt=2006-01-02, year=2006/month=01/day=02, dt=2006-01-02/hr=15 or month=2006-01, "+
		"not a date of your own%s", partition.ErrInvalidLayout, layout, why)
}

func (s *selector) keys1() (string, error) {
	ks, err := s.keys()
	if err != nil {
		return "", err
	}
	return ks[0], nil
}

// note describes the selection for a message: "" for the whole table,
// " for dt=2026-11-29", " in 2026-11-01/2026-12-01".
func (s *selector) note() string {
	switch {
	case s.partition != "":
		return " for " + s.partition
	case s.interval != "":
		return " in " + s.interval
	}
	return ""
}
