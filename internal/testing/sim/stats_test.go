package sim

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var digits = regexp.MustCompile(`g\d+|\d+`)

// TestOutcomeMix prints how the actors of 200 seeds ended, to see which
// paths of the protocol the scenarios reach.
func TestOutcomeMix(t *testing.T) {
	if os.Getenv("PSWAP_SIM_MIX") == "" {
		t.Skip("set PSWAP_SIM_MIX=<plant number> to print the outcome mix of 200 seeds")
	}
	mix := map[string]int{}
	faults := map[string]int{}
	viol := 0
	var plant Plant
	fmt.Sscan(os.Getenv("PSWAP_SIM_MIX"), &plant)
	for seed := uint64(1); seed <= 200; seed++ {
		c := Scenario(seed)
		c.Plant = plant
		r := Run(c)
		if r.Violation != nil {
			viol++
		}
		for _, o := range r.Outcomes {
			_, after, _ := strings.Cut(o, ": ")
			after = digits.ReplaceAllString(after, "N")
			if len(after) > 90 {
				after = after[:90]
			}
			mix[after]++
		}
		for _, e := range r.Trace {
			if strings.HasPrefix(e.Actor, "gc") && strings.HasPrefix(e.Request, "delete-many") {
				mix["gc delete-many "+digits.ReplaceAllString(e.Request[len("delete-many"):], "N")[:30]]++
			}
		}
		for k, v := range r.Faults {
			faults[k] += v
		}
	}
	var ks []string
	for k := range mix {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		fmt.Printf("%5d %s\n", mix[k], k)
	}
	fmt.Println(faults, "violations", viol)
}
