package bench

import "testing"

// TestCheckParallel: a parallel run whose commits failed, or whose outcome
// is not the one its setup guarantees, is refused (the report then fails
// instead of printing a table of failures); the expected outcomes pass.
func TestCheckParallel(t *testing.T) {
	for _, c := range []struct {
		name                         string
		writers, partitions, commits int
		policy                       string
		run                          parallelRun
		ok                           bool
	}{
		{"distinct, all committed", 8, 8, 2, "fail", parallelRun{committed: 16}, true},
		{"one writer, all committed", 1, 1, 2, "fail", parallelRun{committed: 2}, true},
		{"distinct, other errors", 8, 8, 2, "fail", parallelRun{committed: 0, failed: 16}, false},
		{"distinct, a conflict", 8, 8, 2, "fail", parallelRun{committed: 15, conflicts: 1}, false},
		{"shared fail, one winner", 32, 1, 1, "fail", parallelRun{committed: 1, conflicts: 31}, true},
		{"shared fail, two winners", 32, 1, 1, "fail", parallelRun{committed: 2, conflicts: 30}, false},
		{"shared overwrite, some gave up", 32, 1, 1, "overwrite", parallelRun{committed: 20, conflicts: 12}, true},
		{"shared overwrite, none committed", 32, 1, 1, "overwrite", parallelRun{conflicts: 32}, false},
		{"shared, the layout refused every key", 32, 1, 1, "overwrite", parallelRun{failed: 32}, false},
	} {
		err := checkParallel(c.writers, c.partitions, c.commits, c.policy, []parallelRun{c.run})
		if (err == nil) != c.ok {
			t.Errorf("%s: checkParallel = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
