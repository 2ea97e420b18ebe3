// Package model is the pure reference model of an outbox + inbox. A
// State is a value: every step function takes a State and returns a
// new one, never mutating its input, and reads no clock, network or
// randomness. Results the implementation reports are checked against the
// model's expectation and come back as Problems named after the properties
// of docs/properties.md.
//
// Outcomes that may or may not have taken effect (a lost COMMIT reply, a
// lost mark reply, a consumer that died around its commit) are never
// guessed: the step records every row state the operation may have left,
// and Observe resolves it later from what the database holds.
package model
