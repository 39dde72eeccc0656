package prober

import (
	"context"

	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Browser stands for the browser prober, which a later change brings (Chromium driven by
// chromedp, in this file only). Until then every browser attempt fails with TRANSPORT /
// NOT_SUPPORTED, so a browser check shows why it cannot run rather than passing unchecked.
type Browser struct{}

var _ Prober = (*Browser)(nil)

// NewBrowser returns the browser prober.
func NewBrowser(...Option) *Browser { return &Browser{} }

// BrowserNotSupported is the summary of every browser attempt.
const BrowserNotSupported = "browser checks are not supported by this agent yet"

// Probe fails the attempt with NOT_SUPPORTED.
func (*Browser) Probe(_ context.Context, job *vantagev1.CheckJob) (Result, error) {
	res := Result{Kind: check.Browser}
	res.failTransport(NotSupported, BrowserNotSupported)
	res.finish(job, nil)
	return res, nil
}
