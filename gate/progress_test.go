package gate

import (
	"io"
	"os"
	"testing"
)

type wrapped struct{ io.Writer }

func (w wrapped) Unwrap() io.Writer { return w.Writer }

// The progress line is rewritten in place on a terminal, also when the
// command's stderr reaches it through a wrapper (the CLI serializes its
// writes): terminal looks through it. A character device stands in for
// the terminal; a pipe is not one.
func TestTerminalLooksThroughWrappers(t *testing.T) {
	dev, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, c := range []struct {
		name string
		w    io.Writer
		want bool
	}{
		{"device", dev, true},
		{"wrapped device", wrapped{wrapped{dev}}, true},
		{"pipe", w, false},
		{"wrapped pipe", wrapped{w}, false},
		{"no file", io.Discard, false},
	} {
		if got := terminal(c.w); got != c.want {
			t.Errorf("%s: terminal = %v, want %v", c.name, got, c.want)
		}
	}
}

// Code maps errors to exit codes: nil is 0, an *Error its own, and
// anything unforeseen the infrastructure's.
func TestCode(t *testing.T) {
	if Code(nil) != ExitOK || Code(Usagef("x")) != ExitUsage || Code(io.EOF) != ExitInfra ||
		Code(&Error{Code: ExitSubject, Err: io.EOF}) != ExitSubject {
		t.Fatal("wrong codes")
	}
}
