package logging

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for rotation and retention.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)}
}

// rolledNames lists the rolled files in dir, sorted.
func rolledNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "iggy-server.log.") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

func write(t *testing.T, f *File, s string) {
	t.Helper()
	if _, err := f.Write([]byte(s)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func TestFileRollsBySize(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	f, err := OpenFile(FileConfig{Dir: dir, Name: "iggy-server.log", MaxFileSize: 100, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := strings.Repeat("x", 39) + "\n" // 40 bytes
	write(t, f, line)
	write(t, f, line) // 80 bytes: fits
	if got := rolledNames(t, dir); len(got) != 0 {
		t.Fatalf("rolled early: %v", got)
	}
	clk.Add(time.Second)
	write(t, f, line) // 120 > 100: rolls first
	got := rolledNames(t, dir)
	if len(got) != 1 || got[0] != "iggy-server.log.20260301T101501.000000000Z" {
		t.Fatalf("rolled = %v", got)
	}
	old, _ := os.ReadFile(filepath.Join(dir, got[0]))
	cur, _ := os.ReadFile(f.Path())
	if len(old) != 80 || len(cur) != 40 {
		t.Fatalf("rolled %d bytes, active %d bytes; want 80 and 40", len(old), len(cur))
	}
	st, _ := os.Stat(filepath.Join(dir, got[0]))
	if !st.ModTime().Equal(clk.Now()) {
		t.Errorf("rolled mtime %v, want the roll time %v", st.ModTime(), clk.Now())
	}
}

func TestFileRollsHourly(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	f, err := OpenFile(FileConfig{Dir: dir, Name: "iggy-server.log", MaxFileSize: 1 << 20, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write(t, f, "a\n")
	clk.Add(44 * time.Minute) // 10:59
	write(t, f, "b\n")
	if got := rolledNames(t, dir); len(got) != 0 {
		t.Fatalf("rolled within the hour: %v", got)
	}
	clk.Add(time.Minute) // 11:00
	write(t, f, "c\n")
	if got := rolledNames(t, dir); len(got) != 1 {
		t.Fatalf("no hourly roll: %v", got)
	}
	cur, _ := os.ReadFile(f.Path())
	if string(cur) != "c\n" {
		t.Fatalf("active file = %q", cur)
	}
}

func TestFileNeverRollsWithZeroSize(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	f, err := OpenFile(FileConfig{Dir: dir, Name: "iggy-server.log", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range 50 {
		write(t, f, strings.Repeat("y", 100))
		clk.Add(time.Hour)
	}
	if got := rolledNames(t, dir); len(got) != 0 {
		t.Fatalf("max_file_size 0 rolled: %v", got)
	}
}

func TestRetentionByAge(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	f, err := OpenFile(FileConfig{Dir: dir, Name: "iggy-server.log", MaxFileSize: 10, Retention: 3 * time.Hour, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// One roll per hour for 5 hours.
	for range 6 {
		write(t, f, "0123456789")
		clk.Add(time.Hour)
	}
	// Rolled at 11:15 .. 15:15; the roll at 15:15 swept the 11:15 file
	// (4 h > 3 h).
	if got := rolledNames(t, dir); len(got) != 4 || !strings.Contains(got[0], "T121500") {
		t.Fatalf("after rolls: %v", got)
	}
	clk.Add(2 * time.Hour) // 18:15: only the 15:15 file is not older than 3 h
	if err := f.Sweep(); err != nil {
		t.Fatal(err)
	}
	got := rolledNames(t, dir)
	if len(got) != 1 || !strings.Contains(got[0], "T151500") {
		t.Fatalf("after sweep at 18:15 with 3 h retention: %v", got)
	}
	if _, err := os.Stat(f.Path()); err != nil {
		t.Fatalf("active file deleted: %v", err)
	}
	clk.Add(24 * time.Hour)
	if err := f.Sweep(); err != nil {
		t.Fatal(err)
	}
	if got := rolledNames(t, dir); len(got) != 0 {
		t.Fatalf("expired files kept: %v", got)
	}
	if _, err := os.Stat(f.Path()); err != nil {
		t.Fatalf("active file deleted by retention: %v", err)
	}
}

func TestRetentionByTotalSizeAndCount(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	// keep = 35/10 = 3 files, and 35 bytes in total.
	f, err := OpenFile(FileConfig{Dir: dir, Name: "iggy-server.log", MaxFileSize: 10, MaxTotalSize: 35, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range 8 {
		write(t, f, "0123456789")
		clk.Add(time.Second)
	}
	got := rolledNames(t, dir)
	if len(got) != 3 {
		t.Fatalf("kept %d rolled files, want 3: %v", len(got), got)
	}
	// The newest three are kept: rolls happened at 10:15:01..10:15:07.
	for i, want := range []string{"T101505", "T101506", "T101507"} {
		if !strings.Contains(got[i], want) {
			t.Errorf("kept %v, want the newest (…%s…)", got, want)
		}
	}
	// A new 30-byte rolled file: the count rule drops the oldest, then
	// the total-size rule drops the next ones until 35 bytes fit.
	big := filepath.Join(dir, "iggy-server.log.20260301T101508.000000000Z")
	if err := os.WriteFile(big, make([]byte, 30), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(big, clk.Now(), clk.Now())
	if err := f.Sweep(); err != nil {
		t.Fatal(err)
	}
	got = rolledNames(t, dir)
	if len(got) != 1 || !strings.Contains(got[0], "T101508") {
		t.Fatalf("total-size rule: kept %v, want only the 30-byte newest", got)
	}
	// Unrelated files in the directory are never touched.
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, make([]byte, 100), 0o640)
	if err := f.Sweep(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("sweep deleted an unrelated file: %v", err)
	}
}

func TestFileAppendsToExisting(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "iggy-server.log"), []byte("before\n"), 0o640)
	f, err := OpenFile(FileConfig{Dir: dir, Name: "iggy-server.log"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, "after\n")
	f.Close()
	got, _ := os.ReadFile(filepath.Join(dir, "iggy-server.log"))
	if string(got) != "before\nafter\n" {
		t.Fatalf("file = %q", got)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("write after Close succeeded")
	}
}
