package statuspage

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Plan limits of status page features. The public API contract makes custom domains and private pages
// (a password or allowed_ips) paid-plan features (custom_domain_entitled,
// private_status_page_entitled); it states no subscriber limit, so Vantage sets one for free
// organizations (FreeSubscribersPerPage, docs/api-extensions.md).

// FreeSubscribersPerPage is how many subscribers a status page of a free organization may have.
const FreeSubscribersPerPage = 100

// PlanLimitError is a feature or an amount the organization's plan does not include; the API
// answers 403 with Type and the message.
type PlanLimitError struct {
	Type    string // "paid_plan_required" or "plan_limit_reached"
	Message string
}

func (e *PlanLimitError) Error() string { return e.Message }

// entitled reports whether plan includes the paid status page features.
func entitled(plan string) bool { return plan == "paid" }

// checkPagePlan refuses the paid features an input sets on a free plan. Clearing them (a page
// kept from a paid period) is always allowed.
func checkPagePlan(ctx context.Context, r store.StatusPageReader, orgID uuid.UUID, in store.StatusPageInput) error {
	wantsDomain := in.CustomDomain != nil && *in.CustomDomain != ""
	wantsPassword := in.PasswordHash != nil && *in.PasswordHash != nil
	wantsIPs := in.AllowedIPs != nil && len(*in.AllowedIPs) > 0
	if !wantsDomain && !wantsPassword && !wantsIPs {
		return nil
	}
	plan, err := r.OrganizationPlan(ctx, orgID)
	if err != nil {
		return err
	}
	switch {
	case entitled(plan):
		return nil
	case wantsDomain:
		return &PlanLimitError{Type: "paid_plan_required", Message: "custom_domain: custom domains require a paid plan (custom_domain_entitled is false)"}
	case wantsPassword:
		return &PlanLimitError{Type: "paid_plan_required", Message: "password: private (password-protected) status pages require a paid plan (private_status_page_entitled is false)"}
	default:
		return &PlanLimitError{Type: "paid_plan_required", Message: "allowed_ips: private (IP-restricted) status pages require a paid plan (private_status_page_entitled is false)"}
	}
}

// checkSubscriberPlan refuses a subscriber past FreeSubscribersPerPage on a free plan.
func checkSubscriberPlan(ctx context.Context, r store.StatusPageReader, orgID, pageID uuid.UUID) error {
	plan, err := r.OrganizationPlan(ctx, orgID)
	if err != nil || entitled(plan) {
		return err
	}
	n, err := r.CountPageSubscribers(ctx, orgID, pageID)
	if err != nil {
		return err
	}
	if n >= FreeSubscribersPerPage {
		return &PlanLimitError{Type: "plan_limit_reached", Message: fmt.Sprintf(
			"this status page has %d subscribers, the most a free plan allows per page; upgrade to a paid plan for more", n)}
	}
	return nil
}
