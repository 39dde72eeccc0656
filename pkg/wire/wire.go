// Package wire names what travels between the control plane and the agents over NATS — the
// JetStream stream, its subjects and consumers, the config-change subject, the subjects of
// final attempts — and encodes jobs.
package wire

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

const (
	// JobStream is the JetStream stream holding due jobs: work-queue retention, so a job is
	// deleted once an agent acks it; MaxAge JobMaxAge, so stale jobs die instead of running late.
	JobStream = "VANTAGE_JOBS"
	// JobSubjectPrefix + region (without "cloud:") is where jobs for a region are published.
	JobSubjectPrefix = "vantage.jobs."
	// JobMaxAge bounds how long an undelivered job lives.
	JobMaxAge = 5 * time.Minute
	// JobAckWait is how long a delivered job may stay unacked before JetStream redelivers it to
	// another agent of the region; agents extend it with InProgress while a job runs.
	JobAckWait = 30 * time.Second
	// ConfigChangedSubject carries one message per committed check change (payload: check id),
	// so the scheduler picks changes up within a second (core NATS, not JetStream: the periodic
	// resync covers a missed message).
	ConfigChangedSubject = "vantage.config.checks"
	// FinalsSubjectPrefix + shard (0-255, decimal) carries the final attempts of the shard's
	// checks from the replica that stored them to the shard's owner, which judges them (core
	// NATS: the owner re-reads PostgreSQL after a loss).
	FinalsSubjectPrefix = "vantage.finals."
)

// RegionPrefix is the provider prefix of region values.
const RegionPrefix = "cloud:"

// RegionToken is the region without its "cloud:" prefix: "us-east-1".
func RegionToken(region string) string { return strings.TrimPrefix(region, RegionPrefix) }

// JobSubject is the subject jobs for region are published on, browser jobs excepted.
func JobSubject(region string) string { return JobSubjectPrefix + RegionToken(region) }

// ConsumerName is the durable pull consumer every agent of region shares.
func ConsumerName(region string) string { return "agents-" + RegionToken(region) }

// Browser jobs travel apart, so that only agents with a browser take them: an agent without
// one never sees them (and so never fails them), and a browser job no such agent fetches
// expires unseen after JobMaxAge, recorded as nothing rather than as a failure of the target.
// Both filters are literal subjects, so the region's two consumers never overlap in the
// work-queue stream.

// BrowserJobSubject is the subject browser jobs for region are published on.
func BrowserJobSubject(region string) string { return JobSubject(region) + ".browser" }

// BrowserConsumerName is the durable pull consumer the browser-capable agents of region share.
func BrowserConsumerName(region string) string { return ConsumerName(region) + "-browser" }

// SubjectOf is the subject job is published on: its region's browser subject for a browser
// check, the region's subject otherwise.
func SubjectOf(j *vantagev1.CheckJob) string {
	if j.GetKind() == vantagev1.CheckKind_CHECK_KIND_BROWSER {
		return BrowserJobSubject(j.GetRegion())
	}
	return JobSubject(j.GetRegion())
}

// CapabilityBrowser is the Register capability of an agent with a working browser.
const CapabilityBrowser = "browser"

// FailureSourceAgent is the failure_source of a result the agent, not the target, failed: its
// browser crashed or hung. The control plane stores such a result but leaves it out of the
// run's verdict, as if the region had not reported.
const FailureSourceAgent = "AGENT"

// MaxScreenshotBytes bounds CheckResult.screenshot; the agent drops a larger one.
const MaxScreenshotBytes = 512 << 10

// Bounds of CheckResult.artifacts, a scripted run's files: the script runtime keeps no more
// (dropping the rest with a line in artifacts_dropped), and the control plane stores no more
// whatever an agent sends. With the screenshot they keep a result well inside gRPC's 4 MiB
// message.
const (
	// MaxArtifacts bounds how many artifacts one result carries.
	MaxArtifacts = 20
	// MaxArtifactsBytes bounds the total size of a result's artifacts' bodies.
	MaxArtifactsBytes = 2 << 20
	// MaxArtifactNameBytes bounds an artifact's name; names are one path segment.
	MaxArtifactNameBytes = 120
	// MaxArtifactsDropped bounds CheckResult.artifacts_dropped.
	MaxArtifactsDropped = 20
)

// Bounds of a result's free text: the agent cuts what it reports to them, and the control
// plane cuts what it stores to them again, whatever an agent sends.
const (
	// MaxResponseBodyBytes bounds CheckResult.response_body.
	MaxResponseBodyBytes = 64 << 10
	// MaxResultSummaryBytes bounds CheckResult.result_summary.
	MaxResultSummaryBytes = 1024
)

// ScreenshotType is the media type of a screenshot, told by its magic bytes: image/png,
// image/jpeg, or "" for anything else.
func ScreenshotType(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	}
	return ""
}

// EncodeJob serializes a job for NATS.
func EncodeJob(j *vantagev1.CheckJob) ([]byte, error) { return proto.Marshal(j) }

// DecodeJob parses a job from NATS.
func DecodeJob(b []byte) (*vantagev1.CheckJob, error) {
	j := &vantagev1.CheckJob{}
	if err := proto.Unmarshal(b, j); err != nil {
		return nil, fmt.Errorf("decode job: %w", err)
	}
	return j, nil
}

// JobMsgID is the JetStream de-duplication id of a job (Nats-Msg-Id), so a scheduler that
// republishes the same run after a fail-over does not queue it twice.
func JobMsgID(j *vantagev1.CheckJob) string { return j.JobId + "/" + RegionToken(j.Region) }

// StreamProtocol is the highest version of the agent stream protocol (AgentService in
// proto/vantage/v1/agent.proto) this tree speaks: 2, batched and pipelined results and acks,
// and not-run results; 3, the not-run reason NotRunShed.
const StreamProtocol = 3

// Reasons a job was not run, in CheckResult.not_run_reason.
const (
	// NotRunExpired: the job's deadline had passed when the agent got it (demand above the
	// region's capacity, or a redelivery after its agent died).
	NotRunExpired = "EXPIRED"
	// NotRunShutdown: the agent stopped before running the job and the job had no delivery
	// left for another agent.
	NotRunShutdown = "SHUTDOWN"
	// NotRunShed: the job came late (the region's demand above its capacity) and the agent
	// shed it to run other checks' jobs in time, because this check's previous job on the
	// agent ran (worker's rotation). Protocol version 3; sent as NotRunExpired to an older
	// control plane.
	NotRunShed = "SHED"
)
