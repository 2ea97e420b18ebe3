package loopcheck_test

import "os"

func writeString(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
