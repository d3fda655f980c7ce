package sim

import (
	"strings"
	"testing"
)

// A writer killed between two requests goes on running its own code (only
// its requests fail) while the world moves on: whatever it shares with the
// actor that follows it must be written under the world's lock. Here a
// facade writer with a prefetch, whose publisher starts once it is done, is
// killed at one of its requests in turn; under -race an unlocked write of
// the publisher's slot is a race report (it once was: the writer set
// the slot's Writer after a kill at its prefetch's request).
func TestKilledWriterBesidePublisher(t *testing.T) {
	killed := 0
	for seed := uint64(1); seed <= 60; seed++ {
		cfg := Scenario(seed)
		cfg.Writers = []WriterSpec{{
			ActorSpec: ActorSpec{Partition: cfg.Partitions[0]},
			RunID:     "run-1", Facade: true, Files: 1, Prefetch: true,
		}}
		cfg.Rollbacks, cfg.GCs, cfg.Readers, cfg.Reconcilers, cfg.IceReaders = nil, nil, nil, nil, nil
		cfg.Publish, cfg.PrefetchPublish = map[int]bool{1: true}, nil
		cfg.FaultRate, cfg.KillRate = 0, 0.25
		cfg.Focus = "killed-writer"
		r := Run(cfg)
		if r.Violation != nil {
			t.Fatalf("seed %d: %v\n%s", seed, r.Violation, r.Format())
		}
		for _, o := range r.Outcomes {
			if strings.HasSuffix(o, ": killed") {
				killed++
			}
		}
	}
	t.Logf("%d kills in 60 runs", killed)
	if killed < 10 {
		t.Fatalf("only %d of 60 runs killed an actor: the test does not test kills", killed)
	}
}
