package finals

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Encode is the wire form of finals: a FinalBatch with what the judge reads of each.
func Encode(finals []store.ResultRow) ([]byte, error) {
	b := &vantagev1.FinalBatch{Finals: make([]*vantagev1.Final, len(finals))}
	for i := range finals {
		b.Finals[i] = toWire(&finals[i])
	}
	out, err := proto.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode finals: %w", err)
	}
	return out, nil
}

// Decode reads finals back as the judge sees them: final attempts that ran, with Details
// holding only the leaf certificate certwatch reads (nil when there is none).
func Decode(data []byte) ([]store.ResultRow, error) {
	var b vantagev1.FinalBatch
	if err := proto.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("decode finals: %w", err)
	}
	out := make([]store.ResultRow, len(b.GetFinals()))
	for i, f := range b.GetFinals() {
		if err := fromWire(f, &out[i]); err != nil {
			return nil, fmt.Errorf("decode finals: final %d: %w", i, err)
		}
	}
	return out, nil
}

func toWire(r *store.ResultRow) *vantagev1.Final {
	return &vantagev1.Final{
		Id: r.ID[:], OrgId: r.OrgID[:], CheckId: r.CheckID[:], JobId: r.JobID[:],
		Region:            r.Region,
		AttemptNumber:     r.AttemptNumber,
		ScheduledAtUnixNs: r.ScheduledAt.UnixNano(),
		CheckedAtUnixNs:   r.CheckedAt.UnixNano(),
		Passing:           r.Passing,
		ResponseTimeMs:    r.ResponseTimeMs,
		FailureSource:     r.FailureSource,
		Certificate:       leafOf(r.Details),
	}
}

func fromWire(f *vantagev1.Final, r *store.ResultRow) error {
	var err error
	for _, id := range []struct {
		into *uuid.UUID
		from []byte
		name string
	}{{&r.ID, f.GetId(), "id"}, {&r.OrgID, f.GetOrgId(), "org_id"}, {&r.CheckID, f.GetCheckId(), "check_id"}, {&r.JobID, f.GetJobId(), "job_id"}} {
		if *id.into, err = uuid.FromBytes(id.from); err != nil {
			return fmt.Errorf("%s: %w", id.name, err)
		}
	}
	r.Region = f.GetRegion()
	r.AttemptNumber = f.GetAttemptNumber()
	r.IsFinalAttempt = true
	r.ScheduledAt = time.Unix(0, f.GetScheduledAtUnixNs()).UTC()
	r.CheckedAt = time.Unix(0, f.GetCheckedAtUnixNs()).UTC()
	r.Passing = f.GetPassing()
	r.ResponseTimeMs = f.GetResponseTimeMs()
	r.FailureSource = f.FailureSource
	if c := f.GetCertificate(); c != nil {
		leaf := store.TLSCertificate{Subject: c.GetSubject(), Issuer: c.GetIssuer(),
			NotAfter: time.UnixMilli(c.GetNotAfterUnixMs()).UTC(), SHA256: c.GetSha256()}
		if r.Details, err = json.Marshal(certDetails{TLSChain: store.TLSChain{Certificates: []store.TLSCertificate{leaf}}}); err != nil {
			return fmt.Errorf("certificate: %w", err)
		}
	}
	return nil
}

// certDetails is the part of a result's details certwatch reads.
type certDetails struct {
	TLSChain store.TLSChain `json:"tls_chain"`
}

// leafOf is the leaf of the chain details record, when certwatch would look at it: most
// results carry no chain and are passed over before anything is decoded, as certwatch does.
// Details that do not decode carry none, which certwatch would skip as well.
func leafOf(details json.RawMessage) *vantagev1.FinalCertificate {
	if !bytes.Contains(details, []byte(`"tls_chain"`)) {
		return nil
	}
	var d struct {
		TLSChain *store.TLSChain `json:"tls_chain"`
	}
	if json.Unmarshal(details, &d) != nil || d.TLSChain == nil || len(d.TLSChain.Certificates) == 0 {
		return nil
	}
	leaf := d.TLSChain.Certificates[0]
	if leaf.SHA256 == "" || leaf.NotAfter.IsZero() {
		return nil
	}
	return &vantagev1.FinalCertificate{Subject: leaf.Subject, Issuer: leaf.Issuer,
		NotAfterUnixMs: leaf.NotAfter.UnixMilli(), Sha256: leaf.SHA256}
}
