package pgscratch

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
)

// A server that refuses the URL's password or database, or its role's
// CREATE DATABASE, is a *Refusal with the server's message first (not
// pgx's TLS attempt); a keyword=value string is ErrBadURL; a closed port
// is neither.
func TestRefusals(t *testing.T) {
	if _, err := findBinaries(); err != nil {
		t.Skip("no local PostgreSQL binaries")
	}
	ctx := context.Background()
	c, err := Start(ctx, Options{NoDocker: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	admin, err := connect(ctx, c.adminURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"CREATE ROLE nocreate LOGIN PASSWORD 'pw'", "CREATE DATABASE closed", "REVOKE CONNECT ON DATABASE closed FROM PUBLIC"} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	closeConn(admin)

	for _, tc := range []struct {
		name, url, code, says string
	}{
		{"wrong password", withLogin(t, c.adminURL, "postgres", "wrong", "postgres"), "28P01", `password authentication failed for user "postgres" (SQLSTATE 28P01), connecting to postgres@127.0.0.1:`},
		{"no such database", withLogin(t, c.adminURL, "", "", "no_such_db"), "3D000", `database "no_such_db" does not exist (SQLSTATE 3D000), connecting to`},
		{"no CONNECT", withLogin(t, c.adminURL, "nocreate", "pw", "closed"), "42501", `permission denied for database "closed": User does not have CONNECT privilege (SQLSTATE 42501), connecting to nocreate@`},
	} {
		_, err := Start(ctx, Options{DatabaseURL: tc.url})
		var r *Refusal
		if !errors.As(err, &r) || r.Server.Code != tc.code || !strings.HasPrefix(err.Error(), tc.says) {
			t.Errorf("%s: %v; want a Refusal %s starting %q", tc.name, err, tc.code, tc.says)
		}
	}

	nocreate, err := Start(ctx, Options{DatabaseURL: withLogin(t, c.adminURL, "nocreate", "pw", "postgres")})
	if err != nil {
		t.Fatal(err)
	}
	defer nocreate.Close()
	_, err = nocreate.NewDatabase(ctx)
	var r *Refusal
	if !errors.As(err, &r) || r.Server.Code != "42501" || !strings.HasPrefix(err.Error(), "permission denied to create database (SQLSTATE 42501), creating database outboxcheck_") {
		t.Errorf("NewDatabase without CREATEDB: %v; want a Refusal 42501", err)
	}

	if _, err := Start(ctx, Options{DatabaseURL: "host=127.0.0.1 dbname=postgres"}); !errors.Is(err, ErrBadURL) {
		t.Errorf("keyword=value string: %v; want ErrBadURL", err)
	}
	if _, err := Start(ctx, Options{DatabaseURL: "postgres://u:p@127.0.0.1:1/postgres?connect_timeout=2"}); err == nil || errors.As(err, &r) {
		t.Errorf("closed port: %v; want an error that is no Refusal", err)
	}
}

// withLogin is base with user and password (if user is not ""), database
// db, and without sslmode, so pgx tries TLS first, as a user's URL does.
func withLogin(t *testing.T, base, user, password, db string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		u.User = url.UserPassword(user, password)
	}
	u.Path, u.RawQuery = "/"+db, ""
	return u.String()
}
