package reports

import (
	"encoding/xml"
	"fmt"
	"io"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// JUnit renders one test case per property, for CI systems that show
// JUnit results.
func (r *Report) JUnit(w io.Writer) error {
	s := junitSuite{Name: "outboxcheck/" + r.Subject, Time: fmt.Sprintf("%.3f", r.Seconds)}
	for _, p := range r.Properties {
		c := junitCase{Name: p.Name, Classname: "outboxcheck." + p.Kind}
		switch p.Verdict {
		case Violated:
			body := r.Message
			if r.Failure != nil {
				body += "\n" + story(r.Failure)
			}
			c.Failure = &junitMessage{Message: oneLine(p.Detail), Body: body}
			s.Failures++
		case NotChecked:
			c.Error = &junitMessage{Message: oneLine(r.Message)}
			s.Errors++
		case NotApplicable, NotJudged:
			c.Skipped = &junitMessage{Message: words(p.Verdict) + ": " + p.Detail}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	if name := map[string]string{Panic: "subject-does-not-panic", SubjectError: "subject-operations-succeed"}[r.Verdict]; name != "" {
		s.Cases = append(s.Cases, junitCase{Name: name, Classname: "outboxcheck.subject",
			Failure: &junitMessage{Message: oneLine(r.Message), Body: story(r.Failure)}})
		s.Failures++
	}
	s.Tests = len(s.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// story is the counterexample as numbered lines.
func story(ce *Counterexample) string {
	if ce == nil {
		return ""
	}
	out := ""
	for _, s := range ce.Steps {
		out += s.String() + "\n"
	}
	return out
}

func (s Step) String() string {
	out := fmt.Sprintf("%3s  %s  %-15s %-12s %s", s.Num(), s.Clock, s.Action, s.Actor, s.Input)
	if s.Result != "" {
		out += " → " + s.Result
	}
	if s.Expect != "" {
		out += "  (model: " + s.Expect + ")"
	}
	return out
}
