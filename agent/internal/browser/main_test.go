package browser

import (
	"os"
	"testing"

	"github.com/vantagehq/vantage/agent/internal/browser/scriptworker"
)

// TestMain lets the test binary be the script worker too: RunScript starts it as
// `<test binary> browser-worker`, as the agent starts `vantage-agent browser-worker`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == scriptworker.Command {
		os.Exit(scriptworker.Main(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
