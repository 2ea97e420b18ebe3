package harness

import "errors"

// ErrRefused is a broker's refusal of a publish: the message is not in
// the broker. Every refusal a contract's broker returns wraps it, so an
// adapter can tell "try again later" from "it may have arrived" with
// errors.Is, without matching text.
var ErrRefused = errors.New("broker refused the publish")

// ErrAckLost is what a relay sees when the broker took the message but
// the acknowledgement never came back (the seed's "crash after the
// message arrived"): the publish may have taken effect.
var ErrAckLost = errors.New("publish timed out: no acknowledgement from the broker")
