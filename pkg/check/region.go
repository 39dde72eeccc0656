package check

import "slices"

// Regions are the vantage points a check can run from (api/openapi/checks.yaml), in the form
// written in requests, responses and results: "cloud:<region>".
var Regions = []string{
	"cloud:us-east-1",
	"cloud:us-east-2",
	"cloud:us-west-1",
	"cloud:eu-central-1",
	"cloud:eu-west-2",
	"cloud:ap-south-1",
	"cloud:ap-southeast-2",
	"cloud:ap-northeast-1",
}

// RegionPrefix starts every region value. Job subjects drop it (vantage.jobs.us-east-1).
const RegionPrefix = "cloud:"

// IsRegion reports whether s is one of Regions.
func IsRegion(s string) bool { return slices.Contains(Regions, s) }

// DefaultRegions is where a check runs when its create body names no test_regions: one region
// per continent group, so that the majority-of-regions verdict (docs/architecture.md, "Verdicts") has three voices.
// The public API contract does not state a default; this is our choice.
func DefaultRegions() []string {
	return []string{"cloud:us-east-1", "cloud:eu-central-1", "cloud:ap-southeast-2"}
}
