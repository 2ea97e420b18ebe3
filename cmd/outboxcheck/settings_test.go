package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxcheck/outboxcheck/reports"
)

// Every report records the server's settings that differ from
// PostgreSQL's defaults; a harness-owned server's fsync=off among them,
// and none of the session timeouts it once set.
func TestReportRecordsServerSettings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	if code, _ := cli(t, "run", "--no-faults", "--checks", "2", "--seed", "1", "--report-dir", dir); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil || !strings.Contains(string(b), `"server_settings": {`) {
		t.Fatalf("report.json has no server_settings (%v):\n%s", err, b)
	}
	rep, err := reports.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	set := rep.Environment.ServerSettings
	if rep.Environment.PostgresSource != "url" && set["fsync"] != "off" {
		t.Errorf("a harness-owned server's settings %v lack fsync=off", set)
	}
	for _, name := range []string{"idle_in_transaction_session_timeout", "client_connection_check_interval"} {
		if v, ok := set[name]; ok && rep.Environment.PostgresSource != "url" {
			t.Errorf("the harness-owned server sets %s=%s", name, v)
		}
	}
}
