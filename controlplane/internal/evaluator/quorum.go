package evaluator

import "github.com/vantagehq/vantage/pkg/check"

// runFails is the pure verdict of one run: whether the regions that reported it failing
// (failed) outweigh those that passed under the check's quorum. Only regions that reported
// count, so a silent region never fails a run by itself.
func runFails(q check.Quorum, passed, failed []string) bool {
	return q.Fails(len(passed), len(failed))
}
