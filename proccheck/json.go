package proccheck

import (
	"bytes"
	"encoding/json"
)

// jsonStrict decodes one JSON object into v, refusing unknown fields:
// a misspelled field is a protocol error, not a silent zero.
func jsonStrict(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	return d.Decode(v)
}
