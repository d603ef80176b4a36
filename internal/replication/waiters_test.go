package replication

import "testing"

func TestWaiters(t *testing.T) {
	w := NewWaiters[int]()
	a, ca := w.Add()
	b, _ := w.Add()
	if a == b || a == 0 || b == 0 {
		t.Fatalf("nonces %d %d", a, b)
	}
	if !w.Deliver(a, 7) || <-ca != 7 {
		t.Fatal("the waiter did not get its value")
	}
	if w.Deliver(a, 8) {
		t.Fatal("a nonce is delivered once")
	}
	w.Remove(b)
	if w.Deliver(b, 9) {
		t.Fatal("a removed waiter got a value")
	}
}
