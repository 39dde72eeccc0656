package check

import "fmt"

// Certificate expiry alerts (an extension): the checks that speak TLS — uptime checks on
// https: URLs and TCP checks with tcp_tls — name the days before the served certificate
// expires at which the control plane sends certificate.expiring. The field is defined on
// HTTPSpec and TCPSpec under one API name, certificate_expiry_alert_days.

// Limits of certificate_expiry_alert_days.
const (
	MinCertificateAlertDays = 1
	MaxCertificateAlertDays = 365
	MaxCertificateAlerts    = 10 // thresholds per check
)

// DefaultCertificateExpiryAlertDays is the field's default: two weeks, one week, one day.
func DefaultCertificateExpiryAlertDays() []int { return []int{14, 7, 1} }

// CertificateExpiryAlertDays is s's thresholds, and whether its kind has the field.
func (s Spec) CertificateExpiryAlertDays() ([]int, bool) {
	switch {
	case s.HTTP != nil:
		return s.HTTP.CertificateExpiryAlertDays, true
	case s.TCP != nil:
		return s.TCP.CertificateExpiryAlertDays, true
	}
	return nil, false
}

func validateCertificateExpiryAlertDays(fe *FieldErrors, days []int) {
	const field = "certificate_expiry_alert_days"
	if len(days) > MaxCertificateAlerts {
		fe.add(field, "must have at most %d items", MaxCertificateAlerts)
		return
	}
	seen := map[int]bool{}
	for i, d := range days {
		item := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case d < MinCertificateAlertDays || d > MaxCertificateAlertDays:
			fe.add(item, "must be between %d and %d days", MinCertificateAlertDays, MaxCertificateAlertDays)
		case seen[d]:
			fe.add(item, "repeats %d", d)
		}
		seen[d] = true
	}
}
