// Package chromium opens a page in headless Chromium for tests: the
// reports are checked in a real browser, never by string matching alone.
package chromium

import (
	"context"
	"errors"
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
// A browser that dies by a signal (a crash of Chromium itself, seen on a
// CI runner as a segmentation fault, never here) is started again, up to
// three times with a fresh profile: the browser is the test's plumbing,
// not what it checks. A non-zero exit or a third crash fails tb.
func run(tb testing.TB, args ...string) (stdout, stderr string) {
	tb.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		tb.Skip("chromium not installed (Debian: apt-get install chromium); .ci/run installs it")
	}
	out, errs, err := attempts(bin, tb.TempDir, args)
	if err != nil {
		tb.Fatalf("chromium: %v\n%s", err, errs)
	}
	for _, c := range strings.SplitAfter(errs, "\n") {
		if strings.HasPrefix(c, "outboxcheck: chromium died") {
			tb.Log(strings.TrimSpace(c))
		}
	}
	return out, errs
}

// attempts starts Chromium until it does not die by a signal, at most
// three times, each with a fresh profile from dir.
func attempts(bin string, dir func() string, args []string) (stdout, stderr string, err error) {
	var crashes string
	for attempt := 1; ; attempt++ {
		out, errs, err := start(bin, dir(), args)
		if err == nil {
			return out, crashes + errs, nil
		}
		var exit *exec.ExitError
		crashed := errors.As(err, &exit) && exit.ProcessState != nil && !exit.Exited()
		if !crashed || attempt == 3 {
			return out, crashes + errs, fmt.Errorf("%w (attempt %d)", err, attempt)
		}
		crashes += fmt.Sprintf("outboxcheck: chromium died (%v) at attempt %d; starting it again\n", err, attempt)
	}
}

// start runs Chromium once, with a profile of its own, at a deadline.
func start(bin, profile string, args []string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0"}, args...)...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	return string(out), errb.String(), err
}
