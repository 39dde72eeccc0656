package main

// PLACEHOLDER owned by the tokens/admin work.

import (
	"context"
	"errors"
	"io"
)

func admin(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return errors.New("admin: not implemented yet")
}
