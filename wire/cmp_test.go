package wire

import (
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpDiff compares decoded values, treating nil and empty slices alike.
func cmpDiff(want, got any) string { return cmp.Diff(want, got, cmpopts.EquateEmpty()) }
