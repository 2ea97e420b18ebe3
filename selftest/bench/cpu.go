package bench

import (
	"os"
	"strconv"
	"strings"
)

// startCPU reads the machine's CPU time now; the function it returns
// says what share of it was busy since (0..1), or -1 where /proc/stat
// cannot be read (not Linux).
func startCPU() func() float64 {
	busy0, total0, ok0 := procStat()
	return func() float64 {
		busy1, total1, ok1 := procStat()
		if !ok0 || !ok1 || total1 <= total0 {
			return -1
		}
		return float64(busy1-busy0) / float64(total1-total0)
	}
}

// procStat is the machine's busy and total CPU ticks from /proc/stat's
// first line; idle and iowait count as not busy.
func procStat() (busy, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range f[1:min(len(f), 9)] { // guest and guest_nice are in user and nice already
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, true
}
