//go:build !linux

package main

// dropPageCache is Linux only; elsewhere the reads start with whatever
// the page cache holds.
func dropPageCache() bool { return false }
