package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/mail"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/config"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

const adminUsage = `usage: vantage-controlplane admin <command> [flags]

Operator commands, run against VANTAGE_DATABASE_URL (migrated first). Secrets are printed once,
alone on stdout, so that scripts can capture them: TOKEN=$(vantage-controlplane admin create-token ...).

  create-org         --name N [--plan free|paid]                    print the new organization's id
  create-token       --org ID --name N [--grants AREA:LEVEL,...|all] [--expires 720h|never]
                                                                    print a new API token's secret
  create-user-token  --email E --org ID[,ID...] [--role ADMIN|STANDARD] [--scopes AREA:LEVEL,...|all]
                     [--expires 720h|never]                         make E a member of the organizations
                                                                    and print an access token's secret
  list-orgs                                                         list every organization
  console-link       [--token-env VAR] [--base URL] [--expires 15m]  print a one-time link that signs a
                                                                    browser in to the console with the
                                                                    token in $VAR (VANTAGE_CONSOLE_TOKEN)
  create-agent-token --regions R[,R...]|all [--name N]              print a new agent token's secret; its
                                                                    agents may serve only those regions
  list-agent-tokens                                                 list every agent token
  revoke-agent-token ID                                             revoke an agent token; its streams end
                                                                    on every control plane
  reencrypt-secrets                                                 re-seal every stored secret under
                                                                    VANTAGE_SECRET_KEY (key rotation; the old
                                                                    key in VANTAGE_SECRET_KEY_PREVIOUS)
  nats-config        --regions R[,R...]|all --secrets FILE [--leafnodes ADDR]
                                                                    print the nats-server accounts: the
                                                                    control plane's, one per region (no
                                                                    database needed)

Run "vantage-controlplane admin <command> -h" for a command's flags.`

// adminDefaultExpiry is how long admin-made tokens live unless --expires says otherwise: the
// same 365 days as a token created through the API without expiresAt.
const adminDefaultExpiry = "8760h"

// admin runs one operator subcommand. Results go to stdout; notes for the operator (ids, expiry)
// to stderr, so that stdout carries only what a script captures.
func admin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("admin: a command is required; " + strings.TrimSpace(adminUsage))
	}
	cmd, args := args[0], args[1:]
	var parse func(args []string, stdout, stderr io.Writer) (adminExec, error)
	switch cmd {
	case "create-org":
		parse = adminCreateOrg
	case "create-token":
		parse = adminCreateToken
	case "create-user-token":
		parse = adminCreateUserToken
	case "list-orgs":
		parse = adminListOrgs
	case "console-link":
		parse = func(args []string, stdout, stderr io.Writer) (adminExec, error) {
			return adminConsoleLink(args, getenv, stdout, stderr)
		}
	case "create-agent-token":
		parse = adminCreateAgentToken
	case "list-agent-tokens":
		parse = adminListAgentTokens
	case "revoke-agent-token":
		parse = adminRevokeAgentToken
	case "reencrypt-secrets":
		parse = adminReencryptSecrets
	case "nats-config":
		return adminNATSConfig(args, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, adminUsage)
		return nil
	default:
		return fmt.Errorf("admin: unknown command %q\n%s", cmd, adminUsage)
	}
	// Flags are checked before the database is touched, so usage errors need no configuration.
	exec, err := parse(args, stdout, stderr)
	if err != nil || exec == nil { // nil exec: help was printed
		return err
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	if err := checkSecretKey(ctx, st, cfg); err != nil {
		return err
	}
	return exec(ctx, st)
}

// adminExec is a parsed subcommand, ready to run against the store.
type adminExec func(ctx context.Context, st *store.Store) error

// adminFlags parses a subcommand's flags; on -h it prints the flags to stdout and returns errHelp.
func adminFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "usage: vantage-controlplane admin %s [flags]\n", fs.Name())
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return errHelp
	case err != nil:
		return fmt.Errorf("admin %s: %w", fs.Name(), err)
	case fs.NArg() > 0:
		return fmt.Errorf("admin %s: unexpected argument %q (flags are written --name value)", fs.Name(), fs.Arg(0))
	}
	return nil
}

// errHelp stops a subcommand after printing its help; helpIsDone turns it into success.
var errHelp = errors.New("help shown")

// adminReencryptSecrets finishes a key rotation: every sealed value is opened with whichever
// configured key sealed it and sealed again under VANTAGE_SECRET_KEY, which becomes the key the
// database expects; replicas still on the old key alone then refuse to start.
func adminReencryptSecrets(args []string, stdout, stderr io.Writer) (adminExec, error) {
	fs := flag.NewFlagSet("reencrypt-secrets", flag.ContinueOnError)
	if err := adminFlags(fs, args, stdout); err != nil {
		return nil, helpIsDone(err)
	}
	return func(ctx context.Context, st *store.Store) error {
		n, err := st.ReencryptSecrets(ctx)
		if err != nil {
			return fmt.Errorf("admin reencrypt-secrets: %w", err)
		}
		fmt.Fprintf(stderr, "re-sealed %d secrets under the current key\n", n)
		return nil
	}, nil
}

func adminCreateOrg(args []string, stdout, stderr io.Writer) (adminExec, error) {
	fs := flag.NewFlagSet("create-org", flag.ContinueOnError)
	name := fs.String("name", "", "organization name, 1..255 characters (required)")
	plan := fs.String("plan", "free", "plan: free or paid (webhooks need paid)")
	if err := adminFlags(fs, args, stdout); err != nil {
		return nil, helpIsDone(err)
	}
	var errs []string
	if msg := checkName(*name); msg != "" {
		errs = append(errs, "--name "+msg)
	}
	if *plan != "free" && *plan != "paid" {
		errs = append(errs, fmt.Sprintf("--plan must be free or paid, got %q", *plan))
	}
	if err := flagErrors(fs, errs); err != nil {
		return nil, err
	}
	return func(ctx context.Context, st *store.Store) error {
		org, err := st.CreateOrganization(ctx, *name, *plan)
		if err != nil {
			return fmt.Errorf("create organization: %w", err)
		}
		fmt.Fprintln(stdout, org.ID)
		return nil
	}, nil
}

func adminCreateToken(args []string, stdout, stderr io.Writer) (adminExec, error) {
	fs := flag.NewFlagSet("create-token", flag.ContinueOnError)
	org := fs.String("org", "", "organization id (required)")
	name := fs.String("name", "", "token name, 1..255 characters (required)")
	grantsFlag := fs.String("grants", "all", `comma-separated AREA:LEVEL grants (LEVEL READ or EDIT), or "all" for every area at EDIT`)
	expires := fs.String("expires", adminDefaultExpiry, `lifetime as a Go duration (e.g. 720h), or "never"`)
	if err := adminFlags(fs, args, stdout); err != nil {
		return nil, helpIsDone(err)
	}
	var errs []string
	orgID, err := uuid.Parse(*org)
	if err != nil {
		errs = append(errs, fmt.Sprintf("--org must be an organization id, got %q", *org))
	}
	if msg := checkName(*name); msg != "" {
		errs = append(errs, "--name "+msg)
	}
	grants, err := parseGrantList(*grantsFlag)
	if err != nil {
		errs = append(errs, "--grants "+err.Error())
	}
	expiresAt, err := parseExpiry(*expires, time.Now())
	if err != nil {
		errs = append(errs, "--expires "+err.Error())
	}
	if err := flagErrors(fs, errs); err != nil {
		return nil, err
	}
	return func(ctx context.Context, st *store.Store) error {
		if _, err := st.GetOrganization(ctx, orgID); err != nil {
			return orgError(orgID, err)
		}
		secret, hash := auth.NewSecret()
		t, err := st.CreateAPIToken(ctx, store.SystemActor, store.NewAPIToken{OrgID: orgID, Name: *name, Grants: grants,
			ExpiresAt: expiresAt, SecretHash: hash})
		if err != nil {
			return fmt.Errorf("create token: %w", err)
		}
		fmt.Fprintf(stderr, "created API token %s in organization %s, %s; the secret below is shown only once\n",
			t.ID, orgID, describeExpiry(expiresAt))
		fmt.Fprintln(stdout, secret)
		return nil
	}, nil
}

func adminCreateUserToken(args []string, stdout, stderr io.Writer) (adminExec, error) {
	fs := flag.NewFlagSet("create-user-token", flag.ContinueOnError)
	email := fs.String("email", "", "the user's e-mail address; the user is created when missing (required)")
	orgs := fs.String("org", "", "comma-separated organization ids the user joins (required)")
	role := fs.String("role", "STANDARD", "the user's role in those organizations: ADMIN or STANDARD")
	scopes := fs.String("scopes", "all", `comma-separated AREA:LEVEL scopes, or "all" for every area at EDIT`)
	expires := fs.String("expires", adminDefaultExpiry, `lifetime as a Go duration (e.g. 720h), or "never"`)
	if err := adminFlags(fs, args, stdout); err != nil {
		return nil, helpIsDone(err)
	}
	var errs []string
	if addr, err := mail.ParseAddress(*email); err != nil || addr.Address != *email {
		errs = append(errs, fmt.Sprintf("--email must be a plain e-mail address such as ops@example.com, got %q", *email))
	}
	var orgIDs []uuid.UUID
	for _, s := range strings.Split(*orgs, ",") {
		id, err := uuid.Parse(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, fmt.Sprintf("--org must be comma-separated organization ids, got %q", *orgs))
			break
		}
		orgIDs = append(orgIDs, id)
	}
	if *role != "ADMIN" && *role != "STANDARD" {
		errs = append(errs, fmt.Sprintf("--role must be ADMIN or STANDARD, got %q", *role))
	}
	grants, err := parseGrantList(*scopes)
	if err != nil {
		errs = append(errs, "--scopes "+err.Error())
	}
	expiresAt, err := parseExpiry(*expires, time.Now())
	if err != nil {
		errs = append(errs, "--expires "+err.Error())
	}
	if err := flagErrors(fs, errs); err != nil {
		return nil, err
	}
	return func(ctx context.Context, st *store.Store) error {
		for _, id := range orgIDs {
			if _, err := st.GetOrganization(ctx, id); err != nil {
				return orgError(id, err)
			}
		}
		// Each step is idempotent (the user and memberships are upserts), so a failed run can simply
		// be repeated.
		u, err := st.EnsureUser(ctx, *email)
		if err != nil {
			return fmt.Errorf("create user %s: %w", *email, err)
		}
		for _, id := range orgIDs {
			if err := st.AddMembership(ctx, id, u.ID, *role); err != nil {
				return fmt.Errorf("add %s to organization %s: %w", *email, id, err)
			}
		}
		secret, hash := auth.NewSecret()
		tokenID, err := st.CreateAccessToken(ctx, u.ID, grants, expiresAt, hash)
		if err != nil {
			return fmt.Errorf("create access token: %w", err)
		}
		fmt.Fprintf(stderr, "created access token %s for user %s (%s), %s; it covers every organization the user "+
			"belongs to, so requests name one with X-Service-Organisation when there are several; the secret below is shown only once\n",
			tokenID, u.ID, u.Email, describeExpiry(expiresAt))
		fmt.Fprintln(stdout, secret)
		return nil
	}, nil
}

func adminListOrgs(args []string, stdout, stderr io.Writer) (adminExec, error) {
	fs := flag.NewFlagSet("list-orgs", flag.ContinueOnError)
	if err := adminFlags(fs, args, stdout); err != nil {
		return nil, helpIsDone(err)
	}
	return func(ctx context.Context, st *store.Store) error {
		orgs, err := st.ListOrganizations(ctx)
		if err != nil {
			return fmt.Errorf("list organizations: %w", err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPLAN\tCREATED\tNAME")
		for _, o := range orgs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.ID, o.Plan, o.CreatedAt.UTC().Format(time.RFC3339), o.Name)
		}
		return tw.Flush()
	}, nil
}

// helpIsDone turns the help sentinel into success.
func helpIsDone(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

func flagErrors(fs *flag.FlagSet, errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("admin %s:\n  %s", fs.Name(), strings.Join(errs, "\n  "))
}

func orgError(id uuid.UUID, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("organization %s does not exist (see admin list-orgs)", id)
	}
	return fmt.Errorf("read organization %s: %w", id, err)
}

// checkName validates a name flag, returning what is wrong or "".
func checkName(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "is required"
	case utf8.RuneCountInString(s) > 255:
		return "must be at most 255 characters"
	}
	return ""
}

// parseGrantList reads "all" or comma-separated "AREA:LEVEL" grants, each area at most once.
func parseGrantList(s string) ([]string, error) {
	if strings.TrimSpace(s) == "all" {
		return auth.AllGrants(), nil
	}
	var out []string
	seen := map[auth.Area]bool{}
	for _, part := range strings.Split(s, ",") {
		g, err := auth.ParseGrant(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("must be \"all\" or comma-separated AREA:LEVEL (areas %s; levels READ, EDIT): %w", areaNames(), err)
		}
		if seen[g.Area] {
			return nil, fmt.Errorf("names %s more than once", g.Area)
		}
		seen[g.Area] = true
		out = append(out, g.String())
	}
	return out, nil
}

func areaNames() string {
	names := make([]string, len(auth.Areas))
	for i, a := range auth.Areas {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

// parseExpiry reads "never" (nil) or a positive duration from now.
func parseExpiry(s string, now time.Time) (*time.Time, error) {
	if s == "never" {
		return nil, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("must be a positive duration such as 720h, or \"never\", got %q", s)
	}
	t := now.Add(d).UTC().Truncate(time.Millisecond)
	return &t, nil
}

func describeExpiry(t *time.Time) string {
	if t == nil {
		return "never expiring"
	}
	return "expiring " + t.Format(time.RFC3339)
}
