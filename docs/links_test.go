// Package docs holds the documentation pages; its test checks their links.
package docs

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines is how long README.md may be: one screen for a newcomer;
// the rest belongs in docs/.
const maxReadmeLines = 120

// link is a markdown link [text](target) in a page; pages may also hold
// [text](target "title"), whose title is not part of the target.
var link = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// fence opens or closes a code block, whose text holds no links.
var fence = regexp.MustCompile("^\\s*(```|~~~)")

// pages are README.md and every docs/*.md, as paths from this directory.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found")
	}
	return append([]string{filepath.Join("..", "README.md")}, docs...)
}

// Every relative link of README.md and docs/*.md names a file that
// exists, and its #anchor, if any, a heading of that file.
func TestLinks(t *testing.T) {
	anchors := map[string]map[string]bool{} // by cleaned path
	checked := 0
	for _, page := range pages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(text) {
			target := l.target
			if skip(target) {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			file := page // "#anchor" is this page's
			if path != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s:%d: link %q: %s does not exist", page, l.line, target, file)
				continue
			}
			if anchor == "" {
				continue
			}
			file = filepath.Clean(file)
			if anchors[file] == nil {
				b, err := os.ReadFile(file)
				if err != nil {
					t.Errorf("%s:%d: link %q: %v", page, l.line, target, err)
					continue
				}
				anchors[file] = headings(b)
			}
			if !anchors[file][anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading whose anchor is #%s", page, l.line, target, file, anchor)
			}
		}
	}
	if checked == 0 {
		t.Error("no relative link found in README.md or docs/*.md: the link pattern no longer matches")
	}
	t.Logf("%d relative links checked", checked)
}

// README.md stays one screen.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++ // a last line without its line break
	}
	if n > maxReadmeLines {
		t.Errorf("README.md has %d lines, at most %d: move the rest into docs/", n, maxReadmeLines)
	}
}

// skip says whether target is not a link to a file of the repository.
func skip(target string) bool {
	lower := strings.ToLower(target)
	for _, scheme := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(lower, scheme) {
			return true
		}
	}
	return false
}

type found struct {
	target string
	line   int
}

// links are the link targets of a markdown text outside code blocks and
// code spans, with their line numbers.
func links(text []byte) []found {
	var out []found
	for n, line := range strings.Split(prose(text), "\n") {
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			out = append(out, found{target: m[1], line: n + 1})
		}
	}
	return out
}

// prose is text with its fenced code blocks and its code spans (`...`,
// which may run over a line break) blanked, line breaks kept: brackets
// and parentheses there are code, not links. A link's text may itself be
// code ([`x`](y)): the span goes, the link stays.
func prose(text []byte) string {
	var b strings.Builder
	inFence, inSpan := false, false
	for i, line := range strings.Split(string(text), "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if fence.MatchString(line) {
			inFence, inSpan = !inFence, false
			continue
		}
		if inFence {
			continue
		}
		if strings.TrimSpace(line) == "" {
			inSpan = false // a code span ends with its paragraph
			continue
		}
		for _, r := range line {
			if r == '`' {
				inSpan = !inSpan
				continue
			}
			if !inSpan {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// headings are the anchors GitHub gives a markdown text's headings:
// lower case, spaces to '-', punctuation other than '-' and '_' dropped,
// and a repeated one suffixed -1, -2, ...
func headings(text []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if len(line)-len(title) > 6 || (title != "" && title[0] != ' ') {
			continue // not a heading: ####### or #tag
		}
		s := slug(strings.TrimSpace(title))
		if k := seen[s]; k > 0 {
			out[s+"-"+strconv.Itoa(k)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// slug is GitHub's anchor for a heading's text.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The slug rule on headings of these pages.
func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Map the harness's settings onto your knobs":                  "map-the-harnesss-settings-onto-your-knobs",
		"Running, failing, replaying":                                 "running-failing-replaying",
		"`outboxcheck run`":                                           "outboxcheck-run",
		"Subject errors (exit 4)":                                     "subject-errors-exit-4",
		"A SQL-table forwarder: `examples/forwarder` (loop contract)": "a-sql-table-forwarder-examplesforwarder-loop-contract",
		"database/sql subjects":                                       "databasesql-subjects",
		"snake_case stays":                                            "snake_case-stays",
	} {
		if got := slug(title); got != want {
			t.Errorf("slug(%q) = %q, want %q", title, got, want)
		}
	}
}
