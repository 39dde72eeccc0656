package scheduler

import (
	"bytes"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/vantagehq/vantage/controlplane/internal/jobguard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/jobseal"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// planCheck is a stored check of kind k with every optional field set (check.Example), in
// three regions, with secrets to redact and a browser script's environment.
func planCheck(t testing.TB, k check.Kind) store.SchedCheck {
	sp := check.Example(k)
	sp.TestRegions = []string{"cloud:us-east-1", "cloud:eu-central-1", "cloud:ap-southeast-2"}
	c := store.SchedCheck{Check: store.Check{ID: uuid.New(), OrgID: uuid.New(), Spec: sp, State: "UP",
		CreatedAt: time.UnixMilli(1_700_000_000_000)}}
	c.Redact = []string{"tok-s3cr3t", "pw-s3cr3t"}
	c.Env = map[string]string{"B": "2", "A": "1", "C": "3"}
	return c
}

// TestNewJobEncodesTheWholeJob holds the encoded plan to what the scheduler published before
// plans were kept encoded: the job template with the run's fields set on it, its secrets
// sealed, signed, and encoded with proto.Marshal (deterministically, as the plan orders maps).
func TestNewJobEncodesTheWholeJob(t *testing.T) {
	t.Parallel()
	guard, err := jobguard.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range check.Kinds {
		for _, g := range []JobGuard{nil, guard} {
			name := string(k) + "/unguarded"
			if g != nil {
				name = string(k) + "/guarded"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c := planCheck(t, k)
				p, err := buildPlan(c, g)
				if err != nil {
					t.Fatal(err)
				}
				template, err := c.Spec.Job()
				if err != nil {
					t.Fatal(err)
				}
				template.CheckId, template.OrgId = c.ID.String(), c.OrgID.String()
				template.TimeoutMs, template.MaxAttempts, template.Redact, template.Env = uint32(p.timeout.Milliseconds()), p.attempts, c.Redact, c.Env
				if g != nil && jobseal.Split(template) == nil {
					t.Fatal("the example has no secrets: the sealed path is not tested")
				}
				if g != nil && len(p.sealed) != len(p.regions) {
					t.Fatalf("sealed for %d regions, want %d", len(p.sealed), len(p.regions))
				}
				id := uuid.New()
				for i, region := range p.regions {
					for _, run := range []struct{ confirmation, catchUp bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
						head, data := p.newJob(id, i, 1_700_000_060_000, 1_700_000_090_000, run.confirmation, run.catchUp)
						want := proto.CloneOf(template)
						want.JobId, want.Region = id.String(), region
						want.ScheduledAtUnixMs, want.DeadlineUnixMs = 1_700_000_060_000, 1_700_000_090_000
						want.Confirmation, want.CatchUp = run.confirmation, run.catchUp
						if g != nil {
							want.Sealed = p.sealed[i]
							g.Sign(want)
							if len(want.Signature) == 0 || len(want.Sealed) == 0 {
								t.Fatal("guarded job without signature or sealed secrets")
							}
						}
						wantData, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(data, wantData) {
							got := &vantagev1.CheckJob{}
							_ = proto.Unmarshal(data, got)
							t.Fatalf("region %s %+v: encoded job differs\n got %v\nwant %v", region, run, fieldOrder(data), fieldOrder(wantData))
						}
						if wire.SubjectOf(head) != wire.SubjectOf(want) || wire.JobMsgID(head) != wire.JobMsgID(want) {
							t.Errorf("head's subject or message id differs from the job's")
						}
					}
				}
			})
		}
	}
}

// TestPlanInternsStrings: plans share the strings of regions and states rather than holding
// the ones of their store rows.
func TestPlanInternsStrings(t *testing.T) {
	t.Parallel()
	c := planCheck(t, check.TCP)
	c.State = string([]byte("VERIFYING"))
	c.Spec.TestRegions = []string{string([]byte("cloud:eu-central-1"))}
	p, err := buildPlan(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.StringData(p.state) != unsafe.StringData(knownStates[slices.Index(knownStates, stateVerifying)]) {
		t.Error("state is the row's string, not the interned one")
	}
	want := check.Regions[slices.Index(check.Regions, "cloud:eu-central-1")]
	if unsafe.StringData(p.regions[0]) != unsafe.StringData(want) {
		t.Error("region is the row's string, not check.Regions'")
	}
	if !p.confirming() {
		t.Error("interned VERIFYING is not confirming")
	}
}

// BenchmarkPlan builds the plan of the bench-scale mix's largest check (an HTTP check with
// every field set, secrets sealed for three regions) and reports the bytes a plan keeps live
// (live-B/plan), the control plane's memory per check, beside its floor: the bytes of the
// encoded job and sealed secrets alone (encoded-B/plan). B/op is what building one allocates.
func BenchmarkPlan(b *testing.B) {
	guard, err := jobguard.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		b.Fatal(err)
	}
	c := planCheck(b, check.Uptime)
	c.Redact, c.Env = nil, nil
	for b.Loop() {
		if _, err := buildPlan(c, guard); err != nil {
			b.Fatal(err)
		}
	}
	const n = 2000
	plans := make([]*plan, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range plans {
		// Each check decodes its own row: copies, so that nothing is shared between plans
		// that the store would not share.
		ci := c
		ci.Spec = check.Example(check.Uptime)
		ci.Spec.TestRegions = append([]string(nil), c.Spec.TestRegions...)
		ci.ID = uuid.New()
		if plans[i], err = buildPlan(ci, guard); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "live-B/plan")
	encoded := len(plans[0].job)
	for _, s := range plans[0].sealed {
		encoded += len(s)
	}
	b.ReportMetric(float64(encoded), "encoded-B/plan")
	runtime.KeepAlive(plans)
}

// fieldOrder lists the field numbers of an encoded message in the order they come.
func fieldOrder(b []byte) []protowire.Number {
	var out []protowire.Number
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return append(out, -1)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return append(out, -1)
		}
		out = append(out, num)
		b = b[n+m:]
	}
	return out
}
