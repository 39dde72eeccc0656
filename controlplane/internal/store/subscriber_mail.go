package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// The link tokens of the e-mail flows (subscriber confirmation and unsubscribe, invitation
// acceptance), and what their links read and change.
//
// A link token is 32 random bytes, base64url without padding (43 characters). The database
// keeps its SHA-256 (of the token string), which a clicked link is looked up by, and the token
// sealed with the store's Sealer, which the notifier opens when it renders the e-mail
// (SubscriberMail, InvitationMail). Neither the outbox payload nor the rendered body holds a
// token, and an e-mail whose recipient is gone by the time it is sent (unsubscribed, confirmed
// already, invitation accepted) is not sent.

// linkToken is a fresh link token, its lookup hash and its sealed form.
type linkToken struct {
	Token  string
	Hash   []byte
	Sealed []byte
}

func (s *Store) newLinkToken() (linkToken, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return linkToken{}, err
	}
	t := linkToken{Token: base64.RawURLEncoding.EncodeToString(b)}
	t.Hash = hashLinkToken(t.Token)
	sealed, err := s.sealer.Seal([]byte(t.Token))
	if err != nil {
		return t, fmt.Errorf("seal link token: %w", err)
	}
	t.Sealed = sealed
	return t, nil
}

// hashLinkToken is the lookup key of a link token.
func hashLinkToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// SubscriberMail is what the notifier needs to render one subscriber's e-mail.
type SubscriberMail struct {
	Email            string
	Confirmed        bool
	ConfirmToken     string // "" once confirmed
	UnsubscribeToken string
	PageName         string
	PageSubdomain    string
}

// SubscriberMail opens the link tokens of a subscriber for its e-mail; ErrNotFound when the
// subscriber is gone. A subscriber without an unsubscribe token (created before tokens were
// kept) gets one now.
func (s *Store) SubscriberMail(ctx context.Context, orgID, subscriberID uuid.UUID) (SubscriberMail, error) {
	var m SubscriberMail
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		r, err := q.LockSubscriberMail(ctx, dbsqlc.LockSubscriberMailParams{OrgID: orgID, ID: subscriberID})
		if err != nil {
			return err
		}
		m = SubscriberMail{Email: r.EmailAddress, Confirmed: r.Confirmed, PageName: r.Name, PageSubdomain: r.Subdomain}
		if !m.Confirmed && r.ConfirmationTokenEnc != nil {
			tok, err := s.sealer.Open(r.ConfirmationTokenEnc)
			if err != nil {
				return fmt.Errorf("open confirmation token of subscriber %s: %w", subscriberID, err)
			}
			m.ConfirmToken = string(tok)
		}
		if r.UnsubscribeTokenEnc != nil {
			tok, err := s.sealer.Open(r.UnsubscribeTokenEnc)
			if err != nil {
				return fmt.Errorf("open unsubscribe token of subscriber %s: %w", subscriberID, err)
			}
			m.UnsubscribeToken = string(tok)
			return nil
		}
		t, err := s.newLinkToken()
		if err != nil {
			return err
		}
		m.UnsubscribeToken = t.Token
		return q.SetUnsubscribeToken(ctx, dbsqlc.SetUnsubscribeTokenParams{OrgID: orgID, ID: subscriberID,
			TokenHash: t.Hash, TokenEnc: t.Sealed})
	})
	return m, err
}

// Subscription is a subscriber as its public confirm and unsubscribe pages show it.
type Subscription struct {
	Email     string
	PageName  string
	Subdomain string
}

// subscriberLinkActor is who the audit log names for changes made through e-mailed links.
var subscriberLinkActor = Actor{Type: "System", DisplayName: "Subscriber e-mail link"}

// ErrLinkInvalid is a confirm or unsubscribe link whose token matches nothing on its page
// (already used, unsubscribed, or made up).
var ErrLinkInvalid = errors.New("the link is invalid or has already been used")

// linkInvalid turns "no such row" into ErrLinkInvalid.
func linkInvalid(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrLinkInvalid
	}
	return err
}

// ConfirmSubscriber confirms the subscriber whose confirmation token this is, on the page served
// at subdomain; the token is spent. ErrLinkInvalid when nothing matches.
func (s *Store) ConfirmSubscriber(ctx context.Context, subdomain, token string) (Subscription, error) {
	var sub Subscription
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		r, err := s.q.WithTx(tx).ConfirmSubscriber(ctx, dbsqlc.ConfirmSubscriberParams{Subdomain: subdomain, TokenHash: hashLinkToken(token)})
		if err != nil {
			return linkInvalid(err)
		}
		sub = Subscription{Email: r.EmailAddress, PageName: r.Name, Subdomain: r.Subdomain}
		return writeAudit(ctx, tx, r.OrgID, subscriberLinkActor,
			AuditEvent{Action: "confirmed", AuditableType: "StatusPageSubscriber", AuditableID: r.ID.String(), AuditableDisplayName: sub.Email})
	})
	return sub, err
}

// SubscriptionByUnsubscribeToken names the subscription an unsubscribe link is for, without
// changing anything. ErrLinkInvalid when nothing matches.
func (s *Store) SubscriptionByUnsubscribeToken(ctx context.Context, subdomain, token string) (Subscription, error) {
	r, err := s.q.SubscriptionByUnsubscribeToken(ctx, dbsqlc.SubscriptionByUnsubscribeTokenParams{
		Subdomain: subdomain, TokenHash: hashLinkToken(token)})
	if err != nil {
		return Subscription{}, translate(linkInvalid(err))
	}
	return Subscription{Email: r.EmailAddress, PageName: r.Name, Subdomain: r.Subdomain}, nil
}

// Unsubscribe deletes the subscriber whose unsubscribe token this is, on the page served at
// subdomain, and audits it. ErrLinkInvalid when nothing matches (unsubscribed already).
func (s *Store) Unsubscribe(ctx context.Context, subdomain, token string) (Subscription, error) {
	var sub Subscription
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		r, err := q.SubscriptionByUnsubscribeToken(ctx, dbsqlc.SubscriptionByUnsubscribeTokenParams{
			Subdomain: subdomain, TokenHash: hashLinkToken(token)})
		if err != nil {
			return linkInvalid(err)
		}
		if _, err := q.RemoveSubscriber(ctx, dbsqlc.RemoveSubscriberParams{OrgID: r.OrgID, ID: r.ID}); err != nil {
			return err
		}
		sub = Subscription{Email: r.EmailAddress, PageName: r.Name, Subdomain: r.Subdomain}
		return writeAudit(ctx, tx, r.OrgID, subscriberLinkActor,
			AuditEvent{Action: "unsubscribed", AuditableType: "StatusPageSubscriber", AuditableID: r.ID.String(),
				AuditableDisplayName: sub.Email, Metadata: map[string]any{"status_page_id": r.StatusPageID.String()}})
	})
	return sub, err
}
