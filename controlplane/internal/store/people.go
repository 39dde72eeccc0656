package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// People: the members of an organization and the invitations to it (api/openapi/people.yaml).

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
	total, err := s.q.CountMembers(ctx, dbsqlc.CountMembersParams{OrgID: orgID, Search: search})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListMembers(ctx, dbsqlc.ListMembersParams{OrgID: orgID, Search: search, MaxRows: limit, SkipRows: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	list := make([]Member, len(rows))
	for i, r := range rows {
		list[i] = Member{User: User{ID: r.ID, Email: r.Email, FirstName: r.FirstName, LastName: r.LastName, Image: r.Image,
			CreatedAt: r.CreatedAt}, Role: r.Role}
	}
	return list, total, nil
}

// RemoveMember takes a user out of an organization (the user and their other memberships
// stay), and audits it. ErrNotFound when the user is not a member. Every replica's
// authenticator hears of it at commit (AuthChannel), so the user's access tokens stop
// reaching the organization at once.
func (s *Store) RemoveMember(ctx context.Context, actor Actor, orgID, userID uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		email, err := q.RemoveMember(ctx, dbsqlc.RemoveMemberParams{OrgID: orgID, UserID: userID})
		if err != nil {
			return err
		}
		if err := notifyAuthChange(ctx, q, AuthChangeUser, userID); err != nil {
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
	total, err := s.q.CountPendingInvitations(ctx, dbsqlc.CountPendingInvitationsParams{OrgID: orgID, Search: search})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListPendingInvitations(ctx, dbsqlc.ListPendingInvitationsParams{OrgID: orgID, Search: search,
		MaxRows: limit, SkipRows: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	list := make([]Invitation, len(rows))
	for i, r := range rows {
		list[i] = Invitation(r)
	}
	return list, total, nil
}

// CreateInvitation invites an address into an organization with a role: it checks that the
// address is neither a member's (ErrAlreadyMember) nor invited already (ErrAlreadyInvited),
// that the plan has a free seat (ErrSeatLimit: seatLimit, given the organization's plan, says
// how many seats members and pending invitations may fill; nil or limited false: no limit), stores
// the invitation with a fresh accept token, queues invitation.created (its e-mail) and audits
// it, all in one transaction. The organization row is locked, so concurrent invitations cannot
// both take the last seat.
func (s *Store) CreateInvitation(ctx context.Context, actor Actor, orgID uuid.UUID, email, role string,
	seatLimit func(plan string) (limit int, limited bool)) (Invitation, error) {
	var inv Invitation
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		org, err := q.LockOrganization(ctx, orgID)
		if err != nil {
			return err
		}
		st, err := q.InvitationStanding(ctx, dbsqlc.InvitationStandingParams{OrgID: orgID, Email: email})
		if err != nil {
			return err
		}
		switch {
		case st.Member:
			return ErrAlreadyMember
		case st.Invited:
			return ErrAlreadyInvited
		}
		if seatLimit != nil {
			if limit, ok := seatLimit(org.Plan); ok && st.Seats >= int64(limit) {
				return ErrSeatLimit
			}
		}
		tok, err := s.newLinkToken()
		if err != nil {
			return err
		}
		now := s.now()
		row, err := q.CreateInvitation(ctx, dbsqlc.CreateInvitationParams{ID: uuid.Must(uuid.NewV7()), OrgID: orgID,
			Email: email, Role: role, TokenHash: tok.Hash, TokenEnc: tok.Sealed, InvitedBy: nullIfEmpty(actor.DisplayName), CreatedAt: now})
		if err != nil {
			return err // translate: a concurrent invitation of the address is ErrAlreadyInvited
		}
		inv = Invitation(row)
		if err := insertOutbox(ctx, tx, []OutboxEvent{{OrgID: orgID, CreatedAt: now, Event: event.InvitationCreated{
			OccurredAt: now, InvitationID: inv.ID, Email: email, Role: role, OrgID: orgID, OrgName: org.Name,
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
	r, err := s.q.InvitationMail(ctx, dbsqlc.InvitationMailParams{OrgID: orgID, ID: invitationID})
	if err != nil {
		return InvitationMail{}, translate(err)
	}
	m := InvitationMail{Email: r.Email, Role: r.Role, OrgName: r.OrgName}
	if r.InvitedBy != nil {
		m.InvitedBy = *r.InvitedBy
	}
	tok, err := s.sealer.Open(r.TokenEnc)
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
	r, err := s.q.PendingInvitationByToken(ctx, hashLinkToken(token))
	if errors.Is(err, pgx.ErrNoRows) {
		return PendingInvitation{}, ErrLinkInvalid
	}
	return PendingInvitation(r), translate(err)
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
		q := s.q.WithTx(tx)
		now := s.now()
		inv, err := q.AcceptInvitation(ctx, dbsqlc.AcceptInvitationParams{TokenHash: hashLinkToken(token), AcceptedAt: now})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrLinkInvalid
		}
		if err != nil {
			return err
		}
		a = AcceptedInvitation{OrgID: inv.OrgID, OrgName: inv.OrgName, Email: inv.Email, Role: inv.Role}
		a.UserID, err = q.UserByEmail(ctx, a.Email)
		if errors.Is(err, pgx.ErrNoRows) {
			a.UserID = uuid.Must(uuid.NewV7())
			err = q.CreateUser(ctx, dbsqlc.CreateUserParams{ID: a.UserID, Email: a.Email, CreatedAt: now})
		}
		if err != nil {
			return err
		}
		if err := q.AddMembershipIfMissing(ctx, dbsqlc.AddMembershipIfMissingParams{OrgID: a.OrgID, UserID: a.UserID,
			Role: a.Role, CreatedAt: now}); err != nil {
			return err
		}
		return writeAudit(ctx, tx, a.OrgID, Actor{Type: "System", DisplayName: "Invitation link"}, AuditEvent{Action: "accepted",
			AuditableType: "Invitation", AuditableID: inv.ID.String(), AuditableDisplayName: a.Email,
			Metadata: map[string]any{"user_id": a.UserID.String(), "role": a.Role}})
	})
	return a, err
}
