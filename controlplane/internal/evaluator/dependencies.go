package evaluator

import "context"

// dependencies applies a check's depends_on to a verdict (docs/detection.md "Dependencies"):
// on a failing verdict it reads which dependencies are DOWN now (a check DOWN or RECOVERING, a
// heartbeat DOWN); while any is, the check's alerts are held back exactly as while muted — so
// the uptime.down held back goes out on the first failing verdict after every dependency is up
// again, and no uptime.up follows an outage that was never alerted — and an incident opened
// now is marked caused by the first of them. Passing verdicts read nothing.
func (ce *checkEval) dependencies(ctx context.Context, v Verdict, p *Policy) error {
	ce.downDeps = nil
	if v.Passing {
		return nil
	}
	down, err := ce.tx.DownDependencies(ctx, ce.c.OrgID, ce.c.ID)
	if err != nil {
		return err
	}
	ce.downDeps = down
	if len(down) > 0 {
		p.Muted = true
	}
	return nil
}
