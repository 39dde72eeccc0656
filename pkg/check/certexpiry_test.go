package check

import "testing"

func TestCertificateExpiryAlertDaysRules(t *testing.T) {
	t.Parallel()
	tooMany := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	for _, kind := range []Kind{Uptime, TCP} {
		for _, tc := range []struct {
			name  string
			days  []int
			field string // "" = valid
		}{
			{"default", DefaultCertificateExpiryAlertDays(), ""},
			{"off", []int{}, ""},
			{"bounds", []int{1, 365}, ""},
			{"ten", tooMany[:10], ""},
			{"zero", []int{14, 0}, "certificate_expiry_alert_days[1]"},
			{"over a year", []int{366}, "certificate_expiry_alert_days[0]"},
			{"negative", []int{-1}, "certificate_expiry_alert_days[0]"},
			{"duplicate", []int{7, 14, 7}, "certificate_expiry_alert_days[2]"},
			{"too many", tooMany, "certificate_expiry_alert_days"},
		} {
			t.Run(string(kind)+"/"+tc.name, func(t *testing.T) {
				s := Example(kind)
				if kind == TCP {
					s.TCP.CertificateExpiryAlertDays = tc.days
				} else {
					s.HTTP.CertificateExpiryAlertDays = tc.days
				}
				fe := s.Validate()
				if tc.field == "" {
					if len(fe) != 0 {
						t.Fatalf("refused: %v", fe)
					}
					return
				}
				if len(fe) != 1 || fe[0].Field != tc.field {
					t.Fatalf("errors %v, want one naming %s", fe, tc.field)
				}
			})
		}
	}
}
