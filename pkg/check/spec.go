package check

// Spec is a check's configuration, the part users write: what to probe, from where, how often
// and whom to alert. HTTP is set for UPTIME and BROWSER checks, DNS for DNS checks and TCP for
// TCP checks; the other two are nil.
//
// Pointers and nil slices are deliberate: they are the API's nulls. Assertions is nil when the
// check was never given any (rendered null) and empty when it was given [].
type Spec struct {
	Kind                         Kind
	Name                         string
	TestInterval                 int      // seconds between runs
	TestRegions                  []string // values of Regions
	AlertPriority                string   // LOW or HIGH
	ConfirmationPeriodSeconds    int      // failing this long before DOWN (0 = at once)
	RecoveryPeriodSeconds        int      // passing this long before UP again
	ReminderAlertIntervalMinutes *int     // minutes between reminders while DOWN, -1 never; nil on legacy checks
	TimeoutMs                    *int     // per attempt; nil only on legacy browser checks
	Alerts                       Alerts
	Assertions                   []Assertion
	Version                      *string // runtime (DefaultVersion); nil for uptime checks
	HTTP                         *HTTPSpec
	DNS                          *DNSSpec
	TCP                          *TCPSpec
}

// HTTPSpec is what an uptime (HTTP request) or browser check does.
type HTTPSpec struct {
	URL             *string           // absolute http(s) URL; nil for script-only browser checks
	Method          string            // GET, HEAD, POST, PUT, PATCH or DELETE
	Headers         map[string]string // nil when unset
	Body            *string
	TextToSearchFor *string
	VerifySSL       bool
	FollowRedirects bool
	AuthUsername    *string // HTTP Basic user-id; "" is kept (an empty user-id)
	AuthPassword    *string // HTTP Basic password, stored sealed by the control plane
	Script          *string // browser checks only
}

// DNSSpec is what a DNS check queries.
type DNSSpec struct {
	Domain     string
	RecordType string  // A, AAAA, CNAME, MX, NS, SOA or TXT
	Resolver   *string // "host:port" (IPv6 hosts in brackets); nil = the agent's default resolver
	Protocol   string  // UDP or TCP
}

// TCPSpec is what a TCP check connects to.
type TCPSpec struct {
	Hostname   string
	Port       int
	IPFamily   string  // IPv4 or IPv6
	Data       *string // sent right after connecting; nil = nothing
	ShouldFail bool    // a failed connection counts as passing
}

// Alerts are the nine lists of ids notified when the check goes down or recovers.
type Alerts struct {
	User           []string `json:"user_alerts"`
	Slack          []string `json:"slack_alerts"`
	Discord        []string `json:"discord_alerts"`
	IncidentIO     []string `json:"incident_io_alerts"`
	MicrosoftTeams []string `json:"microsoft_teams_alerts"`
	Telegram       []string `json:"telegram_alerts"`
	Pushover       []string `json:"pushover_alerts"`
	Webhook        []string `json:"webhook_alerts"`
	Oncall         []string `json:"oncall_alerts"`
}

// AlertList is one of the nine lists with its API field name.
type AlertList struct {
	Field string // e.g. "user_alerts"
	IDs   *[]string
}

// Lists returns the nine lists in the order api.md names them, addressable for decoding.
func (a *Alerts) Lists() []AlertList {
	return []AlertList{
		{"user_alerts", &a.User},
		{"slack_alerts", &a.Slack},
		{"discord_alerts", &a.Discord},
		{"incident_io_alerts", &a.IncidentIO},
		{"microsoft_teams_alerts", &a.MicrosoftTeams},
		{"telegram_alerts", &a.Telegram},
		{"pushover_alerts", &a.Pushover},
		{"webhook_alerts", &a.Webhook},
		{"oncall_alerts", &a.Oncall},
	}
}

// Normalize turns nil lists into empty ones: every list is an array, never null.
func (a *Alerts) Normalize() {
	for _, l := range a.Lists() {
		if *l.IDs == nil {
			*l.IDs = []string{}
		}
	}
}

// Defaults is the configuration of a new check of kind k before its create body is applied.
// The values api.md states: alert_priority HIGH (LOW for TCP, as api.md's TCP create says),
// confirmation 60 s, recovery 180 s, reminders every 1440 min, timeout 10000 ms, method GET,
// follow_redirects and verify_ssl true, dns_protocol UDP, tcp_ip_family IPv4, tcp_should_fail
// false. Our choices where it is silent: test_interval 60 s and DefaultRegions.
func Defaults(k Kind) Spec {
	s := Spec{
		Kind:                         k,
		TestInterval:                 DefaultTestInterval,
		TestRegions:                  DefaultRegions(),
		AlertPriority:                PriorityHigh,
		ConfirmationPeriodSeconds:    60,
		RecoveryPeriodSeconds:        180,
		ReminderAlertIntervalMinutes: ptr(1440),
		TimeoutMs:                    ptr(DefaultTimeoutMs),
	}
	s.Alerts.Normalize()
	switch k {
	case Uptime, Browser:
		s.HTTP = &HTTPSpec{Method: "GET", VerifySSL: true, FollowRedirects: true}
	case DNS:
		s.DNS = &DNSSpec{Protocol: "UDP"}
	case TCP:
		s.TCP = &TCPSpec{IPFamily: "IPv4"}
		s.AlertPriority = PriorityLow
	}
	if v := DefaultVersion(k); v != "" {
		s.Version = &v
	}
	return s
}

// SetHTTPKind turns an uptime check into a browser check or back (the generic PATCH's `type`).
// A browser check gets the browser runtime; an uptime check loses the runtime and the script.
func (s *Spec) SetHTTPKind(k Kind) {
	if s.Kind == k || !k.IsHTTP() || !s.Kind.IsHTTP() {
		return
	}
	s.Kind = k
	if k == Browser {
		v := VersionBrowser
		s.Version = &v
		return
	}
	s.Version = nil
	if s.HTTP != nil {
		s.HTTP.Script = nil
	}
}

// VarRef is one {{NAME}} reference in a check's configuration, and the field it is in.
type VarRef struct {
	Field string // "headers.<Name>", "auth_username" or "auth_password"
	Name  string
}

// VarRefs lists the {{NAME}} references the control plane resolves when it builds a job:
// uptime header values, and the Basic-auth user-id and password of uptime and browser checks
// (supplement §2.11; browser headers take no references). Headers come in name order.
func (s Spec) VarRefs() []VarRef {
	if s.HTTP == nil {
		return nil
	}
	var refs []VarRef
	if s.Kind == Uptime {
		for _, name := range sortedKeys(s.HTTP.Headers) {
			for _, v := range VarRefs(s.HTTP.Headers[name]) {
				refs = append(refs, VarRef{Field: "headers." + name, Name: v})
			}
		}
	}
	for _, f := range []struct {
		field string
		value *string
	}{{"auth_username", s.HTTP.AuthUsername}, {"auth_password", s.HTTP.AuthPassword}} {
		if f.value != nil {
			for _, v := range VarRefs(*f.value) {
				refs = append(refs, VarRef{Field: f.field, Name: v})
			}
		}
	}
	return refs
}

func ptr[T any](v T) *T { return &v }
