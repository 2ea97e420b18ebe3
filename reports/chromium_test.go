package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/internal/chromium"
)

func render(t *testing.T, page string) (dom string, console []string) {
	t.Helper()
	return chromium.Render(t, page)
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
