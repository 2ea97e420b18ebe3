package harness

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Recorder is a rapid.TB for runs outside a test (the CLI, the kill
// matrix): it keeps what rapid reports. Unlike a testing.T, FailNow does
// not stop the goroutine: Run returns after a fatal failure, with its
// Summary, and rapid only calls FailNow once it is done.
type Recorder struct {
	name   string
	live   io.Writer // if set, receives every line as it is written
	mu     sync.Mutex
	failed bool
	out    strings.Builder
}

// NewRecorder returns a Recorder named name (rapid uses the name in its
// messages); live, if not nil, sees the output as it comes.
func NewRecorder(name string, live io.Writer) *Recorder {
	prepareRapid()
	return &Recorder{name: name, live: live}
}

// Output is everything reported so far.
func (r *Recorder) Output() string { r.mu.Lock(); defer r.mu.Unlock(); return r.out.String() }

func (r *Recorder) Helper()                           {}
func (r *Recorder) Name() string                      { return r.name }
func (r *Recorder) Logf(format string, args ...any)   { r.write(false, fmt.Sprintf(format, args...)) }
func (r *Recorder) Log(args ...any)                   { r.write(false, fmt.Sprint(args...)) }
func (r *Recorder) Errorf(format string, args ...any) { r.write(true, fmt.Sprintf(format, args...)) }
func (r *Recorder) Error(args ...any)                 { r.write(true, fmt.Sprint(args...)) }
func (r *Recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }
func (r *Recorder) Fatal(args ...any)                 { r.Error(args...); r.FailNow() }
func (r *Recorder) Fail()                             { r.write(true, "") }
func (r *Recorder) FailNow()                          { r.Fail() }
func (r *Recorder) Skipf(format string, args ...any)  { r.Logf(format, args...) }
func (r *Recorder) Skip(args ...any)                  { r.Log(args...) }
func (r *Recorder) SkipNow()                          {}
func (r *Recorder) Failed() bool                      { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }

func (r *Recorder) write(fail bool, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = r.failed || fail
	if msg == "" {
		return
	}
	r.out.WriteString(msg + "\n")
	if r.live != nil {
		io.WriteString(r.live, msg+"\n")
	}
}
