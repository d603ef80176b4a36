//go:build !race

package partition

// simRace: the race detector slows the simulation about fivefold, so
// TestSim runs fewer seeds by default.
const simRace = false
