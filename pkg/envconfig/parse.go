package envconfig

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"
)

// The parsers below are the kinds of value both binaries read; each error says what the value
// must be, and quotes the value unless it may be a secret.

// Text takes the value as it is.
func Text(s string) (string, error) { return s, nil }

// Bool reads true or false (and the other forms of strconv.ParseBool).
func Bool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("must be true or false, got %q", s)
	}
	return b, nil
}

// Addr reads a listen address, host:port or :port.
func Addr(s string) (string, error) {
	if _, _, err := net.SplitHostPort(s); err != nil {
		return "", fmt.Errorf("must be host:port or :port, got %q", s)
	}
	return s, nil
}

// Level reads a log level.
func Level(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("must be debug, info, warn or error, got %q", s)
	}
	return l, nil
}

// Secret reads a secret of at least minLen characters; its error never shows the value.
func Secret(minLen int) func(string) (string, error) {
	return func(s string) (string, error) {
		if len(s) < minLen {
			return "", fmt.Errorf("must be at least %d characters", minLen)
		}
		return s, nil
	}
}

// PositiveDuration reads a duration above zero; example is shown in the error.
func PositiveDuration(example string) func(string) (time.Duration, error) {
	return durationWhere(func(d time.Duration) bool { return d > 0 }, "a positive duration such as "+example)
}

// Duration reads a duration of zero or more; example is shown in the error.
func Duration(example string) func(string) (time.Duration, error) {
	return durationWhere(func(d time.Duration) bool { return d >= 0 }, "a duration such as "+example)
}

// DurationAtLeast reads a duration of min or more; example is shown in the error.
func DurationAtLeast(minimum time.Duration, example string) func(string) (time.Duration, error) {
	return durationWhere(func(d time.Duration) bool { return d >= minimum },
		fmt.Sprintf("a duration of at least %s such as %s", minimum, example))
}

// DurationFrom reads a duration from minimum to maximum.
func DurationFrom(minimum, maximum time.Duration) func(string) (time.Duration, error) {
	return durationWhere(func(d time.Duration) bool { return d >= minimum && d <= maximum },
		fmt.Sprintf("a duration from %s to %s", minimum, maximum))
}

func durationWhere(ok func(time.Duration) bool, what string) func(string) (time.Duration, error) {
	return func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil || !ok(d) {
			return 0, fmt.Errorf("must be %s, got %q", what, s)
		}
		return d, nil
	}
}

// IntFrom reads a whole number from minimum to maximum.
func IntFrom(minimum, maximum int) func(string) (int, error) {
	return IntWhere(func(n int) bool { return n >= minimum && n <= maximum },
		fmt.Sprintf("a whole number from %d to %d", minimum, maximum))
}

// IntAtLeast reads a whole number of minimum or more.
func IntAtLeast(minimum int) func(string) (int, error) {
	return IntWhere(func(n int) bool { return n >= minimum }, fmt.Sprintf("a whole number of at least %d", minimum))
}

// IntWhere reads a whole number that ok accepts; what says what it must be ("a whole number
// of days from 1 to 3650").
func IntWhere(ok func(int) bool, what string) func(string) (int, error) {
	return func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || !ok(n) {
			return 0, fmt.Errorf("must be %s, got %q", what, s)
		}
		return n, nil
	}
}
