// Package bufwriter is the store.Writer of stores that write an object in
// one request (the memory store, the simulation's store): it buffers what
// is written and hands it to a put function on Commit, so nothing is
// visible before Commit, and a cancelled context or a second Commit fails.
//
// Its behaviour is checked by the store conformance suite
// (store/storetest) through the memory store.
package bufwriter
