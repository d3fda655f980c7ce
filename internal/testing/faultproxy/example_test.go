package faultproxy_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/pswap/pswap/internal/testing/faultproxy"
)

// A proxy in front of a server answers 1 request in 4 with a fault, chosen
// among SlowDown and Conflict; the client's endpoint becomes p.URL.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	p, err := faultproxy.Start(srv.URL)
	if err != nil {
		panic(err)
	}
	defer p.Close()
	p.SetRule(faultproxy.Mix{Rate: 0.25, Seed: 1,
		Weights: map[faultproxy.Action]float64{faultproxy.SlowDown: 1, faultproxy.Conflict: 1}}.Rule())
	statuses := map[int]int{}
	for range 100 {
		resp, err := http.Get(p.URL + "/bucket/key")
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		statuses[resp.StatusCode]++
	}
	fmt.Println(statuses[200]+statuses[503]+statuses[409] == 100, p.Injected() == int64(statuses[503]+statuses[409]))
	// Output: true true
}
