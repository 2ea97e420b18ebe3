package faults

import (
	"encoding/binary"
	"strings"
)

// requestCounter follows the PostgreSQL frontend protocol on one client
// connection and counts requests: messages after which the client waits
// for the server (startup, password/SASL, simple Query, Sync). Counting
// requests, not TCP chunks, makes "strike after k requests" the same on
// every run whatever the kernel does to segment boundaries.
type requestCounter struct {
	head []byte // the bytes of the current message's header read so far
	left int    // body bytes of the current message still to come
	typ  byte   // the current message's type; 0 for a startup-format message
	body []byte // the first bytes of a Query's text

	commits    int // COMMIT queries seen
	statements int // statements run: simple Query and Execute messages seen
}

// isCancelRequest reports whether a connection's first bytes are a
// CancelRequest (length 16, code 80877102). pgx sends one on a new
// connection, asynchronously, when a context expires mid-query; its timing
// is the scheduler's, so a fault gate drops it and never counts it: the
// harness, not a race, decides what happens to a timed-out request.
func isCancelRequest(b []byte) bool {
	return len(b) >= 8 && binary.BigEndian.Uint32(b) == 16 && binary.BigEndian.Uint32(b[4:]) == 80877102
}

// feed consumes a chunk and returns how many requests completed in it.
func (r *requestCounter) feed(b []byte) int {
	done := 0
	for len(b) > 0 {
		if r.left > 0 {
			n := min(r.left, len(b))
			if r.typ == 'Q' && len(r.body) < 6 {
				r.body = append(r.body, b[:min(n, 6-len(r.body))]...)
				if len(r.body) == 6 && strings.EqualFold(string(r.body), "commit") {
					r.commits++
				}
			}
			r.left -= n
			b = b[n:]
			if r.left == 0 && r.ends() {
				done++
			}
			continue
		}
		// A header: startup-format messages begin with their length, whose
		// first byte is 0; typed messages begin with a letter.
		if len(r.head) == 0 {
			r.typ = b[0]
			if r.typ == 'Q' || r.typ == 'E' {
				r.statements++
			}
		}
		need := 5
		if r.typ == 0 {
			need = 4
		}
		n := min(need-len(r.head), len(b))
		r.head = append(r.head, b[:n]...)
		b = b[n:]
		if len(r.head) < need {
			continue
		}
		length := int(binary.BigEndian.Uint32(r.head[need-4:]))
		r.left = length - 4
		r.head, r.body = r.head[:0], r.body[:0]
		if r.left <= 0 {
			r.left = 0
			if r.ends() {
				done++
			}
		}
	}
	return done
}

// ends reports whether the current message is one the client then waits on.
func (r *requestCounter) ends() bool {
	switch r.typ {
	case 0, 'Q', 'S', 'p':
		return true
	}
	return false
}
