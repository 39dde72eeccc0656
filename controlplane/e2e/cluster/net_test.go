//go:build cluster

package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Every network object of the test carries this prefix, so that the cleanup (here and in
// deploy/test-cluster.sh) finds what a run that died left behind. Runs are serialized by the
// script's lock, so one name set suffices.
const (
	prefix = "vtc-"
	bridge = prefix + "br"
	// subnet is the hosts' /24; the test host (this process, PostgreSQL, the target and the
	// webhook receiver) is .1 on the bridge.
	subnet = "10.211.77."
	hostIP = subnet + "1"
)

// host is one network namespace joined to the bridge by a veth pair: eth0 inside, and
// vtc-<name> on the bridge, the cable that a cut unplugs.
type host struct {
	name string
	ns   string
	ip   string
	veth string
}

// ip runs the ip command; a failure fails the test.
func ip(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// setUpBridge creates the bridge with the test host's address. Leftovers of an earlier run
// are removed first.
func setUpBridge(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the cluster test runs hosts as network namespaces and needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("the cluster test needs iproute2's ip command (deploy/test-cluster.sh installs it)")
	}
	cleanNetwork()
	if out, _ := exec.Command("ip", "-4", "route", "show", "to", "match", hostIP).Output(); strings.Contains(string(out), subnet) {
		t.Fatalf("subnet %s0/24 is already routed on this machine:\n%s", subnet, out)
	}
	t.Cleanup(cleanNetwork)
	ip(t, "link", "add", bridge, "type", "bridge")
	ip(t, "addr", "add", hostIP+"/24", "dev", bridge)
	ip(t, "link", "set", bridge, "up")
}

// addHost creates the namespace of host name with address subnet+octet. hosts, when given,
// becomes the namespace's /etc/hosts (ip netns exec mounts /etc/netns/<ns>/hosts there).
func addHost(t *testing.T, name string, octet int, hosts string) *host {
	t.Helper()
	h := &host{name: name, ns: prefix + name, ip: subnet + strconv.Itoa(octet), veth: prefix + name}
	peer := "vtp-" + name
	ip(t, "netns", "add", h.ns)
	ip(t, "link", "add", h.veth, "type", "veth", "peer", "name", peer)
	ip(t, "link", "set", peer, "netns", h.ns)
	ip(t, "-n", h.ns, "link", "set", peer, "name", "eth0")
	ip(t, "-n", h.ns, "addr", "add", h.ip+"/24", "dev", "eth0")
	ip(t, "-n", h.ns, "link", "set", "eth0", "up")
	ip(t, "-n", h.ns, "link", "set", "lo", "up")
	ip(t, "link", "set", h.veth, "master", bridge)
	ip(t, "link", "set", h.veth, "up")
	if hosts != "" {
		dir := filepath.Join("/etc/netns", h.ns)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte("127.0.0.1 localhost\n"+hosts), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// cut unplugs the host's cable (its bridge port goes down; inside, eth0 loses its carrier).
func (h *host) cut(t testing.TB) { t.Helper(); ip(t, "link", "set", h.veth, "down") }

// restore plugs it back.
func (h *host) restore(t testing.TB) { t.Helper(); ip(t, "link", "set", h.veth, "up") }

// cleanNetwork kills every process left in a vtc- namespace and removes the namespaces (their
// veth pairs go with them), their /etc/netns folders and the bridge. Errors are ignored: it
// also runs when nothing is there.
func cleanNetwork() {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		ns, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !strings.HasPrefix(ns, prefix) {
			continue
		}
		pids, _ := exec.Command("ip", "netns", "pids", ns).Output()
		for _, p := range strings.Fields(string(pids)) {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		_ = exec.Command("ip", "netns", "del", ns).Run()
		_ = os.RemoveAll(filepath.Join("/etc/netns", ns))
	}
	// A veth whose namespace is still held by a dying process outlives the name; remove it.
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	for _, line := range strings.Split(string(links), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if strings.HasPrefix(name, prefix) && name != bridge {
			_ = exec.Command("ip", "link", "del", name).Run()
		}
	}
	_ = exec.Command("ip", "link", "del", bridge).Run()
}

func (h *host) String() string { return fmt.Sprintf("%s (%s)", h.name, h.ip) }
