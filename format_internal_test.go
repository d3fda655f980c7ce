package pswap

import "testing"

// The facade's formats are the names internal/inputfiles guesses: AddPath
// dispatches on them.
func TestFormatsAreInputfilesNames(t *testing.T) {
	for name, want := range map[string]Format{"a.parquet": FormatParquet, "a.csv": FormatCSV, "a.jsonl": FormatJSONL} {
		if got, err := formatOf(name); got != want || err != nil {
			t.Errorf("formatOf(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}
