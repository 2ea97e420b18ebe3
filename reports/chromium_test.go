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

// written writes r's pages into a temporary directory and returns the
// path of report.html, after checking that it loads nothing from outside.
func written(t *testing.T, r *Report) string {
	t.Helper()
	dir := t.TempDir()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	src, _ := os.ReadFile(page)
	if m := regexp.MustCompile(`(src|href)=|@import|url\([^#]`).Find(src); m != nil {
		t.Fatalf("report.html refers to something outside itself: %s", m)
	}
	return page
}

// report.html renders in a real browser with no console errors: the
// pass page, a fault-free failure and a faulted one, each with one mark
// per step, the failing step marked, and its input escaped as text; a
// long run's page with its rate plot.
func TestReportRendersInChromium(t *testing.T) {
	for name, r := range map[string]*Report{"pass": passSample(), "fault-free": stillSample(), "faulted": sample(), "long": progressSample()} {
		dom, console := render(t, written(t, r))
		if len(console) > 0 {
			t.Fatalf("%s: console messages:\n%s", name, strings.Join(console, "\n"))
		}
		if r.Failure == nil {
			if strings.Contains(dom, `id="timeline"`) || !strings.Contains(dom, `id="verdict" class="pass"`) {
				t.Fatalf("pass page: a timeline, or no verdict")
			}
			continue
		}
		if n := strings.Count(dom, "data-step="); n != len(r.Failure.Steps) {
			t.Fatalf("%s: %d step marks, want %d", name, n, len(r.Failure.Steps))
		}
		if plot := strings.Contains(dom, `<svg id="rate"`); plot != (len(r.Progress) > 0) {
			t.Fatalf("%s: rate plot %v, progress %d checks", name, plot, len(r.Progress))
		}
		if !strings.Contains(dom, `id="failing-step"`) || !strings.Contains(dom, `id="failing-row"`) {
			t.Fatalf("%s: the failing step has no id", name)
		}
	}
	dom, _ := render(t, written(t, sample()))
	if !strings.Contains(dom, "e1 (claim k1) &lt;&amp;&gt;") {
		t.Fatal("step input not escaped as text")
	}
}

// The failing step of a long faulted counterexample is in view when the
// page opens: the inline script scrolled the timeline to it.
func TestFailingStepInViewOnLoad(t *testing.T) {
	dom, console := render(t, written(t, longSample()))
	if len(console) > 0 {
		t.Fatalf("console messages:\n%s", strings.Join(console, "\n"))
	}
	if !strings.Contains(dom, `data-failing-in-view="true"`) {
		t.Fatalf("the failing step is out of view:\n%s", regexp.MustCompile(`<div class="tl-scroll"[^>]*>`).FindString(dom))
	}
	if m := regexp.MustCompile(`data-scrolled="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] == "0" {
		t.Fatalf("the timeline was not scrolled: %v", m)
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
