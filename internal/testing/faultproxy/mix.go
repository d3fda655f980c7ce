package faultproxy

import (
	"math/rand/v2"
	"sync"
)

// Faults are the actions that inject a failure, in a fixed order.
var Faults = []Action{DropReply, Reset, SlowDown, Internal, Conflict, Delay, ReplyThen503, SlowReply}

// Mix is a random mix of faults. The zero value passes everything.
type Mix struct {
	// Rate is the probability that a matching request gets a fault (0..1).
	Rate float64
	// Weights are the relative odds of each fault; nil gives every action of
	// Faults the same odds. Pass in the map, or a weight <= 0, excludes an action.
	Weights map[Action]float64
	// Match selects the requests that may get a fault (nil: all).
	Match func(Request) bool
	// Seed makes the sequence of draws reproducible for one goroutine
	// order (0: random).
	Seed uint64
}

// Rule returns a rule for Proxy.SetRule that draws each request's action
// from the mix. It is safe for concurrent use.
func (m Mix) Rule() func(Request) Action {
	type choice struct {
		a Action
		w float64
	}
	var choices []choice
	total := 0.0
	for _, a := range Faults {
		w := 1.0
		if m.Weights != nil {
			w = m.Weights[a]
		}
		if w > 0 && a != Pass {
			choices = append(choices, choice{a, w})
			total += w
		}
	}
	seed := m.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func(r Request) Action {
		if total == 0 || m.Rate <= 0 || (m.Match != nil && !m.Match(r)) {
			return Pass
		}
		mu.Lock()
		defer mu.Unlock()
		if rng.Float64() >= m.Rate {
			return Pass
		}
		x := rng.Float64() * total
		for _, c := range choices {
			if x < c.w {
				return c.a
			}
			x -= c.w
		}
		return choices[len(choices)-1].a
	}
}
