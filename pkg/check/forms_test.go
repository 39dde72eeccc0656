package check_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/check/checktest"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// sameAsDefault lists the fields Example may leave at their default, and why.
var sameAsDefault = map[string]string{
	"Version": "every kind has exactly one runtime a request may name: its default",
}

// TestExampleSetsEveryField makes sure the walks below can see every field lost: Example
// gives each field a valid value other than its default, and for each field Example or the
// defaults hold a value other than the zero value (a form that drops a field leaves the default
// or the zero value behind).
func TestExampleSetsEveryField(t *testing.T) {
	t.Parallel()
	for _, k := range check.Kinds {
		ex, def := check.Example(k), check.Defaults(k)
		if fe := ex.Validate(); len(fe) != 0 {
			t.Errorf("Example(%s) is not valid: %v", k, fe)
		}
		defaults := map[string]checktest.Field{}
		for _, f := range checktest.Fields(def) {
			defaults[f.Path] = f
		}
		for _, f := range checktest.Fields(ex) {
			if f.Name == "" {
				t.Errorf("%s: %s has no json tag: the API, the stored document and the tests name fields by it", k, f.Path)
			}
			if k == check.Uptime && f.Path == "HTTP.Script" || f.Path == "Version" && check.DefaultVersion(k) == "" {
				continue // uptime checks have no script; uptime, ping, gRPC and WebSocket checks no runtime
			}
			if k == check.Multistep && (f.Path == "Assertions" || f.Path == "Version") {
				continue // multistep checks assert in their script, and have no runtime version
			}
			d, ok := defaults[f.Path]
			if !ok {
				t.Errorf("%s: Defaults(%s) has no %s", k, k, f)
				continue
			}
			if _, exempt := sameAsDefault[f.Path]; !exempt && len(checktest.Diff(ex, def, func(g checktest.Field) bool { return g.Path == f.Path }, false)) == 0 {
				t.Errorf("%s: Example(%s) leaves %s at its default %v: give it another valid value in pkg/check beside the field, "+
					"so that a form that drops it fails the tests", k, k, f, f.Value())
			}
			if f.IsZero() && d.IsZero() {
				t.Errorf("%s: %s is the zero value in both Example(%s) and Defaults(%s): a form that drops it could not be caught", k, f, k, k)
			}
		}
	}
}

// TestJobRoundTrip carries every field of every kind from the model to the job, through its
// protobuf encoding (what agents decode), and back.
func TestJobRoundTrip(t *testing.T) {
	t.Parallel()
	for _, k := range check.Kinds {
		for variant, sp := range map[string]check.Spec{"Example": check.Example(k), "Minimal": checktest.Minimal(k)} {
			job, err := sp.Job()
			if err != nil {
				t.Fatalf("%s %s: Job: %v", k, variant, err)
			}
			wire, err := proto.Marshal(job)
			if err != nil {
				t.Fatal(err)
			}
			decoded := &vantagev1.CheckJob{}
			if err := proto.Unmarshal(wire, decoded); err != nil {
				t.Fatal(err)
			}
			back, err := check.FromJob(decoded)
			if err != nil {
				t.Fatalf("%s %s: FromJob: %v", k, variant, err)
			}
			if back.Kind != k {
				t.Errorf("%s %s: the job's kind comes back as %q", k, variant, back.Kind)
			}
			for _, d := range checktest.Diff(sp, back, checktest.JobFields, true) {
				t.Errorf("%s %s: lost in the job (check.Job / check.FromJob and proto/vantage/v1/check.proto): %s", k, variant, d)
			}
			for _, f := range checktest.Fields(back) {
				if !f.Job && !f.IsZero() {
					t.Errorf("%s %s: FromJob sets %s, which is tagged job:\"-\"", k, variant, f)
				}
			}
		}
	}
}

// TestDocumentRoundTrip carries every field of every kind through the stored document, except
// the password, which must not be in it.
func TestDocumentRoundTrip(t *testing.T) {
	t.Parallel()
	for _, k := range check.Kinds {
		for variant, sp := range map[string]check.Spec{"Example": check.Example(k), "Minimal": checktest.Minimal(k)} {
			doc, err := sp.Document()
			if err != nil {
				t.Fatal(err)
			}
			if sp.HTTP != nil && sp.HTTP.AuthPassword != nil && strings.Contains(string(doc), *sp.HTTP.AuthPassword) {
				t.Errorf("%s %s: the document holds the password: %s", k, variant, doc)
			}
			back := sp // the columns
			back.HTTP, back.DNS, back.TCP, back.Version, back.Assertions = nil, nil, nil, nil, nil
			if err := back.LoadDocument(doc); err != nil {
				t.Fatalf("%s %s: LoadDocument: %v", k, variant, err)
			}
			notSecret := func(f checktest.Field) bool { return f.Path != "HTTP.AuthPassword" }
			for _, d := range checktest.Diff(sp, back, notSecret, false) {
				t.Errorf("%s %s: lost in the stored document (check.Document / LoadDocument): %s", k, variant, d)
			}
			if back.HTTP != nil && back.HTTP.AuthPassword != nil {
				t.Errorf("%s %s: LoadDocument set a password", k, variant)
			}
		}
	}
}

// TestLoadDocumentDefaults: a document without a field (written before the field existed)
// reads as the kind's default.
func TestLoadDocumentDefaults(t *testing.T) {
	t.Parallel()
	for _, k := range check.Kinds {
		sp := check.Spec{Kind: k}
		if err := sp.LoadDocument([]byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		def := check.Defaults(k)
		def.Version = nil
		for _, d := range checktest.Diff(def, sp, func(f checktest.Field) bool {
			return strings.Contains(f.Path, ".") && !strings.HasPrefix(f.Path, "Alerts.")
		}, false) {
			t.Errorf("%s: an empty document: %s", k, d)
		}
	}
	if err := (&check.Spec{Kind: check.DNS}).LoadDocument([]byte(`{"dns_domain": 7}`)); err == nil {
		t.Error("a document of the wrong shape loads")
	}
}
