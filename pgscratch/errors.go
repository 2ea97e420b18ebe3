package pgscratch

import "errors"

// ErrBadURL marks a database URL that does not parse: a configuration error,
// not an infrastructure one.
var ErrBadURL = errors.New("malformed database URL")
