package main

import (
	"context"
	"errors"
	"time"

	"github.com/outboxcheck/outboxcheck/internal/pgprov"
)

// startCluster finds or starts PostgreSQL (DESIGN §9). A malformed URL is
// the user's error; anything else is the infrastructure's.
func startCluster(ctx context.Context, url string) (*pgprov.Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	c, err := pgprov.Start(ctx, pgprov.Options{DatabaseURL: url})
	switch {
	case errors.Is(err, pgprov.ErrBadURL):
		return nil, &codedError{code: exitUsage, err: err}
	case err != nil:
		return nil, infraError(err)
	}
	return c, nil
}
