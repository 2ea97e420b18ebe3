package reports

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// render opens page in headless Chromium and returns the DOM after load
// and every console message (errors included) Chromium logged.
func render(t *testing.T, page string) (dom string, console []string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (Debian: apt-get install chromium); .ci/run installs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	return string(out), console
}

// report.html renders in a real browser with no console errors, shows the
// timeline with one mark per step, and loads nothing from the network.
func TestReportRendersInChromium(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	src, _ := os.ReadFile(page)
	if m := regexp.MustCompile(`(src|href)=|@import|url\(`).Find(src); m != nil {
		t.Fatalf("report.html refers to something outside itself: %s", m)
	}
	dom, console := render(t, page)
	if len(console) > 0 {
		t.Fatalf("console messages:\n%s", strings.Join(console, "\n"))
	}
	if !strings.Contains(dom, `id="timeline"`) {
		t.Fatalf("no timeline in the rendered page:\n%s", dom)
	}
	if n := strings.Count(dom, "<circle"); n != len(r.Failure.Steps) {
		t.Fatalf("%d step marks, want %d", n, len(r.Failure.Steps))
	}
	if !strings.Contains(dom, `class="step failing"`) || !strings.Contains(dom, `class="fault"`) {
		t.Fatal("the failing step or the fault window is not drawn")
	}
	if !strings.Contains(dom, "e1 (claim k1) &lt;&amp;&gt;") {
		t.Fatal("step input not escaped as text")
	}
}

// The console check can fail: a page with an error is caught.
func TestChromiumConsoleCheckCatchesErrors(t *testing.T) {
	page := filepath.Join(t.TempDir(), "bad.html")
	os.WriteFile(page, []byte(`<html><body><script>undefinedFn()</script></body></html>`), 0o644)
	if _, console := render(t, page); len(console) == 0 {
		t.Fatal("a script error went unnoticed")
	}
}
