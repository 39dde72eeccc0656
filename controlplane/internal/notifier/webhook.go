package notifier

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/netpolicy"
	"github.com/vantagehq/vantage/pkg/redact"
)

// SecretPrefix starts every webhook signing secret.
const SecretPrefix = "whsec_"

// Sign computes the Standard Webhooks signature header value of one request:
// "v1," + base64(HMAC-SHA256(key, msgID + "." + timestamp + "." + body)), where key is the
// base64-decoded part of secret after "whsec_".
func Sign(secret, msgID string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return "", fmt.Errorf("webhook secret is not whsec_<base64>: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// maxResponseRead is how much of a receiver's answer is read (then discarded).
const maxResponseRead = 64 << 10

// sendWebhook POSTs the event document to the webhook. A 2xx answer is success; anything else,
// including redirects, is an error to retry. Error texts name the host of the URL as the
// organization wrote it ({{NAME}} references unsubstituted), never the substituted URL nor the
// address it resolved to.
func (n *Notifier) sendWebhook(ctx context.Context, d store.DueDelivery, at time.Time) (*int, error) {
	target, secrets, err := n.resolveURL(ctx, d)
	if err != nil {
		return nil, err
	}
	sig, err := Sign(d.Secret, d.EventID.String(), at.Unix(), d.Body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(d.Body))
	if err != nil {
		return nil, errors.New("the webhook URL is not a valid request target")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Vantage-Webhooks/1.0")
	req.Header.Set("webhook-id", d.EventID.String())
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := n.client.Do(req)
	if err != nil {
		return nil, errors.New(redactSecrets(netpolicy.Describe(templateHost(d.URL), err), secrets))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseRead))
	code := resp.StatusCode
	if code < 200 || code > 299 {
		return &code, fmt.Errorf("%s: the receiver answered HTTP %d", redactSecrets(templateHost(d.URL), secrets), code)
	}
	return &code, nil
}

// templateHost is the host (and port) of a webhook URL as written, without credentials; its
// {{NAME}} references stay as they are, so a variable's value never reaches an error text. A
// template without "://" (the whole URL in one variable) is its own host: "{{HOOK_URL}}".
func templateHost(raw string) string {
	rest := raw
	if _, after, found := strings.Cut(raw, "://"); found {
		rest = after
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

// resolveURL substitutes the {{NAME}} references of the URL from the organization's variable
// pool, now (api/openapi/environment-variables.yaml), and returns the URL and the values to keep out of error texts.
func (n *Notifier) resolveURL(ctx context.Context, d store.DueDelivery) (string, []string, error) {
	raw := d.URL
	var hidden []string
	if names := check.VarRefs(raw); len(names) > 0 {
		vars, err := n.st.ResolveVars(ctx, d.OrgID, nil, names)
		if err != nil {
			return "", nil, fmt.Errorf("resolve URL variables: %w", err)
		}
		for _, name := range names {
			v, ok := vars[name]
			if !ok {
				return "", nil, fmt.Errorf("the URL references {{%s}}, which is not defined", name)
			}
			if v.Secret && v.Value != "" {
				hidden = append(hidden, v.Value)
			}
		}
		raw = check.ReplaceVarRefs(raw, func(name string) (string, bool) { v, ok := vars[name]; return v.Value, ok })
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, errors.New("the webhook URL is not an absolute http(s) URL once its variables are substituted")
	}
	return raw, hidden, nil
}

// redactSecrets replaces secret values in error texts and answers with redact.Marker, in every
// encoding a receiver may echo them; one under redact.MinSubstring characters only as a whole
// token, so that a two-character Pushover token does not garble "private". The agent hides job
// secrets in results by the same rule (pkg/redact).
func redactSecrets(s string, secrets []string) string {
	return redact.New(secrets).String(s)
}
