"""A subject that breaks the process protocol in the way its first
argument names, for proccheck's tests. It needs no database: its
operator keeps nothing, and the run must end before anything is judged."""
import json
import sys
import time

mode, role = sys.argv[1], sys.argv[-1]


def say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if mode == "exit-at-start":
    print("cannot connect: no such database", file=sys.stderr)
    sys.exit(3)
if mode == "bad-hello":
    print("Starting outbox relay v1.2 ...", flush=True)
    time.sleep(60)
if mode == "old-version":
    say({"hello": "outboxcheck/0", "role": role})
    time.sleep(60)
if mode == "silent":
    time.sleep(60)

if mode == "misspelt-capability" and role == "operator":
    say({"hello": "outboxcheck/1", "role": role, "capabilities": ["pending", "dead-letter"]})
else:
    say({"hello": "outboxcheck/1", "role": role})
if role == "relay" and mode == "garbage-relay":
    print("publishing event 42", flush=True)
    time.sleep(60)
if role == "relay" and mode == "half-report":
    say({"op": "completed", "event": "e-1", "claim": "c-1"})
    time.sleep(60)
for line in sys.stdin:
    req = json.loads(line)
    if mode == "wrong-id" and role == "operator":
        say({"id": req["id"] + 1, "ok": True})
        continue
    if mode == "unknown-field" and role == "operator":
        say({"id": req["id"], "ok": True, "effect": {}})
        continue
    say({"id": req["id"], "ok": True})
