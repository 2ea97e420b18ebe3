package harness

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
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

// prepareRapid makes rapid usable outside `go test`: it consults
// testing.Short, which panics unless the testing flags are registered and
// parsed.
func prepareRapid() {
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
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

// rapidFlagsGiven names the -rapid.* flags among args (a command line).
func rapidFlagsGiven(args []string) map[string]bool {
	given := map[string]bool{}
	for _, a := range args {
		if a == "--" || a == "-args" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && strings.HasPrefix(name, "rapid.") {
			given[name] = true
		}
	}
	return given
}

// Budget is how much rapid may spend on a run. Zero fields keep rapid's
// current setting (its defaults, or the -rapid.* flags of a test).
type Budget struct {
	Checks     int           // checks to run when nothing fails
	Steps      int           // average actions per check
	Seed       uint64        // the run's first seed; 0 draws one
	ShrinkTime time.Duration // how long to spend shrinking a failure
	// FailFile, if set, is a fail file to replay (rapid.failfile).
	FailFile string
	// KeepFailFiles lets rapid save a failure's fail file, under
	// testdata/rapid/ in the working directory; by default none is written.
	KeepFailFiles bool
}

// Apply sets rapid's flags to the budget and returns a function that puts
// them back. A -rapid.* flag given on the command line wins over the
// budget: `go test -rapid.checks=1000` scales a test that applies one.
// rapid's settings are process-wide: runs that apply different budgets
// must not overlap.
func (b Budget) Apply() (restore func()) {
	prepareRapid()
	given := rapidFlagsGiven(os.Args[1:])
	set := map[string]string{"rapid.nofailfile": fmt.Sprint(!b.KeepFailFiles), "rapid.failfile": b.FailFile}
	if b.Checks > 0 {
		set["rapid.checks"] = fmt.Sprint(b.Checks)
	}
	if b.Steps > 0 {
		set["rapid.steps"] = fmt.Sprint(b.Steps)
	}
	if b.Seed != 0 {
		set["rapid.seed"] = fmt.Sprint(b.Seed)
	}
	if b.ShrinkTime > 0 {
		set["rapid.shrinktime"] = b.ShrinkTime.String()
	}
	old := map[string]string{}
	for name, v := range set {
		if given[name] {
			continue
		}
		f := flag.Lookup(name)
		old[name] = f.Value.String()
		if err := f.Value.Set(v); err != nil {
			panic(fmt.Sprintf("properties: rapid flag %s=%s: %v", name, v, err)) // our own values: a bug
		}
	}
	return func() {
		for name, v := range old {
			_ = flag.Lookup(name).Value.Set(v)
		}
	}
}
