//go:build !race

package bufpool

// raceEnabled: the race detector makes sync.Pool drop items on purpose.
const raceEnabled = false
