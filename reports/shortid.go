package reports

import (
	"regexp"
	"strings"
)

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// shortener shortens the ids in a counterexample's texts for the page:
// ids that share a long prefix (a deterministic generator's) lose it,
// "…0a" standing for 00000000-0000-4000-8000-00000000000a.
type shortener struct{ prefix string }

func newShortener(steps []Step) shortener {
	var ids []string
	for _, s := range steps {
		for _, t := range []string{s.Input, s.Result, s.Expect} {
			ids = append(ids, uuidRE.FindAllString(t, -1)...)
		}
		for id := range s.Model {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return shortener{}
	}
	p := ids[0][:len(ids[0])-2] // every id keeps two characters at least
	for _, id := range ids[1:] {
		for !strings.HasPrefix(id, p) {
			p = p[:len(p)-1]
		}
	}
	if len(p) < 8 {
		return shortener{}
	}
	return shortener{prefix: p}
}

// text shortens every id in s.
func (sh shortener) text(s string) string {
	if sh.prefix == "" {
		return s
	}
	return uuidRE.ReplaceAllStringFunc(s, sh.id)
}

// id shortens one id; without a shared prefix it keeps the first 8
// characters.
func (sh shortener) id(id string) string {
	switch {
	case sh.prefix != "" && strings.HasPrefix(id, sh.prefix):
		return "…" + id[len(sh.prefix):]
	case len(id) > 9 && sh.prefix == "":
		return id[:8] + "…"
	}
	return id
}
