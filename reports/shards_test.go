package reports

import (
	"strings"
	"testing"
)

// Merge takes every shard of one run, once, or says what is wrong.
func TestMergeRefusesWhatIsNotOneRun(t *testing.T) {
	shard := func(s string, edit func(*Report)) *Report {
		r := sample()
		r.Contract, r.Shard = StepContract, s
		if edit != nil {
			edit(r)
		}
		return r
	}
	loop := func(r *Report) { r.Contract = LoopContract }
	other := func(r *Report) { r.Subject = "reference" }
	for _, c := range []struct {
		name string
		rs   []*Report
		says string
	}{
		{"a missing shard", []*Report{shard("1/3", nil), shard("3/3", nil)}, "shard 2/3 missing"},
		{"two missing", []*Report{shard("2/3", nil)}, "shard 1/3, 3/3 missing"},
		{"a shard twice", []*Report{shard("1/2", nil), shard("2/2", nil), shard("2/2", nil)}, "shard 2/2 given twice"},
		{"different splits", []*Report{shard("1/2", nil), shard("2/3", nil)}, "split differently: 1/2 and 2/3"},
		{"no shard", []*Report{shard("1/1", nil), shard("", nil)}, "is not a shard"},
		{"a merge", []*Report{shard("", func(r *Report) { r.Merged = []string{"1/2", "2/2"} })}, "is not a shard"},
		{"different contracts", []*Report{shard("1/2", nil), shard("2/2", loop)}, "different contracts: step and loop"},
		{"different subjects", []*Report{shard("1/2", nil), shard("2/2", other)}, "different subjects: mark-published-no-fence and reference"},
	} {
		if m, err := Merge(c.rs); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: merged %v, error %v; want %q", c.name, m != nil, err, c.says)
		}
	}
	m, err := Merge([]*Report{shard("2/2", loop), shard("1/2", loop)})
	if err != nil || m.Contract != LoopContract || strings.Join(m.Merged, ",") != "1/2,2/2" {
		t.Fatalf("merge of every shard: %+v, %v", m, err)
	}
}
