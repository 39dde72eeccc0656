package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/assert"
	"github.com/vantagehq/vantage/pkg/check"
)

// checkBody says which route a check body was sent to, and so which fields it accepts.
//
// Every check body is strict: a property the route does not accept is a 400. The public API contract (api/openapi) states it
// for the DNS and TCP bodies; we apply it to uptime and browser bodies too, so that a typo such
// as "verifySsl" is an error instead of a silently kept default.
type checkBody struct {
	create  bool // create: the kind's defaults first; patch: only given fields change
	generic bool // /v1/checks rather than /v1/checks/<kind>
	// kind is the typed route's kind, or on the generic PATCH the stored check's kind.
	// Unused on the generic create, whose `type` chooses it.
	kind check.Kind
}

// decodeCheck applies the request body o to c following the rules of b, and returns every
// broken rule at once (fieldErrors), type errors and value rules alike. On create, c holds no
// configuration yet and gets the kind's defaults here; on patch, c is the stored check and only
// the fields the body gives change, with no defaults applied.
func decodeCheck(o *object, b checkBody, c *store.Check) error {
	kind := decodeCheckKind(o, b, c)
	if b.create {
		c.Spec = check.Defaults(kind)
	} else if kind != c.Spec.Kind {
		c.Spec.SetHTTPKind(kind)
	}
	s := &c.Spec

	decodeProject(o, b, c)
	// required reports whether to decode a field the create body must have (on create a
	// missing or null one is recorded as required, once).
	required := func(name string) bool { return !b.create || o.Require(name) }
	decodeCommon(o, s, required)
	badAssertions := decodeAssertions(o, s)

	if b.create {
		o.Forbid("paused", "cannot be set on create; create the check, then PATCH paused")
		o.Forbid("muted", "cannot be set on create; create the check, then PATCH muted")
	} else {
		setValue(o, "paused", &c.Paused)
		setValue(o, "muted", &c.Muted)
	}

	if kind.IsHTTP() {
		decodeHTTP(o, b, s, required)
	} else {
		if kind == check.DNS {
			// Extension for real clients (the Terraform provider sends "" for unset).
			o.emptyAsNull("dns_resolver")
		}
		decodeSpecFields(o, s, b.create)
	}
	o.Strict()

	// Value rules run on the result, so cross-field rules (a browser check needs a url or a
	// script) see the stored values too. A field whose input was already refused is not
	// judged again: its value is still the default or the stored one.
	refused := map[string]bool{}
	for _, e := range *o.errs {
		refused[e.Field] = true
	}
	for _, e := range s.Validate() {
		if !refused[e.Field] {
			o.Fail(e.Field, "%s", e.Message)
		}
	}
	for i, a := range s.Assertions {
		if badAssertions[i] {
			continue
		}
		if _, err := assert.Compile(kind, a); err != nil {
			var fe *assert.FieldError
			if errors.As(err, &fe) {
				o.Fail(fmt.Sprintf("assertions[%d].%s", i, fe.Field), "%s", fe.Message)
			} else {
				o.Fail(fmt.Sprintf("assertions[%d]", i), "%s", err.Error())
			}
		}
	}
	return o.Err()
}

// decodeProject reads project_id: create bodies take an optional project (null or omitted:
// Unassigned), and so does the generic PATCH, where a change is applied as a move (see
// store.UpdateCheck); the typed PATCH bodies refuse it.
func decodeProject(o *object, b checkBody, c *store.Check) {
	switch {
	case b.create || b.generic:
		if v := field[string](o, "project_id"); v.Null {
			c.ProjectID = nil
		} else if str, ok := v.Value(); ok {
			if id, err := parseProjectID("project_id", str); err != nil {
				o.Fail("project_id", "%s", err.(fieldErrors)[0].Message)
			} else {
				c.ProjectID = &id
			}
		}
	default:
		o.Forbid("project_id", "cannot be changed here; use POST /v1/checks/{check_id}/move")
	}
}

// decodeCommon reads the fields every kind has.
func decodeCommon(o *object, s *check.Spec, required func(string) bool) {
	if required("name") {
		if v, ok := nonNull[string](o, "name").Value(); ok {
			s.Name = strings.TrimSpace(v)
		}
	}
	setValue(o, "test_interval", &s.TestInterval)
	setValue(o, "test_regions", &s.TestRegions)
	for _, l := range s.Alerts.Lists() {
		setValue(o, l.Field, l.IDs)
	}
	setValue(o, "alert_priority", &s.AlertPriority)
	setValue(o, "confirmation_period_seconds", &s.ConfirmationPeriodSeconds)
	setValue(o, "recovery_period_seconds", &s.RecoveryPeriodSeconds)
	if v := nonNull[int](o, "reminder_alert_interval_minutes").Ptr(); v != nil {
		s.ReminderAlertIntervalMinutes = v
	}
	if v := nonNull[int](o, "timeout").Ptr(); v != nil {
		s.TimeoutMs = v
	}
	decodeQuorum(o, s)
	setValue(o, "depends_on", &s.DependsOn)
	setNullable(o, "degraded_response_time_ms", &s.DegradedResponseTimeMs)
}

// decodeQuorum reads region_quorum (an extension): a string or an integer, so it is decoded
// from its raw JSON with a message that names both forms.
func decodeQuorum(o *object, s *check.Spec) {
	const want = `must be "majority", "any", "all" or an integer count of failing regions`
	v := field[json.RawMessage](o, "region_quorum")
	if !v.Set {
		return
	}
	var q check.Quorum
	if v.Null || json.Unmarshal(v.V, &q) != nil {
		o.Fail("region_quorum", want)
		return
	}
	s.RegionQuorum = q
}

// decodeCheckKind reads `type` and returns the kind the body makes the check.
func decodeCheckKind(o *object, b checkBody, c *store.Check) check.Kind {
	switch {
	case b.generic && (b.create || b.kind.IsHTTP()):
		// Generic create (default UPTIME_CHECK) and generic PATCH of an uptime or browser
		// check (no default: omitted keeps the kind).
		kind := b.kind
		if b.create {
			kind = check.Uptime
		}
		if t, ok := nonNull[string](o, "type").Value(); ok {
			if k, _ := check.KindOfType(t); k.IsHTTP() {
				kind = k
			} else {
				o.Fail("type", "must be UPTIME_CHECK or BROWSER_CHECK")
			}
		}
		return kind
	case !b.create && !b.generic && b.kind == check.Uptime:
		// Real clients repeat the kind on the typed PATCH: accepted when it names the route's
		// own kind (an extension); changing the type is the generic PATCH's job.
		if t, ok := nonNull[string](o, "type").Value(); ok && t != b.kind.TypeName() {
			o.Fail("type", "must be %s on this route; use PATCH /v1/checks/{check_id} to change the type", b.kind.TypeName())
		}
		return c.Spec.Kind
	default:
		// Typed routes, and the generic PATCH of DNS and TCP checks: `type` may only repeat
		// the kind.
		if t, ok := nonNull[string](o, "type").Value(); ok && t != b.kind.TypeName() {
			o.Fail("type", "must be %s", b.kind.TypeName())
		}
		return b.kind
	}
}

// decodeHTTP reads the fields of uptime and browser checks: url, version and script by hand,
// since their rules depend on the route and the resulting kind, the others from the model.
func decodeHTTP(o *object, b checkBody, s *check.Spec, required func(string) bool) {
	h := s.HTTP
	typedUptime := !b.generic && b.kind == check.Uptime
	if typedUptime {
		// The uptime bodies' url is a required, non-null URI.
		if required("url") {
			if v := nonNull[string](o, "url").Ptr(); v != nil {
				h.URL = v
			}
		}
	} else {
		if s.Kind == check.Browser {
			// Extension for real clients: a scripted browser check's unset url comes as "".
			o.emptyAsNull("url")
		}
		setNullable(o, "url", &h.URL)
	}
	decodeSpecFields(o, s, b.create, "url", "script")

	if typedUptime {
		o.Forbid("version", "is not accepted for uptime checks (they have no runtime version)")
		o.Forbid("script", "is not accepted for uptime checks; create a browser check to run a script")
		return
	}
	// Browser fields. On the generic routes they are judged against the resulting kind: an
	// uptime check takes neither (null is tolerated as "none").
	if v := field[string](o, "version"); v.Set && !v.Null {
		switch {
		case s.Kind != check.Browser:
			o.Fail("version", "is only accepted for browser checks (type BROWSER_CHECK)")
		case v.V == check.VersionBrowser:
			ver := v.V
			s.Version = &ver
		case v.V == check.VersionBrowserRetired:
			o.Fail("version", "%s is retired; the only accepted value is %s", v.V, check.VersionBrowser)
		default:
			o.Fail("version", "must be %s", check.VersionBrowser)
		}
	}
	if v := field[string](o, "script"); v.Null {
		h.Script = nil
	} else if str, ok := v.Value(); ok {
		if s.Kind != check.Browser {
			o.Fail("script", "is only accepted for browser checks (type BROWSER_CHECK)")
		} else {
			h.Script = &str
		}
	}
}

// decodeAssertions reads `assertions` (null clears them, [] keeps an empty list) and reports
// which items had malformed fields, so that they are not judged again.
func decodeAssertions(o *object, s *check.Spec) map[int]bool {
	items, set, null := objects(o, "assertions")
	bad := map[int]bool{}
	switch {
	case null:
		s.Assertions = nil
	case set:
		list := make([]check.Assertion, 0, len(items))
		for i, it := range items {
			before := len(*o.errs)
			var a check.Assertion
			for _, f := range []struct {
				name string
				dst  *string
			}{{"type", &a.Type}, {"property", &a.Property}, {"comparison", &a.Comparison}, {"expected", &a.Expected}} {
				if it.Require(f.name) {
					setValue(it, f.name, f.dst)
				}
			}
			it.Strict()
			if len(*o.errs) > before {
				bad[i] = true
			}
			list = append(list, a)
		}
		s.Assertions = list
	}
	return bad
}

// decodeSpecFields reads the fields of s's kind specification (check.HTTPSpec, DNSSpec,
// TCPSpec, PingSpec, GRPCSpec or WebSocketSpec) by their json names, except those decoded by hand (handled). The model decides: a
// pointer or a map is nullable (null clears it), any other field must not be null, and a field
// tagged api:"required" must be given on create.
func decodeSpecFields(o *object, s *check.Spec, create bool, handled ...string) {
	var spec reflect.Value
	switch {
	case s.HTTP != nil:
		spec = reflect.ValueOf(s.HTTP).Elem()
	case s.DNS != nil:
		spec = reflect.ValueOf(s.DNS).Elem()
	case s.TCP != nil:
		spec = reflect.ValueOf(s.TCP).Elem()
	case s.Ping != nil:
		spec = reflect.ValueOf(s.Ping).Elem()
	case s.GRPC != nil:
		spec = reflect.ValueOf(s.GRPC).Elem()
	case s.WebSocket != nil:
		spec = reflect.ValueOf(s.WebSocket).Elem()
	case s.Multistep != nil:
		spec = reflect.ValueOf(s.Multistep).Elem()
	default:
		return
	}
	for i := range spec.NumField() {
		sf := spec.Type().Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" || slices.Contains(handled, name) {
			continue
		}
		if create && sf.Tag.Get("api") == "required" && !o.Require(name) {
			continue
		}
		setField(o, name, spec.Field(i))
	}
}

// setField decodes field name into dst, a field of the model, when it is given: null clears a
// pointer or a map and is refused for anything else.
func setField(o *object, name string, dst reflect.Value) {
	t := dst.Type()
	nullable := t.Kind() == reflect.Pointer || t.Kind() == reflect.Map
	vt := t
	if t.Kind() == reflect.Pointer {
		vt = t.Elem()
	}
	v := fieldOf(o, name, vt)
	switch {
	case !v.Set:
	case v.Null && nullable:
		dst.SetZero()
	case v.Null:
		o.Fail(name, "must be %s, not null", typeNameOf(vt))
	case t.Kind() == reflect.Pointer:
		dst.Set(v.V)
	default:
		dst.Set(v.V.Elem())
	}
}

// setValue decodes a non-nullable field into dst when it is given.
func setValue[T any](o *object, name string, dst *T) {
	if v, ok := nonNull[T](o, name).Value(); ok {
		*dst = v
	}
}

// setNullable decodes a nullable field into dst when it is given: null clears it.
func setNullable[T any](o *object, name string, dst **T) {
	v := field[T](o, name)
	switch {
	case v.Null:
		*dst = nil
	case v.Set:
		*dst = v.Ptr()
	}
}
