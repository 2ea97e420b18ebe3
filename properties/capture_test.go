package properties_test

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// capture is a rapid.TB that records a failure instead of failing the
// test, so a test can assert which property a broken subject violates.
type capture struct {
	*testing.T
	mu     sync.Mutex
	failed bool
	out    strings.Builder
}

func (c *capture) Errorf(format string, args ...any) { c.fail(fmt.Sprintf(format, args...)) }
func (c *capture) Error(args ...any)                 { c.fail(fmt.Sprint(args...)) }
func (c *capture) Fatalf(format string, args ...any) {
	c.fail(fmt.Sprintf(format, args...))
	c.FailNow()
}
func (c *capture) Fatal(args ...any)               { c.fail(fmt.Sprint(args...)); c.FailNow() }
func (c *capture) Fail()                           { c.fail("") }
func (c *capture) FailNow()                        { c.fail(""); panic(stopCapture{}) }
func (c *capture) Failed() bool                    { c.mu.Lock(); defer c.mu.Unlock(); return c.failed }
func (c *capture) Logf(format string, args ...any) { c.log(fmt.Sprintf(format, args...)) }
func (c *capture) Log(args ...any)                 { c.log(fmt.Sprint(args...)) }

func (c *capture) fail(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = true
	c.out.WriteString(msg + "\n")
}

func (c *capture) log(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out.WriteString(msg + "\n")
}

type stopCapture struct{}

// runCaptured runs fn with a capturing TB and no fail files written.
func runCaptured(t *testing.T, fn func(c *capture)) *capture {
	t.Helper()
	setFlag(t, "rapid.nofailfile", "true")
	c := &capture{T: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stopCapture); !ok {
					panic(r)
				}
			}
		}()
		fn(c)
	}()
	return c
}

// setFlag sets a rapid flag for the rest of the test.
func setFlag(t *testing.T, name, value string) { t.Helper(); setFlagTB(t, name, value) }

func setFlagTB(t testing.TB, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	old := f.Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set(name, old) })
}

var (
	violatedRE = regexp.MustCompile(`property violated: ([a-z-]+):`)
	stepsRE    = regexp.MustCompile(`counterexample: (\d+) steps`)
)

// verdict extracts the violated property and the shrunk length.
func verdict(out string) (property string, steps int) {
	if m := violatedRE.FindStringSubmatch(out); m != nil {
		property = m[1]
	}
	if all := stepsRE.FindAllStringSubmatch(out, -1); len(all) > 0 {
		steps, _ = strconv.Atoi(all[len(all)-1][1])
	}
	return property, steps
}
