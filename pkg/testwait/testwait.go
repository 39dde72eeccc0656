// Package testwait is the tests' one way to wait for something another goroutine or process
// does: Eventually polls a condition instead of sleeping a guessed time (the nats-server
// tests' checkFor).
package testwait

import (
	"errors"
	"testing"
	"time"
)

// Polling starts fast, so that a condition met at once costs a millisecond, and backs off to
// maxInterval, so that a slow one does not load a shared machine with queries.
const (
	firstInterval = time.Millisecond
	maxInterval   = 100 * time.Millisecond
)

// Eventually calls cond until it returns nil. If within passes first, it fails the test with
// cond's last error, how long it waited and how many times it asked. cond runs once more at
// the deadline, so a condition met just in time passes.
func Eventually(t testing.TB, within time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	interval := firstInterval
	for tries := 1; ; tries++ {
		err := cond()
		if err == nil {
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("not within %s (asked %d times): %v", within, tries, err)
		}
		time.Sleep(min(interval, left))
		interval = min(2*interval, maxInterval)
	}
}

// Holds is cond as a condition of Eventually: its error says that what has not happened yet.
func Holds(what string, cond func() bool) func() error {
	return func() error {
		if cond() {
			return nil
		}
		return errors.New("still waiting for " + what)
	}
}
