// Package sizing derives the agent's default number of probes in flight from the machine it
// runs on, instead of a small constant: each probe in flight holds file descriptors and memory,
// so the bound is whichever of the two runs out first.
//
//   - File descriptors: at start the soft RLIMIT_NOFILE is raised to the hard limit (a process
//     may do that without privileges; the Go runtime does it too, since Go 1.19, but the agent
//     does not rely on it and reads the limit it got). ReservedFDs are kept for the agent itself (NATS, the
//     gRPC stream, its listeners, the browser's pipes, log files); each probe may hold
//     FDsPerProbe (a socket, and a second while a DNS lookup or a happy-eyeballs race runs).
//   - Memory: the cgroup's memory limit (memory.max), or the machine's memory when there is
//     none. A quarter of it goes to probes — the rest is for the Go runtime, the results
//     waiting for their acks and the browser — at MemoryPerProbe each: a goroutine stack, the
//     connection's read and write buffers, a TLS session, and the part of the body the
//     assertions read.
//
// The result is capped at Max. The numbers are the sizing the README's agent configuration
// section documents; VANTAGE_AGENT_CONCURRENCY overrides the result.
package sizing

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The sizing's figures (see the package documentation).
const (
	ReservedFDs    = 256       // descriptors kept for the agent itself
	FDsPerProbe    = 2         // descriptors one probe in flight may hold
	MemoryPerProbe = 256 << 10 // bytes one probe in flight may hold
	MemoryShare    = 4         // 1/MemoryShare of the memory goes to probes
	Min            = 32        // the least default
	Max            = 65536     // the most probes in flight, default or configured
)

// Machine is what bounds the probes in flight.
type Machine struct {
	NoFile uint64 // the soft RLIMIT_NOFILE, after raising it
	Memory uint64 // bytes: the cgroup's limit, or the machine's memory
}

// Concurrency is the default number of probes in flight on m: the lower of its
// file-descriptor and memory bounds, at least Min and at most Max.
func Concurrency(m Machine) int {
	fds := uint64(0)
	if m.NoFile > ReservedFDs {
		fds = (m.NoFile - ReservedFDs) / FDsPerProbe
	}
	mem := m.Memory / MemoryShare / MemoryPerProbe
	return int(max(Min, min(fds, mem, Max)))
}

// Probe raises the soft RLIMIT_NOFILE to the hard limit and reads the machine's bounds.
func Probe() (Machine, error) {
	var m Machine
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return m, fmt.Errorf("read RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	m.NoFile = lim.Cur
	mem, err := memoryLimit()
	if err != nil {
		return m, err
	}
	m.Memory = mem
	return m, nil
}

// memoryLimit is the cgroup v2 memory.max of this process, or MemTotal when it has none.
func memoryLimit() (uint64, error) {
	total, err := memTotal()
	if err != nil {
		return 0, err
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v < total {
			return v, nil
		}
	}
	return total, nil
}

func memTotal() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read the machine's memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("MemTotal %q: %w", fields[1], err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no MemTotal in /proc/meminfo")
}
