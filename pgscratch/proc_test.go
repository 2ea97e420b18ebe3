package pgscratch

import (
	"strconv"
	"syscall"
)

func processAlive(pid int) error { return syscall.Kill(pid, 0) }

func itoa(n int) string { return strconv.Itoa(n) }
