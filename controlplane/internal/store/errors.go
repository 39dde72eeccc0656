package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Sentinel errors. The API maps each to one HTTP status in exactly one place.
var (
	// ErrNotFound: no such row in the caller's organization.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the change collides with existing state (unique names, rows in use).
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: the database could not be reached or timed out.
	ErrUnavailable = errors.New("storage unavailable")
)

// ConflictError is an ErrConflict with a machine-readable type, e.g.
// "environment_variable_name_conflict", and an HTTP-facing code (the status, or 10010 for the
// project conflicts the contract pins).
type ConflictError struct {
	Type    string
	Code    int
	Message string
}

func (e *ConflictError) Error() string { return e.Message }

// Is makes errors.Is(err, ErrConflict) true for every ConflictError.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// ValidationError is an input that only the database can judge (for example a reference to a
// variable that does not exist in the check's scope). The API renders it as a 400.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// translate turns driver errors into this package's sentinels, once, for every query.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var ce *ConflictError
	var ve *ValidationError
	if errors.As(err, &ce) || errors.As(err, &ve) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			if pgErr.ConstraintName == "invitations_pending_email" {
				return ErrAlreadyInvited // a concurrent invitation of the same address won
			}
			return fmt.Errorf("%w: %s", ErrConflict, pgErr.ConstraintName)
		case "23503": // foreign_key_violation
			return fmt.Errorf("%w: %s", ErrConflict, pgErr.ConstraintName)
		case "22P02": // invalid_text_representation, e.g. a malformed uuid
			return ErrNotFound
		case "22021", "22P05": // character_not_in_repertoire, untranslatable_character: NUL in text
			return &ValidationError{Field: "input", Message: "text must not contain NUL characters"}
		case "57014", "57P01", "57P02", "57P03", "53300": // canceled, shutdown, too many connections
			return fmt.Errorf("%w: %s", ErrUnavailable, pgErr.Message)
		}
		return fmt.Errorf("database: %w", err)
	}
	if errors.Is(err, context.DeadlineExceeded) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}
