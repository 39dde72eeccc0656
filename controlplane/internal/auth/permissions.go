// Package auth decides who a request comes from and what it may do: bearer secrets, their
// hashes, permission areas and levels, and a cached authenticator so that checking a token does
// not cost a database round trip on every request — kept honest by a revocation feed that
// evicts deleted tokens and removed members on every replica as the change commits.
package auth

import (
	"fmt"
	"sort"
	"strings"
)

// Area is a permission area (api/openapi/openapi.yaml).
type Area string

// The permission areas. PROJECTS is the candidate contract's tenth area.
const (
	UptimeChecks         Area = "UPTIME_CHECKS"
	StatusPages          Area = "STATUS_PAGES"
	HeartbeatChecks      Area = "HEARTBEAT_CHECKS"
	MaintenanceWindows   Area = "MAINTENANCE_WINDOWS"
	People               Area = "PEOPLE"
	Integrations         Area = "INTEGRATIONS"
	APITokens            Area = "API_TOKENS"
	Webhooks             Area = "WEBHOOKS"
	EnvironmentVariables Area = "ENVIRONMENT_VARIABLES"
	Projects             Area = "PROJECTS"
)

// Areas lists every area of an organization, in the order the contract names them.
var Areas = []Area{UptimeChecks, StatusPages, HeartbeatChecks, MaintenanceWindows, People, Integrations, APITokens, Webhooks, EnvironmentVariables, Projects}

// Agents is the operators' area (a Vantage extension): the deployment's agents and the
// regions they serve (GET /v1/agents), whatever the token's organization. It is no
// organization's to give, so "every area" (AllGrants, the admin commands' "all") leaves it
// out: an operator names it (admin create-token --grants AGENTS:READ), the bootstrap token
// holds it (OperatorGrants), and a token holding it can pass it on like any other grant.
const Agents Area = "AGENTS"

// OperatorAreas are the areas beyond an organization's.
var OperatorAreas = []Area{Agents}

// allAreas is every area, organization's first; a grant's bit is its index here.
var allAreas = append(append([]Area{}, Areas...), OperatorAreas...)

// Level is READ or EDIT; EDIT implies READ.
type Level string

// The levels of a grant.
const (
	Read Level = "READ"
	Edit Level = "EDIT"
)

// Grant is one area at one level.
type Grant struct {
	Area  Area
	Level Level
}

func (g Grant) String() string { return string(g.Area) + ":" + string(g.Level) }

// ValidArea reports whether s names an area.
func ValidArea(s string) bool {
	for _, a := range allAreas {
		if string(a) == s {
			return true
		}
	}
	return false
}

// ParseGrant parses "AREA:LEVEL".
func ParseGrant(s string) (Grant, error) {
	area, level, ok := strings.Cut(s, ":")
	if !ok || !ValidArea(area) || (level != string(Read) && level != string(Edit)) {
		return Grant{}, fmt.Errorf("invalid grant %q", s)
	}
	return Grant{Area(area), Level(level)}, nil
}

// Permissions is a set of grants, as bits: two per area (read, edit).
type Permissions uint32

func bit(a Area, l Level) Permissions {
	for i, x := range allAreas {
		if x == a {
			if l == Edit {
				return 1 << (2*i + 1)
			}
			return 1 << (2 * i)
		}
	}
	return 0
}

// NewPermissions builds a set from "AREA:LEVEL" strings, ignoring unknown ones (a grant removed
// from the vocabulary must not break a stored token).
func NewPermissions(grants []string) Permissions {
	var p Permissions
	for _, s := range grants {
		if g, err := ParseGrant(s); err == nil {
			p |= bit(g.Area, g.Level)
		}
	}
	return p
}

// AllGrants is every area of an organization at EDIT.
func AllGrants() []string {
	out := make([]string, len(Areas))
	for i, a := range Areas {
		out[i] = string(a) + ":" + string(Edit)
	}
	return out
}

// OperatorGrants are the grants of the operator's bootstrap token: AllGrants and the
// operators' areas at READ (they have nothing to edit).
func OperatorGrants() []string {
	out := AllGrants()
	for _, a := range OperatorAreas {
		out = append(out, string(a)+":"+string(Read))
	}
	return out
}

// Allows reports whether the set grants level on area; EDIT grants READ.
func (p Permissions) Allows(a Area, l Level) bool {
	if p&bit(a, Edit) != 0 {
		return true
	}
	return l == Read && p&bit(a, Read) != 0
}

// Describe renders the set as the permissions endpoint shows it: "uptime_checks (read)".
func (p Permissions) Describe() []string {
	out := []string{}
	for _, a := range allAreas {
		switch {
		case p&bit(a, Edit) != 0:
			out = append(out, strings.ToLower(string(a))+" (edit)")
		case p&bit(a, Read) != 0:
			out = append(out, strings.ToLower(string(a))+" (read)")
		}
	}
	sort.Strings(out)
	return out
}
