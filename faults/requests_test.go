package faults

import "testing"

func msg(typ byte, body string) []byte {
	n := len(body) + 4
	return append([]byte{typ, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, body...)
}

// However the bytes are cut into chunks, the same requests are counted.
func TestRequestCounterIgnoresChunking(t *testing.T) {
	startup := []byte{0, 0, 0, 9, 0, 3, 0, 0, 'x'}
	var stream []byte
	stream = append(stream, startup...)
	stream = append(stream, msg('p', "sasl")...)
	stream = append(stream, msg('Q', "begin\x00")...)
	stream = append(stream, msg('P', "insert")...)
	stream = append(stream, msg('B', "")...)
	stream = append(stream, msg('E', "xx")...)
	stream = append(stream, msg('S', "")...)
	stream = append(stream, msg('Q', "commit\x00")...)
	const want = 5 // startup, p, Q, S, Q
	for size := 1; size <= len(stream); size++ {
		var r requestCounter
		got := 0
		for i := 0; i < len(stream); i += size {
			got += r.feed(stream[i:min(i+size, len(stream))])
		}
		if got != want || r.commits != 1 || r.statements != 3 {
			t.Fatalf("chunks of %d bytes: counted %d requests, %d commits and %d statements, want %d, 1 and 3 (Q, E, Q)",
				size, got, r.commits, r.statements, want)
		}
	}
}
