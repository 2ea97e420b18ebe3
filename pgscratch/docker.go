package pgscratch

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// dockerProbeTimeout bounds the cheap dial that decides whether Docker is
// there before testcontainers-go is asked (FIELD-NOTES: its own failure
// sentinel is internal).
const dockerProbeTimeout = 300 * time.Millisecond

func dockerReachable() bool {
	network, addr := "unix", "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		switch {
		case strings.HasPrefix(h, "unix://"):
			addr = strings.TrimPrefix(h, "unix://")
		case strings.HasPrefix(h, "tcp://"):
			network, addr = "tcp", strings.TrimPrefix(h, "tcp://")
		default:
			return false
		}
	}
	c, err := net.DialTimeout(network, addr, dockerProbeTimeout)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func startDocker(ctx context.Context, image string, extra []string) (*Server, error) {
	password := randomHex(16)
	ctr, err := tcpostgres.Run(ctx, image,
		tcpostgres.WithUsername("postgres"),
		tcpostgres.WithPassword(password),
		tcpostgres.WithDatabase("postgres"),
		tcpostgres.BasicWaitStrategies(),
		testcontainers.WithCmdArgs(append(fastSettings(), extra...)...),
	)
	if err != nil {
		if ctr != nil {
			_ = testcontainers.TerminateContainer(ctr)
		}
		return nil, fmt.Errorf("postgres in docker (%s): %w", image, err)
	}
	url, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = testcontainers.TerminateContainer(ctr)
		return nil, fmt.Errorf("postgres in docker (%s): %w", image, err)
	}
	return &Server{
		Source:   SourceDocker,
		adminURL: url,
		closeFn:  func() error { return testcontainers.TerminateContainer(ctr) },
	}, nil
}

// fastSettings are server flags for a throwaway cluster: no fsync (a
// process crash still keeps every commit: the WAL reaches the kernel before
// COMMIT returns, because synchronous_commit stays on), room for many
// connections, and 16 MB of shared buffers, which hold a check's few rows
// many times over and take 7 ms less than the default 128 MB to set up at
// each restart after a database crash (huge pages off: no failed attempt
// at them first). No server-wide session timeouts: they would hide a
// subject's own stuck sessions and kill a legitimately long transaction,
// and a team's CI server has none; the harness ends a cut actor's sessions
// itself (TerminateSessions).
func fastSettings() []string {
	var args []string
	for _, kv := range []string{
		"fsync=off", "full_page_writes=off",
		"max_connections=200",
		"shared_buffers=16MB", "huge_pages=off",
	} {
		args = append(args, "-c", kv)
	}
	return args
}
