// Package natsauth writes the nats-server accounts of a Vantage deployment, so that the agents
// of one region can reach that region's jobs and nothing else:
//
//   - account VANTAGE holds JetStream — the job stream and its consumers — and the control
//     plane's user, with every permission in it;
//   - each region has an account of its own (AGENTS_<REGION>) with one user, for its agents or
//     for its leaf node. The account sees nothing of VANTAGE but the services VANTAGE exports
//     to it alone: looking up and creating the region's two durable consumers (agents-<region>
//     and agents-<region>-browser, each with its one filter subject), pulling their next jobs,
//     and acking (ack, nak, term, InProgress) the jobs they delivered. It sees the JetStream
//     API under APIPrefix, which its agents configure (VANTAGE_NATS_API_PREFIX).
//
// An agent of region A so cannot pull region B's jobs, read any job subject, publish a job or
// touch the stream; since every region is an account, replies (pulled jobs arrive on the
// puller's inbox) never cross regions either. A leaf node that a remote region's agents
// connect to logs in to the hub as the region's user: the hub sends it exactly the region
// account's imports, and takes from it nothing else.
//
// Passwords are written as bcrypt hashes, which nats-server recognizes.
package natsauth

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/vantagehq/vantage/pkg/wire"
)

// Account is the account of the job stream and the control plane.
const Account = "VANTAGE"

// APIPrefix is where a region account sees VANTAGE's JetStream API: its agents set
// VANTAGE_NATS_API_PREFIX to it. (An account without JetStream of its own has the server's
// "JetStream not enabled" answer on $JS.API, so the imports cannot live there.)
const APIPrefix = "vantage.js.api"

// ControlPlaneUser is the control plane's user name.
const ControlPlaneUser = "vantage-controlplane"

// AgentUser is the user name of region's agents (and of its leaf node).
func AgentUser(region string) string { return "agents-" + wire.RegionToken(region) }

// AgentAccount is region's account.
func AgentAccount(region string) string {
	return "AGENTS_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(wire.RegionToken(region)))
}

// Service is one subject VANTAGE exports to a region's account.
type Service struct {
	Subject string
	// As is the subject the region's account imports it as ("": Subject itself).
	As string
	// Stream: the service answers with several messages (a pull returns jobs and status
	// messages); otherwise with one.
	Stream bool
}

// AgentServices are the services region's agents use: for each of the region's two
// consumers, its lookup, its creation with its own filter subject (JetStream refuses a create
// whose configuration filters anything else), its pulls and the acks of its jobs.
func AgentServices(region string) []Service {
	const api = "$JS.API.CONSUMER."
	as := func(s string) string { return APIPrefix + strings.TrimPrefix(s, "$JS.API") }
	var out []Service
	for _, c := range []struct{ name, subject string }{
		{wire.ConsumerName(region), wire.JobSubject(region)},
		{wire.BrowserConsumerName(region), wire.BrowserJobSubject(region)},
	} {
		consumer := wire.JobStream + "." + c.name
		info, create, next := api+"INFO."+consumer, api+"CREATE."+consumer+"."+c.subject, api+"MSG.NEXT."+consumer
		out = append(out,
			Service{Subject: info, As: as(info)},
			Service{Subject: create, As: as(create)},
			Service{Subject: next, As: as(next), Stream: true},
			// The reply subjects of delivered jobs, as JetStream sets them.
			Service{Subject: "$JS.ACK." + consumer + ".>"},
		)
	}
	return out
}

// Config renders the accounts block for regions, with each user's password (in clear, by
// user name; written hashed). header becomes the leading comment.
func Config(regions []string, passwords map[string]string, header string) (string, error) {
	hash := func(user string) (string, error) {
		pw := passwords[user]
		if pw == "" {
			return "", fmt.Errorf("natsauth: user %s has no password", user)
		}
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
		if err != nil {
			return "", fmt.Errorf("natsauth: hash the password of %s: %w", user, err)
		}
		return strconv.Quote(string(h)), nil
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(header), "\n") {
		b.WriteString("# " + line + "\n")
	}
	cp, err := hash(ControlPlaneUser)
	if err != nil {
		return "", err
	}
	b.WriteString("accounts {\n")
	fmt.Fprintf(&b, "  # The job stream, and the control plane (VANTAGE_NATS_URL nats://%s:<password>@...).\n", ControlPlaneUser)
	fmt.Fprintf(&b, "  %s {\n    jetstream: enabled\n    users: [{user: %s, password: %s}]\n    exports: [\n",
		Account, strconv.Quote(ControlPlaneUser), cp)
	for _, r := range regions {
		for _, s := range AgentServices(r) {
			resp := ""
			if s.Stream {
				resp = ", response_type: stream"
			}
			fmt.Fprintf(&b, "      {service: %s, accounts: [%s]%s}\n", strconv.Quote(s.Subject), AgentAccount(r), resp)
		}
	}
	b.WriteString("    ]\n  }\n")
	for _, r := range regions {
		pw, err := hash(AgentUser(r))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  # Agents of %s, or its leaf node: only that region's consumers. Its agents set\n", r)
		fmt.Fprintf(&b, "  # VANTAGE_NATS_URL=nats://%s:<password>@... and VANTAGE_NATS_API_PREFIX=%s.\n", AgentUser(r), APIPrefix)
		fmt.Fprintf(&b, "  %s {\n    users: [{user: %s, password: %s}]\n    imports: [\n", AgentAccount(r), strconv.Quote(AgentUser(r)), pw)
		for _, s := range AgentServices(r) {
			to := ""
			if s.As != "" {
				to = ", to: " + strconv.Quote(s.As)
			}
			fmt.Fprintf(&b, "      {service: {account: %s, subject: %s}%s}\n", Account, strconv.Quote(s.Subject), to)
		}
		b.WriteString("    ]\n  }\n")
	}
	b.WriteString("}\n")
	return b.String(), nil
}
