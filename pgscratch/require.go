package pgscratch

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrSettings marks server settings a run asked for that cannot be had:
// one that is not name=value, or a server given by URL that runs with
// another value (the harness cannot restart a server it does not own).
// A configuration error: no retry cures it.
var ErrSettings = errors.New("server settings")

var settingName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?$`)

// splitSetting parses "name=value".
func splitSetting(kv string) (name, value string, err error) {
	name, value, ok := strings.Cut(kv, "=")
	name = strings.ToLower(strings.TrimSpace(name))
	if !ok || !settingName.MatchString(name) || strings.TrimSpace(value) == "" {
		return "", "", fmt.Errorf("%w: %q is not name=value (e.g. wal_level=logical)", ErrSettings, kv)
	}
	return name, strings.TrimSpace(value), nil
}

// settingArgs are the server's command-line flags for settings.
func settingArgs(settings []string) ([]string, error) {
	var args []string
	for _, kv := range settings {
		name, value, err := splitSetting(kv)
		if err != nil {
			return nil, err
		}
		args = append(args, "-c", name+"="+value)
	}
	return args, nil
}

// checkSettings fails with ErrSettings, naming each, unless the server
// runs with every one of settings (as SHOW prints it, case aside).
func (c *Server) checkSettings(ctx context.Context, settings []string) error {
	if len(settings) == 0 {
		return nil
	}
	ctx, cancel := withDefaultDeadline(ctx)
	defer cancel()
	conn, err := connect(ctx, c.adminURL)
	if err != nil {
		return fmt.Errorf("server settings: %w", err)
	}
	defer closeConn(conn)
	var wrong []string
	for _, kv := range settings {
		name, want, err := splitSetting(kv)
		if err != nil {
			return err
		}
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1, true)", name).Scan(&got); err != nil {
			return fmt.Errorf("server settings: %s: %w", name, err)
		}
		if !strings.EqualFold(got, want) {
			wrong = append(wrong, fmt.Sprintf("%s=%s (it runs with %q)", name, want, got))
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("%w: the server at the URL must run with %s: restart it with those settings (postgres -c, or postgresql.conf), or leave the URL unset so that the harness starts its own server with them",
			ErrSettings, strings.Join(wrong, ", "))
	}
	return nil
}

// refusedSetting says whether a server's last log lines say it would not
// start on a setting's name or value: the run's configuration, not the
// machine's trouble.
func refusedSetting(log string) bool {
	for _, why := range []string{"invalid value for parameter", "unrecognized configuration parameter", "parameter cannot be changed"} {
		if strings.Contains(log, why) {
			return true
		}
	}
	return false
}
