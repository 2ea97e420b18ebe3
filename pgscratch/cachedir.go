package pgscratch

import (
	"os"
	"path/filepath"
)

// EnvCacheDir overrides the tool's cache directory: prepared template
// data directories and the owner key.
const EnvCacheDir = "OUTBOXCHECK_CACHE_DIR"

// cacheDir is the tool's per-user cache directory: $OUTBOXCHECK_CACHE_DIR,
// else outboxcheck under os.UserCacheDir ($XDG_CACHE_HOME or ~/.cache). It
// fails when neither is set.
func cacheDir() (string, error) {
	if d := os.Getenv(EnvCacheDir); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "outboxcheck"), nil
}
