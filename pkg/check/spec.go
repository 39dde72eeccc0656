package check

// Spec is a check's configuration, the part users write: what to probe, from where, how often
// and whom to alert. HTTP is set for UPTIME and BROWSER checks, DNS for DNS checks and TCP for
// TCP checks; the other two are nil.
//
// Pointers and nil slices are deliberate: they are the API's nulls. Assertions is nil when the
// check was never given any (rendered null) and empty when it was given [].
//
// The fields down to Alerts are columns of their own in the database (other parts of the
// control plane filter and join on them); the rest is the kind's configuration, stored as one
// document (Document).
type Spec struct {
	Kind                         Kind     `json:"-"`
	Name                         string   `json:"name" job:"-"`
	TestInterval                 int      `json:"test_interval" job:"-"`                   // seconds between runs
	TestRegions                  []string `json:"test_regions" job:"-"`                    // values of Regions
	AlertPriority                string   `json:"alert_priority" job:"-"`                  // LOW or HIGH
	ConfirmationPeriodSeconds    int      `json:"confirmation_period_seconds" job:"-"`     // failing this long before DOWN (0 = at once)
	RecoveryPeriodSeconds        int      `json:"recovery_period_seconds" job:"-"`         // passing this long before UP again
	ReminderAlertIntervalMinutes *int     `json:"reminder_alert_interval_minutes" job:"-"` // minutes between reminders while DOWN, -1 never; nil on legacy checks
	TimeoutMs                    *int     `json:"timeout"`                                 // per attempt; nil only on legacy browser checks
	RegionQuorum                 Quorum   `json:"region_quorum" job:"-"`                   // failing regions that fail a run (extension)
	DependsOn                    []string `json:"depends_on" job:"-"`                      // ids of checks or heartbeats this check depends on (extension)
	// DegradedResponseTimeMs: a passing run slower than this in the quorum's regions is
	// degraded, never down (extension, docs/detection.md); nil turns it off. The control plane
	// judges it from results' response times, so jobs do not carry it.
	DegradedResponseTimeMs *int        `json:"degraded_response_time_ms" job:"-"`
	Alerts                 Alerts      `json:"-" job:"-"`
	Assertions             []Assertion `json:"assertions"`
	// Version is the runtime (DefaultVersion); nil for uptime checks. Agents have one runtime
	// per kind, so jobs do not name it.
	Version *string   `json:"version" job:"-"`
	HTTP    *HTTPSpec `json:"-"`
	DNS     *DNSSpec  `json:"-"`
	TCP     *TCPSpec  `json:"-"`
	// Multistep is set for MULTISTEP checks (an extension).
	Multistep *MultistepSpec `json:"-"`
	// Extension kinds.
	Ping      *PingSpec      `json:"-"`
	GRPC      *GRPCSpec      `json:"-"`
	WebSocket *WebSocketSpec `json:"-"`
}

// onlyKindSpec counts the kinds' specifications s has: a valid check has exactly one.
func (s Spec) onlyKindSpec() int {
	n := 0
	for _, set := range []bool{s.HTTP != nil, s.DNS != nil, s.TCP != nil, s.Ping != nil, s.GRPC != nil, s.WebSocket != nil, s.Multistep != nil} {
		if set {
			n++
		}
	}
	return n
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

// Lists returns the nine lists in the order the public API contract (api/openapi) names them, addressable for decoding.
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
// The values the public API contract (api/openapi) states: alert_priority HIGH (LOW for TCP, as the public contract's TCP create says),
// confirmation 60 s, recovery 180 s, reminders every 1440 min, timeout 10000 ms; the kinds'
// own defaults are in http.go, dns.go and tcp.go. Our choices where it is silent: test_interval
// 60 s and DefaultRegions.
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
		RegionQuorum:                 QuorumMajority,
		DependsOn:                    []string{},
	}
	s.Alerts.Normalize()
	s.setKindDefaults()
	if k == TCP {
		s.AlertPriority = PriorityLow
	}
	if v := DefaultVersion(k); v != "" {
		s.Version = &v
	}
	return s
}

// setKindDefaults gives s the default configuration of its kind, and none of the others.
func (s *Spec) setKindDefaults() {
	s.HTTP, s.DNS, s.TCP, s.Multistep, s.Ping, s.GRPC, s.WebSocket = nil, nil, nil, nil, nil, nil, nil
	switch s.Kind {
	case Uptime, Browser:
		s.HTTP = defaultHTTP()
	case DNS:
		s.DNS = defaultDNS()
	case TCP:
		s.TCP = defaultTCP()
	case Multistep:
		s.Multistep = defaultMultistep()
	case Ping:
		s.Ping = defaultPing()
	case GRPC:
		s.GRPC = defaultGRPC()
	case WebSocket:
		s.WebSocket = defaultWebSocket()
	}
}

// Example is a valid check of kind k in which every field differs from Defaults(k), except
// those the kind fixes (Version) or does not have (an uptime check's script): the input of the
// tests that walk every field through every form. The kinds' parts are in http.go, dns.go and
// tcp.go, beside their fields.
func Example(k Kind) Spec {
	s := Spec{
		Kind:                         k,
		Name:                         "Example " + string(k),
		TestInterval:                 MinTestInterval,
		TestRegions:                  []string{"cloud:eu-west-2", "cloud:ap-northeast-1"},
		AlertPriority:                PriorityLow,
		ConfirmationPeriodSeconds:    30,
		RecoveryPeriodSeconds:        90,
		ReminderAlertIntervalMinutes: ptr(-1),
		TimeoutMs:                    ptr(5000),
		RegionQuorum:                 QuorumCount(2),
		DependsOn:                    []string{ExampleDependency},
		DegradedResponseTimeMs:       ptr(2500),
		Alerts: Alerts{User: []string{"u1"}, Slack: []string{"s1"}, Discord: []string{"d1"},
			IncidentIO: []string{"i1"}, MicrosoftTeams: []string{"m1"}, Telegram: []string{"t1"},
			Pushover: []string{"p1"}, Webhook: []string{"w1", "w2"}, Oncall: []string{"o1"}},
		Version: Defaults(k).Version,
	}
	if k == TCP {
		s.AlertPriority = PriorityHigh
	}
	switch k {
	case Uptime:
		s.HTTP, s.Assertions = exampleHTTP(), exampleHTTPAssertions()
	case Browser:
		s.HTTP, s.Assertions = exampleBrowser(), exampleHTTPAssertions()
	case DNS:
		s.DNS, s.Assertions = exampleDNS(), exampleDNSAssertions()
	case TCP:
		s.TCP, s.Assertions = exampleTCP(), exampleTCPAssertions()
	case Multistep:
		s.Multistep = exampleMultistep() // its assertions are the script's expect() calls
	case Ping:
		s.Ping, s.Assertions = examplePing(), []Assertion{}
	case GRPC:
		s.GRPC, s.Assertions = exampleGRPC(), []Assertion{}
	case WebSocket:
		s.WebSocket, s.Assertions = exampleWebSocket(), []Assertion{}
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
	Field string // "headers.<Name>", "grpc_metadata.<name>", "auth_username" or "auth_password"
	Name  string
}

// VarRefs lists the {{NAME}} references the control plane resolves when it builds a job:
// uptime header values, and the Basic-auth user-id and password of uptime and browser checks
// (api/openapi/environment-variables.yaml; browser headers take no references); for the
// extension kinds, WebSocket header values and gRPC metadata values. Map entries come in name
// order.
func (s Spec) VarRefs() []VarRef {
	var refs []VarRef
	for _, f := range s.varRefFields() {
		for _, v := range VarRefs(f.value) {
			refs = append(refs, VarRef{Field: f.field, Name: v})
		}
	}
	return refs
}

// MapVarRefFields replaces the value of every field VarRefs looks at with fn(value): the
// control plane resolves references with it, and rewrites them when a variable is renamed.
// Header and metadata maps are replaced, never changed in place, so a shared map is safe.
func (s *Spec) MapVarRefFields(fn func(string) string) {
	if m := s.varRefMap(); m != nil && len(*m) > 0 {
		out := make(map[string]string, len(*m))
		for name, v := range *m {
			out[name] = fn(v)
		}
		*m = out
	}
	if h := s.HTTP; h != nil {
		for _, p := range []**string{&h.AuthUsername, &h.AuthPassword} {
			if *p != nil {
				v := fn(**p)
				*p = &v
			}
		}
	}
}

// varRefMap is the map whose values take {{NAME}} references, with the prefix of its fields'
// API names; nil when the kind has none.
func (s *Spec) varRefMap() *map[string]string {
	switch {
	case s.Kind == Uptime && s.HTTP != nil:
		return &s.HTTP.Headers
	case s.Kind == WebSocket && s.WebSocket != nil:
		return &s.WebSocket.Headers
	case s.Kind == GRPC && s.GRPC != nil:
		return &s.GRPC.Metadata
	}
	return nil
}

type varRefField struct{ field, value string }

// varRefFields lists the fields that take {{NAME}} references, with their values.
func (s Spec) varRefFields() []varRefField {
	var out []varRefField
	if m := s.varRefMap(); m != nil {
		prefix := "headers."
		if s.Kind == GRPC {
			prefix = "grpc_metadata."
		}
		for _, name := range sortedKeys(*m) {
			out = append(out, varRefField{prefix + name, (*m)[name]})
		}
	}
	if s.HTTP == nil {
		return out
	}
	if u := s.HTTP.AuthUsername; u != nil {
		out = append(out, varRefField{"auth_username", *u})
	}
	if p := s.HTTP.AuthPassword; p != nil {
		out = append(out, varRefField{"auth_password", *p})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
