// Package e2e runs Vantage end to end: the real vantage-controlplane and vantage-agent binaries
// as separate processes, each test with its own PostgreSQL database and its own in-process NATS
// server with JetStream, probing real servers that the test itself runs (HTTP, DNS, TCP). It
// holds the end-to-end tests of checks that run and the fault tests (an agent killed mid-job,
// a restarted control plane, a region without agents).
//
// TestMain builds both binaries once. The control plane module does not import the agent's
// packages (docs/architecture.md, "Packages"): the agent binary is built by import path through the
// workspace, or, without one, from the agent module's directory.
package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	controlPlanePkg = "github.com/vantagehq/vantage/controlplane/cmd/vantage-controlplane"
	agentPkg        = "github.com/vantagehq/vantage/agent/cmd/vantage-agent"
)

// The binaries TestMain built.
var (
	controlPlaneBin string
	agentBin        string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// Every test here runs the built binaries against PostgreSQL: none is a unit test.
	flag.Parse()
	if testing.Short() {
		fmt.Fprintln(os.Stderr, "e2e: runs processes against PostgreSQL and NATS; skipped under -short (make test-short)")
		return 0
	}
	dir, err := os.MkdirTemp("", "vantage-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	controlPlaneBin = filepath.Join(dir, "vantage-controlplane")
	agentBin = filepath.Join(dir, "vantage-agent")
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the binaries failed:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: built vantage-controlplane and vantage-agent in %s\n", time.Since(start).Round(time.Millisecond))
	return m.Run()
}

// buildBinaries builds both binaries into dir: by import path through the workspace (go.work
// resolves the agent module from here), or, when that fails (GOWORK=off, no go.work), from each
// module's own directory, whose go.mod replaces pkg and proto with the sibling folders.
func buildBinaries(dir string) error {
	out, err := goBuild("", "-o", dir+string(filepath.Separator), controlPlanePkg, agentPkg)
	if err == nil {
		return nil
	}
	root, rerr := repoRoot()
	if rerr != nil {
		return fmt.Errorf("go build through the workspace: %v\n%s\nand no repository root to build from: %v", err, out, rerr)
	}
	out2, err2 := goBuild(filepath.Join(root, "controlplane"), "-o", controlPlaneBin, "./cmd/vantage-controlplane")
	if err2 != nil {
		return fmt.Errorf("go build through the workspace: %v\n%s\ngo build -C %s/controlplane: %v\n%s", err, out, root, err2, out2)
	}
	out2, err2 = goBuild(filepath.Join(root, "agent"), "-o", agentBin, "./cmd/vantage-agent")
	if err2 != nil {
		return fmt.Errorf("go build through the workspace: %v\n%s\ngo build -C %s/agent: %v\n%s", err, out, root, err2, out2)
	}
	return nil
}

func goBuild(chdir string, args ...string) ([]byte, error) {
	full := []string{"build"}
	if chdir != "" {
		full = append(full, "-C", chdir)
	}
	cmd := exec.Command("go", append(full, args...)...)
	return cmd.CombinedOutput()
}

// repoRoot is the folder of go.work, or two levels up from this package (controlplane/e2e).
func repoRoot() (string, error) {
	if out, err := exec.Command("go", "env", "GOWORK").Output(); err == nil {
		if w := strings.TrimSpace(string(out)); w != "" && w != "off" {
			return filepath.Dir(w), nil
		}
	}
	abs, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(abs, "agent", "go.mod")); err != nil {
		return "", err
	}
	return abs, nil
}
