package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/testwait"
)

// TestKilledAgentLeavesNoBrowser: an agent with a browser is SIGKILLed; its Chromium and every
// process of Chromium's group end with it (the agent starts the browser itself, not a
// launcher script that forks it, with its death signal).
func TestKilledAgentLeavesNoBrowser(t *testing.T) {
	parallel(t)
	s := newStack(t)
	a := s.startBrowserAgent(t, "agent-killed-browser", nil, "cloud:ap-south-1")
	pid := a.p.cmd.Process.Pid
	var browsers []int
	testwait.Eventually(t, 30*time.Second, func() error {
		browsers = childrenOf(pid)
		if len(browsers) == 0 {
			return fmt.Errorf("agent %d has no child process yet", pid)
		}
		return nil
	})
	groups := map[int]bool{}
	for _, c := range browsers {
		if g, err := syscall.Getpgid(c); err == nil {
			groups[g] = true
		}
	}
	a.p.kill(t)
	testwait.Eventually(t, 15*time.Second, func() error {
		var left []string
		for _, p := range allPids() {
			if g, err := syscall.Getpgid(p); err == nil && groups[g] && !zombie(p) {
				left = append(left, fmt.Sprintf("%d (%s)", p, comm(p)))
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("processes of the killed agent's browser still run: %s", strings.Join(left, ", "))
		}
		return nil
	})
}

func allPids() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if p, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// statFields are the fields of /proc/<pid>/stat after the command: state is [0], ppid [1].
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

func childrenOf(parent int) []int {
	var out []int
	for _, p := range allPids() {
		if f := statFields(p); len(f) > 1 && f[1] == strconv.Itoa(parent) {
			out = append(out, p)
		}
	}
	return out
}

func zombie(pid int) bool {
	f := statFields(pid)
	return len(f) == 0 || f[0] == "Z"
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}
