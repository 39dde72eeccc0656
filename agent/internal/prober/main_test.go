package prober

import (
	"os"
	"testing"

	"github.com/vantagehq/vantage/agent/internal/browser/scriptworker"
)

// TestMain lets the test binary be the browser's script worker too, as the agent's binary is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == scriptworker.Command {
		os.Exit(scriptworker.Main(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
