package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The server's non-default settings are shown in report.md and
// report.html, and told apart from a report that did not record them.
func TestServerSettingsShown(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	r.Environment.ServerSettings = map[string]string{"fsync": "off", "log_line_prefix": "a|b"}
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil || got.Environment.ServerSettings["fsync"] != "off" {
		t.Fatalf("round trip: %+v, %v", got.Environment, err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if want := `| server settings not at their defaults | fsync=off, log_line_prefix=a\|b |`; !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q:\n%s", want, md)
	}
	if !strings.Contains(string(html), "fsync=off, log_line_prefix=a|b") {
		t.Errorf("report.html lacks the settings:\n%s", html)
	}
	if s := settingsText(nil); s != "not recorded" {
		t.Errorf("nil settings shown as %q", s)
	}
	if s := settingsText(map[string]string{}); s != "none" {
		t.Errorf("empty settings shown as %q", s)
	}
}
