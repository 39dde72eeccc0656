package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vantagehq/vantage/controlplane/internal/event"
)

// People: the members of an organization and the invitations to it (supplement §2.5).

// SeatLimits is the number of seats (members plus pending invitations) per plan; a plan not
// listed has no limit. Free: 5 seats; paid: unlimited.
var SeatLimits = map[string]int{"free": 5}

// People errors; the API renders each as its own 400 or 403.
var (
	// ErrSeatLimit: inviting one more person would exceed the plan's seats.
	ErrSeatLimit = errors.New("the plan's seat limit is reached")
	// ErrAlreadyMember: the invited address belongs to a member already.
	ErrAlreadyMember = errors.New("this address belongs to a member of the organization already")
	// ErrAlreadyInvited: a pending invitation to the address exists.
	ErrAlreadyInvited = errors.New("this address has a pending invitation already")
)

// Member is a user of an organization with the role they have there.
type Member struct {
	User
	Role string // ADMIN or STANDARD
}

// ListMembers returns one page of an organization's members, oldest membership first; search
// matches the e-mail address, first or last name.
func (s *Store) ListMembers(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]Member, int64, error) {
	where := `m.org_id = $1 AND ($2 = '' OR strpos(lower(u.email), lower($2)) > 0
		OR strpos(lower(coalesce(u.first_name, '')), lower($2)) > 0 OR strpos(lower(coalesce(u.last_name, '')), lower($2)) > 0)`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM memberships m JOIN users u ON u.id = m.user_id WHERE `+where,
		orgID, search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT u.id, u.email, u.first_name, u.last_name, u.image, u.created_at, m.role
		FROM memberships m JOIN users u ON u.id = m.user_id WHERE `+where+`
		ORDER BY m.created_at, u.id LIMIT $3 OFFSET $4`, orgID, search, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Member, error) {
		var m Member
		err := r.Scan(&m.ID, &m.Email, &m.FirstName, &m.LastName, &m.Image, &m.CreatedAt, &m.Role)
		return m, err
	})
	return list, total, translate(err)
}

// RemoveMember takes a user out of an organization (the user and their other memberships
// stay), and audits it. ErrNotFound when the user is not a member.
func (s *Store) RemoveMember(ctx context.Context, actor Actor, orgID, userID uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var email string
		if err := tx.QueryRow(ctx, `DELETE FROM memberships m USING users u WHERE u.id = m.user_id AND m.org_id = $1 AND m.user_id = $2
			RETURNING u.email`, orgID, userID).Scan(&email); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "removed", AuditableType: "User",
			AuditableID: userID.String(), AuditableDisplayName: email})
	})
}

// Invitation is a pending (or accepted) invitation to an organization.
type Invitation struct {
	ID        uuid.UUID
	Email     string
	Role      string
	CreatedAt time.Time
}

// ListInvitations returns one page of an organization's pending invitations, newest first;
// search matches the e-mail address.
func (s *Store) ListInvitations(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]Invitation, int64, error) {
	where := `org_id = $1 AND accepted_at IS NULL AND ($2 = '' OR strpos(lower(email), lower($2)) > 0)`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM invitations WHERE `+where, orgID, search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT id, email, role, created_at FROM invitations WHERE `+where+`
		ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, orgID, search, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Invitation])
	return list, total, translate(err)
}

// CreateInvitation invites an address into an organization with a role: it checks that the
// address is neither a member's (ErrAlreadyMember) nor invited already (ErrAlreadyInvited),
// that the plan has a free seat (ErrSeatLimit; members and pending invitations count), stores
// the invitation with a fresh accept token, queues invitation.created (its e-mail) and audits
// it, all in one transaction. The organization row is locked, so concurrent invitations cannot
// both take the last seat.
func (s *Store) CreateInvitation(ctx context.Context, actor Actor, orgID uuid.UUID, email, role string) (Invitation, error) {
	inv := Invitation{ID: uuid.Must(uuid.NewV7()), Email: email, Role: role}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var plan, orgName string
		if err := tx.QueryRow(ctx, `SELECT plan, name FROM organizations WHERE id = $1 FOR UPDATE`, orgID).Scan(&plan, &orgName); err != nil {
			return err
		}
		var member, invited bool
		var seats int
		if err := tx.QueryRow(ctx, `SELECT
				EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 AND lower(u.email) = lower($2)),
				EXISTS (SELECT 1 FROM invitations WHERE org_id = $1 AND accepted_at IS NULL AND lower(email) = lower($2)),
				(SELECT count(*) FROM memberships WHERE org_id = $1) + (SELECT count(*) FROM invitations WHERE org_id = $1 AND accepted_at IS NULL)`,
			orgID, email).Scan(&member, &invited, &seats); err != nil {
			return err
		}
		switch {
		case member:
			return ErrAlreadyMember
		case invited:
			return ErrAlreadyInvited
		}
		if limit, ok := SeatLimits[plan]; ok && seats >= limit {
			return ErrSeatLimit
		}
		tok, err := s.newLinkToken()
		if err != nil {
			return err
		}
		now := s.now()
		err = tx.QueryRow(ctx, `INSERT INTO invitations (id, org_id, email, role, token_hash, token_enc, invited_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING created_at`,
			inv.ID, orgID, email, role, tok.Hash, tok.Sealed, nullIfEmpty(actor.DisplayName), now).Scan(&inv.CreatedAt)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "invitations_pending_email" {
			return ErrAlreadyInvited
		}
		if err != nil {
			return err
		}
		if err := insertOutbox(ctx, tx, []OutboxEvent{{OrgID: orgID, CreatedAt: now, Event: event.InvitationCreated{
			OccurredAt: now, InvitationID: inv.ID, Email: email, Role: role, OrgID: orgID, OrgName: orgName,
			InvitedBy: actor.DisplayName}}}); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "Invitation",
			AuditableID: inv.ID.String(), AuditableDisplayName: email, Metadata: map[string]any{"role": role}})
	})
	return inv, err
}

// InvitationMail is what the notifier needs to render an invitation's e-mail.
type InvitationMail struct {
	Email     string
	Role      string
	OrgName   string
	InvitedBy string
	Token     string
}

// InvitationMail opens the accept token of a pending invitation for its e-mail; ErrNotFound
// when the invitation is gone or accepted.
func (s *Store) InvitationMail(ctx context.Context, orgID, invitationID uuid.UUID) (InvitationMail, error) {
	var m InvitationMail
	var sealed []byte
	var by *string
	err := s.pool.QueryRow(ctx, `SELECT i.email, i.role, o.name, i.invited_by, i.token_enc FROM invitations i
		JOIN organizations o ON o.id = i.org_id WHERE i.org_id = $1 AND i.id = $2 AND i.accepted_at IS NULL`, orgID, invitationID).
		Scan(&m.Email, &m.Role, &m.OrgName, &by, &sealed)
	if err != nil {
		return m, translate(err)
	}
	if by != nil {
		m.InvitedBy = *by
	}
	tok, err := s.sealer.Open(sealed)
	if err != nil {
		return m, fmt.Errorf("open token of invitation %s: %w", invitationID, err)
	}
	m.Token = string(tok)
	return m, nil
}

// PendingInvitation is a pending invitation as its accept link shows it before it is accepted.
type PendingInvitation struct {
	OrgName string
	Email   string
	Role    string
}

// InvitationByToken reads the pending invitation an accept token belongs to, without spending
// the token (the accept page shows it and asks first). ErrLinkInvalid when no pending
// invitation has this token.
func (s *Store) InvitationByToken(ctx context.Context, token string) (PendingInvitation, error) {
	var p PendingInvitation
	err := s.pool.QueryRow(ctx, `SELECT o.name, i.email, i.role FROM invitations i JOIN organizations o ON o.id = i.org_id
		WHERE i.token_hash = $1 AND i.accepted_at IS NULL`, hashLinkToken(token)).Scan(&p.OrgName, &p.Email, &p.Role)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, ErrLinkInvalid
	}
	return p, translate(err)
}

// AcceptedInvitation is the result of AcceptInvitation.
type AcceptedInvitation struct {
	OrgID   uuid.UUID
	OrgName string
	UserID  uuid.UUID
	Email   string
	Role    string
}

// AcceptInvitation spends a pending invitation's accept token: the user with the invited
// address is created when missing and becomes a member with the invited role, and the
// invitation is marked accepted, in one transaction (audited as the system's).
// ErrLinkInvalid when no pending invitation has this token.
func (s *Store) AcceptInvitation(ctx context.Context, token string) (AcceptedInvitation, error) {
	var a AcceptedInvitation
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		now := s.now()
		var id uuid.UUID
		err := tx.QueryRow(ctx, `UPDATE invitations i SET accepted_at = $2 FROM organizations o
			WHERE o.id = i.org_id AND i.token_hash = $1 AND i.accepted_at IS NULL
			RETURNING i.id, i.org_id, o.name, i.email, i.role`, hashLinkToken(token), now).Scan(&id, &a.OrgID, &a.OrgName, &a.Email, &a.Role)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrLinkInvalid
		}
		if err != nil {
			return err
		}
		// An existing user is matched case-insensitively, so Bob@x and bob@x are one person.
		err = tx.QueryRow(ctx, `SELECT id FROM users WHERE lower(email) = lower($1) ORDER BY created_at LIMIT 1`, a.Email).Scan(&a.UserID)
		if errors.Is(err, pgx.ErrNoRows) {
			a.UserID = uuid.Must(uuid.NewV7())
			_, err = tx.Exec(ctx, `INSERT INTO users (id, email, created_at) VALUES ($1, $2, $3)`, a.UserID, a.Email, now)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (org_id, user_id) DO NOTHING`, a.OrgID, a.UserID, a.Role, now); err != nil {
			return err
		}
		return writeAudit(ctx, tx, a.OrgID, Actor{Type: "System", DisplayName: "Invitation link"}, AuditEvent{Action: "accepted",
			AuditableType: "Invitation", AuditableID: id.String(), AuditableDisplayName: a.Email,
			Metadata: map[string]any{"user_id": a.UserID.String(), "role": a.Role}})
	})
	return a, err
}
