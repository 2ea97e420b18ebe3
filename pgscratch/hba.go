package pgscratch

import (
	"os"
	"path/filepath"
)

// hba is the owned cluster's pg_hba.conf: trust on the private Unix socket
// (only root and the server user may enter its directory), the per-run
// password on loopback TCP, checked by md5 rather than scram-sha-256. A
// SCRAM handshake runs PBKDF2's 4,096 rounds on both ends, about 2.5 ms of
// a 6.5 ms connect on these machines, and a check reconnects every actor
// a crash or a partition cut; the password only keeps other local users
// out of a throwaway cluster that listens on 127.0.0.1 alone.
const hba = `local all all trust
host all all 127.0.0.1/32 md5
`

// writeHBA writes hba into the data directory, whatever the template's was.
func (s *localServer) writeHBA() error {
	p := filepath.Join(s.dataDir(), "pg_hba.conf")
	if err := os.WriteFile(p, []byte(hba), 0o600); err != nil {
		return err
	}
	return s.as.chown(p)
}
