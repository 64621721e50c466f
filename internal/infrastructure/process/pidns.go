package process

import "sync/atomic"

// pidNamespaces says whether the programs of shell steps start in a PID namespace of their
// own: on Linux it starts true when awf is root and turns false at the first refusal; other
// systems have none.
var pidNamespaces atomic.Bool
