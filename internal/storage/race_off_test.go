//go:build !race

package storage

// raceEnabled: the race detector makes sync.Pool drop items on purpose.
const raceEnabled = false
