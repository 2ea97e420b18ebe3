package main

import (
	"fmt"
	"regexp"
	"strings"
)

// settingFlags collects --pg-setting name=value, each checked as given.
type settingFlags []string

var settingSyntax = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)?=\S`)

func (s *settingFlags) String() string { return strings.Join(*s, ",") }

func (s *settingFlags) Set(v string) error {
	if !settingSyntax.MatchString(v) {
		return fmt.Errorf("want name=value, e.g. wal_level=logical; got %q", v)
	}
	*s = append(*s, v)
	return nil
}
