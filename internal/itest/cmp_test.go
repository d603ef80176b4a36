package itest

import "github.com/google/go-cmp/cmp/cmpopts"

// cmpEmpty treats nil and empty slices as equal.
var cmpEmpty = cmpopts.EquateEmpty()
