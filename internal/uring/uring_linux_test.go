//go:build linux && (amd64 || arm64)

package uring

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// TestFdatasync syncs files from more goroutines than there are rings;
// where io_uring is refused the test says so and checks the refusal.
func TestFdatasync(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Fdatasync(f); errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("io_uring not available here: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3*MaxRings)
	for i := range 3 * MaxRings {
		wg.Go(func() {
			g, err := os.Create(filepath.Join(dir, "f"+string(rune('a'+i%26))+string(rune('a'+i/26))))
			if err != nil {
				errs <- err
				return
			}
			defer g.Close()
			for range 5 {
				if _, err := g.Write(make([]byte, 4096)); err != nil {
					errs <- err
					return
				}
				if err := Fdatasync(g); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rings.mu.Lock()
	made := rings.made
	rings.mu.Unlock()
	if made > MaxRings {
		t.Fatalf("%d rings made, at most %d allowed", made, MaxRings)
	}
}

// TestFdatasyncErrors: the kernel's refusal of the sync itself is the
// caller's error, not a reason to give up the rings.
func TestFdatasyncErrors(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "probe"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Fdatasync(f); errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("io_uring not available here: %v", err)
	}
	f.Close()
	if err := Fdatasync(f); err == nil || errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("sync of a closed file: %v, want an error of its own", err)
	}
	// A pipe cannot be synced: the kernel answers EINVAL in the
	// completion.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	err = Fdatasync(w)
	var pe *os.PathError
	if !errors.As(err, &pe) || !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("sync of a pipe: %v, want EINVAL in a PathError", err)
	}
	g, err := os.Create(filepath.Join(t.TempDir(), "after"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := Fdatasync(g); err != nil {
		t.Fatalf("sync after failed ones: %v", err)
	}
}

// TestGiveUpReleasesWaiters: callers waiting for a ring when io_uring is
// given up get the refusal, and so does every later caller.
func TestGiveUpReleasesWaiters(t *testing.T) {
	p := &pool{free: make(chan *ring, MaxRings), off: make(chan struct{}), made: MaxRings} // every ring busy
	got := make(chan error, 1)
	go func() {
		_, err := p.get()
		got <- err
	}()
	if err := p.giveUp(errRingBroken); !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, errRingBroken) {
		t.Fatalf("giveUp: %v", err)
	}
	if err := <-got; !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("waiter: %v, want errors.ErrUnsupported", err)
	}
	if _, err := p.get(); !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, errRingBroken) {
		t.Fatalf("later caller: %v, want the first cause", err)
	}
	if err := p.giveUp(errors.New("second")); errors.Is(err, errors.New("second")) || !errors.Is(err, errRingBroken) {
		t.Fatalf("second giveUp changed the cause: %v", err)
	}
}
