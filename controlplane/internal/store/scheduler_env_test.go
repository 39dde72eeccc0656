package store_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
)

func TestSchedulableBrowserScriptEnv(t *testing.T) {
	t.Parallel()
	st, seal, org := schedSetup(t)
	project := uuid.Must(uuid.NewV7())
	schedExec(t, st, `INSERT INTO projects (id, org_id, name) VALUES ($1, $2, 'p')`, project, org)
	addVar := func(project *uuid.UUID, name, typ, value string) {
		schedExec(t, st, `INSERT INTO env_vars (id, org_id, project_id, name, type, value_enc) VALUES ($1, $2, $3, $4, $5, $6)`,
			uuid.Must(uuid.NewV7()), org, project, name, typ, seal(value))
	}
	addVar(&project, "TOKEN", store.EnvVarSecret, "project-secret")
	addVar(&project, "SITE_USER", store.EnvVarConfig, "bob")
	addVar(&project, "UNREAD", store.EnvVarSecret, "never-read")
	addVar(nil, "TOKEN", store.EnvVarSecret, "pool-secret")

	script := `import { test } from '@playwright/test';
test('login', async ({ page }) => {
  await page.fill('#user', process.env.SITE_USER);
  await page.fill('#token', process.env['TOKEN']);
  await page.fill('#other', process.env.NOT_A_VARIABLE ?? '');
  const lower = process.env.lowercase;
});`
	id := storetest.Check(t, st, &storetest.CheckOpts{OrgID: org, ProjectID: &project, Kind: check.Browser, Name: "b",
		Spec: func(sp *check.Spec) {
			sp.TestRegions, sp.AlertPriority, sp.TimeoutMs = []string{"cloud:us-east-1"}, check.PriorityLow, new(30000)
			sp.HTTP.URL, sp.HTTP.Script = nil, &script
		}}).ID
	got, err := st.SchedulableChecksByID(context.Background(), []uuid.UUID{id})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d checks", len(got))
	}
	c := got[0]
	want := map[string]string{"SITE_USER": "bob", "TOKEN": "project-secret"}
	if !maps.Equal(c.Env, want) {
		t.Errorf("env %v, want %v (only the variables the script reads, from its project)", c.Env, want)
	}
	if !slices.Equal(c.Redact, []string{"project-secret"}) {
		t.Errorf("redact %q, want the secret the script reads", c.Redact)
	}
	if len(c.MissingVars) != 0 {
		t.Errorf("a name the script reads without a variable is not missing: %v", c.MissingVars)
	}
}
