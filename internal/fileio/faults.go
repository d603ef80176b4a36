package fileio

import (
	"os"
	"path/filepath"
	"sync"
)

// Op is a set of file operations a Rule applies to.
type Op uint8

// The operations of IO, as bits of an Op set.
const (
	OpWrite    Op = 1 << iota // WriteAt and Write
	OpSync                    // Sync
	OpTruncate                // Truncate
	OpAllocate                // Allocate
	// OpAll is every operation.
	OpAll = OpWrite | OpSync | OpTruncate | OpAllocate
)

// Rule says which calls of a Faults fail and how.
type Rule struct {
	// Ops are the operations the rule applies to; 0 means OpAll.
	Ops Op
	// Name is a filepath.Match pattern matched against the base name of
	// the file ("*.log", "journal-*"); empty matches every file.
	Name string
	// After is how many matching calls pass before the rule fires: the
	// call number After+1 is the first to fail.
	After int
	// Times is how many calls fail before the rule is spent; 0 means
	// every matching call from then on, until Clear.
	Times int
	// Err is what a failing call returns (syscall.EIO, syscall.ENOSPC).
	Err error
	// Partial, for writes, is how many bytes of the buffer are really
	// written before the error is returned (a short write, as a file
	// system that runs out of space in the middle of a write does);
	// capped at the buffer's length.
	Partial int
}

// Faults is an IO that passes calls to Base and fails the ones its rules
// select. The zero value (with Base set) injects nothing. It is safe for
// concurrent use; rules may be added and cleared while the IO is in use.
type Faults struct {
	// Base performs the calls that do not fail. Set it before first use.
	Base IO

	mu       sync.Mutex
	rules    []*ruleState // guarded by mu
	injected int          // failed calls so far; guarded by mu
}

type ruleState struct {
	Rule
	seen, failed int
}

var _ IO = (*Faults)(nil)

// Add installs r; rules are checked in the order they were added and the
// first one that fires decides the call.
func (f *Faults) Add(r Rule) {
	if r.Ops == 0 {
		r.Ops = OpAll
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &ruleState{Rule: r})
}

// Clear removes every rule: later calls all pass (the disk "recovered").
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// Injected returns how many calls failed so far.
func (f *Faults) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// fault returns the rule that fails this call, or nil.
func (f *Faults) fault(op Op, file *os.File) *Rule {
	f.mu.Lock()
	defer f.mu.Unlock()
	var base string
	for _, r := range f.rules {
		if r.Ops&op == 0 || (r.Times > 0 && r.failed >= r.Times) {
			continue
		}
		if r.Name != "" {
			if base == "" {
				base = filepath.Base(file.Name())
			}
			if ok, _ := filepath.Match(r.Name, base); !ok {
				continue
			}
		}
		r.seen++
		if r.seen <= r.After {
			continue
		}
		r.failed++
		f.injected++
		rule := r.Rule
		return &rule
	}
	return nil
}

// WriteAt implements IO.
func (f *Faults) WriteAt(file *os.File, b []byte, off int64) (int, error) {
	if r := f.fault(OpWrite, file); r != nil {
		return f.partial(r, b, func(p []byte) (int, error) { return f.Base.WriteAt(file, p, off) })
	}
	return f.Base.WriteAt(file, b, off)
}

// Write implements IO.
func (f *Faults) Write(file *os.File, b []byte) (int, error) {
	if r := f.fault(OpWrite, file); r != nil {
		return f.partial(r, b, func(p []byte) (int, error) { return f.Base.Write(file, p) })
	}
	return f.Base.Write(file, b)
}

// partial writes the first r.Partial bytes of b with write and returns
// r.Err.
func (f *Faults) partial(r *Rule, b []byte, write func([]byte) (int, error)) (int, error) {
	n := min(max(r.Partial, 0), len(b))
	if n == 0 {
		return 0, r.Err
	}
	w, err := write(b[:n])
	if err != nil {
		return w, err
	}
	return w, r.Err
}

// Sync implements IO.
func (f *Faults) Sync(file *os.File) error {
	if r := f.fault(OpSync, file); r != nil {
		return r.Err
	}
	return f.Base.Sync(file)
}

// Truncate implements IO.
func (f *Faults) Truncate(file *os.File, size int64) error {
	if r := f.fault(OpTruncate, file); r != nil {
		return r.Err
	}
	return f.Base.Truncate(file, size)
}

// Allocate implements IO.
func (f *Faults) Allocate(file *os.File, n int64) error {
	if r := f.fault(OpAllocate, file); r != nil {
		return r.Err
	}
	return f.Base.Allocate(file, n)
}
