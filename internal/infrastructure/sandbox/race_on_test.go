//go:build race

package sandbox

// raceDetector says the tests run with -race: the attack table then runs its full-machine
// column only, each sandboxed process being a slow race-enabled binary.
const raceDetector = true
