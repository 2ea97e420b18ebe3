// Package chromium opens a page in headless Chromium for tests: the
// reports are checked in a real browser, never by string matching alone.
package chromium

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Render opens page (a file path) in headless Chromium and returns the DOM
// after load and every console message (errors included) Chromium logged.
// It skips tb when Chromium is not installed.
func Render(tb testing.TB, page string) (dom string, console []string) {
	tb.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		tb.Skip("chromium not installed (Debian: apt-get install chromium); .ci/run installs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+tb.TempDir(), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	return string(out), console
}
