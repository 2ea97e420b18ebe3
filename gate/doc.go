// Package gate is what the outboxcheck command does below its flags: it
// opens a session on PostgreSQL (a URL, Docker, or a throwaway cluster of
// the local binaries), runs a subject through a contract, the kill matrix
// or the benchmarks, writes the reports, and returns the verdict as an
// error that carries the command's exit code (see Error and Code).
//
// Each command of cmd/outboxcheck parses its flags and calls one function
// here: Run, Replay, Matrix, Bench, Merge or Clean.
package gate
