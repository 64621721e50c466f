//go:build !race

package sandbox

// raceDetector says the tests run with -race.
const raceDetector = false
