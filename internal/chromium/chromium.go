// Package chromium opens a page in headless Chromium for tests: the
// reports are checked in a real browser, never by string matching alone.
package chromium

import (
	"context"
	"fmt"
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
	out, stderr := run(tb, "--window-size=1280,800", "--dump-dom", "file://"+page)
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	return out, console
}

// Screenshot saves page (a file path) as a PNG at out, in a window of
// width × height pixels, as it looks once loaded (its scripts run).
// It skips tb when Chromium is not installed.
func Screenshot(tb testing.TB, page, out string, width, height int) {
	tb.Helper()
	run(tb, fmt.Sprintf("--window-size=%d,%d", width, height), "--hide-scrollbars=false", "--screenshot="+out, "file://"+page)
}

// run runs headless Chromium with args and returns its stdout and stderr.
func run(tb testing.TB, args ...string) (stdout, stderr string) {
	tb.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		tb.Skip("chromium not installed (Debian: apt-get install chromium); .ci/run installs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + tb.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return string(out), errb.String()
}
