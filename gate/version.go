package gate

import (
	"runtime/debug"
	"strings"
)

// Version is outboxcheck's own provenance, from the build info the Go
// toolchain embeds: the module version, the VCS revision and whether the
// tree was modified, e.g. "v0.0.0-… 1a2b3c4d5e6f (modified)". It never
// consults the working directory, which is the user's repository.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build info)"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	parts := []string{bi.Main.Version}
	if bi.Main.Version == "" {
		parts[0] = "(unversioned)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		parts = append(parts, rev[:min(len(rev), 12)])
	}
	if modified == "true" {
		parts = append(parts, "(modified)")
	}
	return strings.Join(parts, " ")
}
