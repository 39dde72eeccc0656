package api

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"testing"
)

// TestMain runs the package's tests and, when all of them ran and passed, fails the run if an
// operation of the OpenAPI document was never exercised: the validation in the harness only
// checks the operations some test calls.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && runsEveryTest() {
		if missing := unexercisedOperations(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no API test exercises these operations of the OpenAPI document, so nothing validates them:\n")
			for _, op := range missing {
				fmt.Fprintf(os.Stderr, "  %s\n", op)
			}
			code = 1
		}
	}
	os.Exit(code)
}

// runsEveryTest reports whether this run selects every test (no -run, -skip or -short).
func runsEveryTest() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return !testing.Short()
}

// unexercisedOperations lists "operationId (METHOD /path)" for the operations no request reached.
func unexercisedOperations() []string {
	spec, err := openAPISpec()
	if err != nil {
		return []string{"(the document did not load: " + err.Error() + ")"}
	}
	var missing []string
	for path, item := range spec.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if _, ok := exercised.Load(op.OperationID); !ok {
				missing = append(missing, fmt.Sprintf("%s (%s %s)", op.OperationID, method, path))
			}
		}
	}
	sort.Strings(missing)
	return missing
}
