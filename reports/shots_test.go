package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/internal/chromium"
)

// TestScreenshots saves PNGs of report pages for a person to look at:
// with REPORT_SHOTS=<dir>, the test samples, and the report directories
// REPORT_SAMPLES names (name=dir,...), re-rendered by this code. Each page
// is shot as it opens (1280×800) and whole (1280×3000).
//
//	REPORT_SHOTS=/tmp/report-shots REPORT_SAMPLES=faulted=/tmp/rp go test ./reports -run Screenshots
func TestScreenshots(t *testing.T) {
	out := os.Getenv("REPORT_SHOTS")
	if out == "" {
		t.Skip("REPORT_SHOTS not set")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	pages := map[string]*Report{"sample-pass": passSample(), "sample-fault-free": stillSample(), "sample-faulted": sample(), "sample-faulted-long": longSample(), "sample-progress": progressSample()}
	for _, nd := range strings.Split(os.Getenv("REPORT_SAMPLES"), ",") {
		if name, dir, ok := strings.Cut(nd, "="); ok {
			r, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			pages[name] = r
		}
	}
	for name, r := range pages {
		dir := t.TempDir()
		if err := Write(dir, r); err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(dir, "report.html")
		chromium.Screenshot(t, page, filepath.Join(out, name+".png"), 1280, 800)
		chromium.Screenshot(t, page, filepath.Join(out, name+"-full.png"), 1280, 3000)
	}
}
