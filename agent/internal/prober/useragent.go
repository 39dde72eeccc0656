package prober

import "strings"

// UserAgent is the User-Agent every HTTP and browser probe sends unless the check sets its own
// User-Agent header: "Vantage/<version> (+region <region>)", e.g.
// "Vantage/1.4.0 (+region cloud:eu-central-1)". It names the product so that target owners can
// allowlist probes, and the region so that they can tell regions apart in their logs (and
// serve one region differently, which the end-to-end tests of regional degradation use).
// version is the agent's build version without a leading "v"; a job without a region (none
// comes from the control plane) leaves the comment out.
func UserAgent(version, region string) string {
	version = strings.TrimPrefix(version, "v")
	if version == "" {
		version = "devel"
	}
	if region == "" {
		return "Vantage/" + version
	}
	return "Vantage/" + version + " (+region " + region + ")"
}

// WithVersion sets the version the User-Agent names (UserAgent). Default "devel".
func WithVersion(v string) Option { return func(o *options) { o.version = v } }
