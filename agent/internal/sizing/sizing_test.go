package sizing

import (
	"syscall"
	"testing"
)

func TestConcurrency(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		m    Machine
		want int
	}{
		{"file descriptors bound", Machine{NoFile: 1024, Memory: 64 << 30}, (1024 - ReservedFDs) / FDsPerProbe},
		{"memory bound", Machine{NoFile: 1 << 20, Memory: 2 << 30}, (2 << 30) / MemoryShare / MemoryPerProbe},
		{"never below the minimum", Machine{NoFile: 100, Memory: 1 << 20}, Min},
		{"never above the maximum", Machine{NoFile: 1 << 30, Memory: 1 << 50}, Max},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Concurrency(tt.m); got != tt.want {
				t.Errorf("Concurrency(%+v) = %d, want %d", tt.m, got, tt.want)
			}
		})
	}
}

func TestProbeRaisesTheSoftFileLimit(t *testing.T) {
	var before syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &before); err != nil {
		t.Fatal(err)
	}
	m, err := Probe()
	if err != nil {
		t.Fatal(err)
	}
	if m.NoFile != before.Max {
		t.Errorf("soft RLIMIT_NOFILE after Probe = %d, want the hard limit %d", m.NoFile, before.Max)
	}
	if m.Memory < 64<<20 {
		t.Errorf("memory %d, want the machine's", m.Memory)
	}
}
