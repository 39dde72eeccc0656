package testwait_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vantagehq/vantage/pkg/testwait"
)

// recorder is a testing.TB whose Fatalf records the failure and ends only the goroutine of
// the Eventually under test (run), not the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls Eventually on its own goroutine, as Fatalf ends it, and returns the failure.
func run(t *testing.T, within time.Duration, cond func() error) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		testwait.Eventually(r, within, cond)
	}()
	<-done
	return r.failed
}

func TestEventuallyReturnsOnceCondHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		start := time.Now()
		failed := run(t, time.Minute, func() error {
			if calls.Add(1) < 5 {
				return errors.New("not yet")
			}
			return nil
		})
		if failed != "" {
			t.Fatalf("failed: %s", failed)
		}
		if calls.Load() != 5 {
			t.Fatalf("cond called %d times, want 5 (it stops at the first nil)", calls.Load())
		}
		// 1+2+4+8 ms of backoff: it does not wait out the minute.
		if d := time.Since(start); d != 15*time.Millisecond {
			t.Fatalf("returned after %s of fake time, want 15ms", d)
		}
	})
}

func TestEventuallyFailsWithTheLastError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		start := time.Now()
		failed := run(t, time.Second, func() error { return fmt.Errorf("state %d", calls.Add(1)) })
		if d := time.Since(start); d != time.Second {
			t.Fatalf("gave up after %s of fake time, want the full second", d)
		}
		n := calls.Load()
		want := fmt.Sprintf("not within 1s (asked %d times): state %d", n, n)
		if failed != want {
			t.Fatalf("failure %q, want %q", failed, want)
		}
		// Backoff reaches 100ms: about 1s/100ms tries after the first few, not 1s/1ms.
		if n < 10 || n > 20 {
			t.Fatalf("asked %d times in a second, want 10 to 20 (backoff to 100ms)", n)
		}
	})
}

func TestHoldsNamesWhatIsAwaited(t *testing.T) {
	held := false
	cond := testwait.Holds("the e-mail", func() bool { return held })
	if err := cond(); err == nil || !strings.Contains(err.Error(), "the e-mail") {
		t.Fatalf("not holding: %v, want an error naming what is awaited", err)
	}
	held = true
	if err := cond(); err != nil {
		t.Fatalf("holding: %v", err)
	}
}
