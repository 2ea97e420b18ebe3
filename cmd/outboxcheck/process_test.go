package main

import (
	"os/exec"
	"strings"
	"testing"
)

// --process runs a subject in any language; a command that is not there
// is the user's error (2), one whose process breaks the protocol the
// subject's (4), with what it said.
func TestProcessSubject(t *testing.T) {
	if code, _, stderr := cliErr(t, "run", "--process", "no-such-program-here x", "--report-dir", ""); code != exitUsage || !strings.Contains(stderr, "--process: exec: \"no-such-program-here\"") {
		t.Errorf("a missing program: exit %d, %s", code, stderr)
	}
	if code, _, stderr := cliErr(t, "run", "--process", "sh x", "--subject", "reference", "--report-dir", ""); code != exitUsage || !strings.Contains(stderr, "exclude each other") {
		t.Errorf("--process with --subject: exit %d, %s", code, stderr)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	code, out, stderr := cliErr(t, "run", "--process", "python3 ../../proccheck/testdata/broken.py exit-at-start", "--checks", "2", "--parallel", "1", "--report-dir", "")
	if code != exitSubject || !strings.Contains(stderr, "subject's operator process: exited before its hello: exit status 3") ||
		!strings.Contains(stderr, "cannot connect: no such database") || !strings.Contains(out, "through the process contract") {
		t.Errorf("a subject that exits at start: exit %d\n%s%s", code, out, stderr)
	}
}
