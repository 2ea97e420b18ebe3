#!/usr/bin/env python3
"""A transactional outbox + inbox in Python (standard library and psycopg2),
run by outboxcheck's process contract: one process per role, JSON lines on
stdin and stdout (protocol outboxcheck/1, docs/process-subjects.md).

    python3 outbox.py [--no-inbox | --claims-once | --unfenced] producer|relay|consumer|operator

The seed's design: the business row and its event in one transaction; a
relay that claims due events with FOR UPDATE SKIP LOCKED, a lease and a
claim_id, publishes, and marks PUBLISHED only while its claim is current
(else FAILED with backoff, DEAD after the last attempt); a consumer that
dedupes by event_id in the transaction of its effect. The broken
variants: --no-inbox applies the effect without the inbox; --claims-once
declares each event published once, trusting its lease; --unfenced
completes a claim by the row alone, not while the claim is current.
"""

import json
import os
import select
import signal
import socket
import sys
import threading
import time
import uuid

import psycopg2
import psycopg2.extensions

SCHEMA = """
CREATE TABLE IF NOT EXISTS py_payments (
    id text PRIMARY KEY, merchant_id text NOT NULL, amount_cents bigint NOT NULL);
CREATE TABLE IF NOT EXISTS py_outbox (
    seq bigserial PRIMARY KEY,
    event_id text NOT NULL UNIQUE,
    aggregate_id text NOT NULL,
    payload text NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'PUBLISHED', 'DEAD')),
    attempts int NOT NULL DEFAULT 0,
    available_at timestamptz NOT NULL DEFAULT now(),
    claim_id text,
    claim_expires_at timestamptz,
    last_error text);
CREATE INDEX IF NOT EXISTS py_outbox_due ON py_outbox (available_at) WHERE status = 'PENDING';
CREATE TABLE IF NOT EXISTS py_inbox (event_id text PRIMARY KEY);
CREATE TABLE IF NOT EXISTS py_effects (event_id text PRIMARY KEY, n int NOT NULL);
"""

URL = os.environ.get("OUTBOXCHECK_DATABASE_URL", "")
LEASE = int(os.environ.get("OUTBOXCHECK_LEASE_MS", "30000")) / 1000.0
BACKOFF = int(os.environ.get("OUTBOXCHECK_BACKOFF_MS", "1000")) / 1000.0
MAX_ATTEMPTS = int(os.environ.get("OUTBOXCHECK_MAX_ATTEMPTS", "5"))
CALL_TIMEOUT = 2.0  # a statement whose reply does not come in this long is given up, its connection dropped
ACK_DEADLINE = LEASE * 0.8  # a publish not acknowledged in this long is given up on, before the claim runs out
BATCH = 10

out_lock = threading.Lock()


def say(obj):
    with out_lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class Lines:
    """stdin, line by line, with a timeout (select on a buffered
    sys.stdin would miss what Python already read into its buffer)."""

    def __init__(self):
        self.buf = b""

    def next(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buf:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([0], [], [], wait)
            if not ready:
                return None
            chunk = os.read(0, 65536)
            if not chunk:
                sys.exit(0)  # the harness closed our stdin: it is done with us
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)


stdin = Lines()


def hear():
    return stdin.next()


class DB:
    """One connection; any error drops it, and the next call reconnects.
    A statement that hangs (a partitioned link) is cut off after
    CALL_TIMEOUT by shutting its socket, as a driver's deadline would."""

    def __init__(self):
        self.conn = None

    def connect(self):
        if self.conn is None or self.conn.closed:
            self.conn = psycopg2.connect(URL, connect_timeout=2)
        return self.conn

    def drop(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
        self.conn = None

    def run(self, fn, commit=True):
        """Runs fn(cursor) in one transaction and commits it (or rolls it
        back); returns fn's result."""
        conn = self.connect()
        fd = conn.fileno()
        timer = threading.Timer(CALL_TIMEOUT, lambda: cut(fd))
        timer.start()
        try:
            with conn.cursor() as cur:
                result = fn(cur)
            if commit:
                conn.commit()
            else:
                conn.rollback()
            return result
        except Exception:
            self.drop()
            raise
        finally:
            timer.cancel()


def cut(fd):
    try:
        socket.socket(fileno=os.dup(fd)).shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


# --- producer: the business row and its event, in one transaction --------

def producer():
    db = DB()
    say({"hello": "outboxcheck/1", "role": "producer"})
    while True:
        req = hear()
        try:
            def write(cur):
                for p in req["payments"]:
                    cur.execute("INSERT INTO py_payments (id, merchant_id, amount_cents) VALUES (%s, %s, %s)",
                                (p["id"], p["merchant_id"], p["amount_cents"]))
                    cur.execute("INSERT INTO py_outbox (event_id, aggregate_id, payload) VALUES (%s, %s, %s)",
                                (str(uuid.uuid4()), p["id"], json.dumps(p)))
            db.run(write, commit=req.get("commit", False))
            say({"id": req["id"], "ok": True})
        except Exception as e:
            say({"id": req["id"], "ok": False, "error": one_line(e)})


# --- relay: claim with a lease, publish, mark while the claim is current --

stopping = False


def stop(*_):
    global stopping
    stopping = True


def relay():
    signal.signal(signal.SIGTERM, stop)
    db = DB()
    publishes = 0
    say({"hello": "outboxcheck/1", "role": "relay"})
    while not stopping:
        claim_id = str(uuid.uuid4())
        try:
            rows = db.run(lambda cur: claim(cur, claim_id))
        except Exception as e:
            log("claim:", one_line(e))
            time.sleep(0.05)
            continue
        if not rows:
            time.sleep(0.02)
            continue
        for (seq, event_id, *_, over) in rows:  # reported as the database said: fencing is judged from them
            say({"op": "claimed", "event": event_id, "claim": claim_id, **({"over": over} if over else {})})
        for i, (seq, event_id, aggregate_id, payload, occurred_at, attempts, _) in enumerate(rows):
            if stopping:  # hand back what is not published
                release(db, claim_id, [r[0] for r in rows[i:]])
                break
            # Renew the claim just before publishing, and skip the event
            # if the claim ran out meanwhile: another relay has it.
            try:
                if not db.run(lambda cur: renew(cur, seq, claim_id)):
                    continue
            except Exception as e:
                log("renew:", one_line(e))
                continue
            publishes += 1
            say({"op": "publish", "id": publishes, "message": {
                "id": event_id, "type": "payment.created", "aggregate_id": aggregate_id, "sequence": seq,
                "occurred_at": occurred_at.isoformat(), "payload": payload}})
            res = answer(publishes, ACK_DEADLINE)
            if res is None:  # no ack within the deadline: it may have arrived; retried later
                say({"op": "abandon", "id": publishes})
                res = {"result": "error", "error": "no acknowledgement within %.0f ms" % (ACK_DEADLINE * 1000)}
            try:
                if res["result"] == "accepted":
                    changed = db.run(lambda cur: (cur.execute(
                        "UPDATE py_outbox SET status = 'PUBLISHED', claim_id = NULL, claim_expires_at = NULL "
                        "WHERE seq = %s AND " + FENCE, (seq, claim_id)), cur.rowcount)[1])
                else:
                    changed = db.run(lambda cur: fail(cur, seq, claim_id, attempts, res.get("error", res["result"])))
                say({"op": "completed", "event": event_id, "claim": claim_id, "changed": changed > 0})
            except Exception as e:
                log("mark:", one_line(e))  # the lease decides: another relay takes it over
    sys.exit(0)


def answer(publish_id, timeout):
    """The broker's answer to publish_id, skipping answers to publishes
    abandoned before; None if none comes within timeout."""
    deadline = time.monotonic() + timeout
    while True:
        res = stdin.next(max(0.0, deadline - time.monotonic()))
        if res is None or res.get("id") == publish_id:
            return res


def claim(cur, claim_id):
    # An event claimed MAX_ATTEMPTS times without an outcome (each claim
    # counts: a relay that dies mid-publish records nothing after it) is
    # given up on here, or a poison that kills its relay is retried for ever.
    cur.execute("""
        UPDATE py_outbox SET status = 'DEAD', claim_id = NULL, claim_expires_at = NULL,
            last_error = 'claimed ' || attempts || ' times without an outcome'
        WHERE status = 'PENDING' AND attempts >= %s AND (claim_expires_at IS NULL OR claim_expires_at <= now())""",
                (MAX_ATTEMPTS,))
    # over: the claim still holding a row, its lease run out (a completion
    # clears claim_id), which this one takes the row over from.
    cur.execute("""
        WITH due AS (
            SELECT seq, claim_id AS over FROM py_outbox
            WHERE status = 'PENDING' AND available_at <= now() AND attempts < %s
              AND (claim_expires_at IS NULL OR claim_expires_at <= now())
            ORDER BY seq LIMIT %s FOR UPDATE SKIP LOCKED)
        UPDATE py_outbox o SET claim_id = %s, claim_expires_at = now() + %s * interval '1 second', attempts = o.attempts + 1
        FROM due WHERE o.seq = due.seq
        RETURNING o.seq, o.event_id, o.aggregate_id, o.payload, o.occurred_at, o.attempts, due.over""",
                (MAX_ATTEMPTS, BATCH, claim_id, LEASE))
    return sorted(cur.fetchall())


def renew(cur, seq, claim_id):
    cur.execute("UPDATE py_outbox SET claim_expires_at = now() + %s * interval '1 second' "
                "WHERE seq = %s AND claim_id = %s AND claim_expires_at > now()", (LEASE, seq, claim_id))
    return cur.rowcount == 1


def fail(cur, seq, claim_id, attempts, error):
    """Records a failed publish, fenced by the claim; returns the rows it changed."""
    if attempts >= MAX_ATTEMPTS:
        cur.execute("UPDATE py_outbox SET status = 'DEAD', claim_id = NULL, claim_expires_at = NULL, last_error = %s "
                    "WHERE seq = %s AND " + FENCE, (error, seq, claim_id))
        return cur.rowcount
    cur.execute("UPDATE py_outbox SET claim_id = NULL, claim_expires_at = NULL, last_error = %s, "
                "available_at = now() + %s * interval '1 second' WHERE seq = %s AND " + FENCE,
                (error, BACKOFF * 2 ** (attempts - 1), seq, claim_id))
    return cur.rowcount


def release(db, claim_id, seqs):
    try:
        db.run(lambda cur: cur.execute(
            "UPDATE py_outbox SET claim_id = NULL, claim_expires_at = NULL, attempts = attempts - 1 "
            "WHERE seq = ANY(%s) AND claim_id = %s", (seqs, claim_id)))
    except Exception as e:
        log("release:", one_line(e))


# --- consumer: dedupe by event_id in the transaction of the effect --------

NO_INBOX = "--no-inbox" in sys.argv

# --claims-once is the other broken variant: it declares that each event
# is published once, trusting its lease, renewed just before each publish,
# to keep other relays off a claim; a relay paused past its lease between
# the renewal and the publish (a GC pause, a VM freeze) belies it.
CLAIMS_ONCE = "--claims-once" in sys.argv

# --unfenced is the third: its completions (published, failed, dead) update
# the row by seq alone, not while the claim is current. A relay paused
# past its lease wakes and completes a claim that another relay took over:
# its report says the update changed the row (fencing).
UNFENCED = "--unfenced" in sys.argv
FENCE = "%s IS NOT NULL" if UNFENCED else "claim_id = %s"


def consumer():
    db = DB()
    say({"hello": "outboxcheck/1", "role": "consumer"})
    while True:
        req = hear()
        m = req["message"]
        failpoints = req.get("failpoints", False)
        try:
            conn = db.connect()
            with conn.cursor() as cur:
                fresh = True
                if not NO_INBOX:
                    cur.execute("INSERT INTO py_inbox (event_id) VALUES (%s) ON CONFLICT DO NOTHING", (m["id"],))
                    fresh = cur.rowcount == 1
                if fresh:
                    cur.execute("INSERT INTO py_effects (event_id, n) VALUES (%s, 1) "
                                "ON CONFLICT (event_id) DO UPDATE SET n = py_effects.n + 1", (m["id"],))
            if failpoints:
                at("before-commit")
            conn.commit()
            if failpoints:
                at("after-commit")
            say({"id": req["id"], "ok": True})
        except Exception as e:
            db.drop()
            say({"id": req["id"], "ok": False, "error": one_line(e)})


def at(failpoint):
    say({"failpoint": failpoint})
    if not hear().get("continue"):
        sys.exit(1)


# --- operator: schema, reset and the read-backs ----------------------------

def operator():
    db = DB()
    db.run(lambda cur: cur.execute(SCHEMA))
    capabilities = ["pending", "dead-letters", "failpoints", "claims"]
    if CLAIMS_ONCE:
        capabilities.append("publishes-once")
    say({"hello": "outboxcheck/1", "role": "operator", "capabilities": capabilities})
    while True:
        req = hear()
        try:
            op = req["op"]
            if op == "reset":
                db.run(lambda cur: cur.execute("TRUNCATE py_payments, py_outbox, py_inbox, py_effects"))
                say({"id": req["id"], "ok": True})
            elif op == "effects":
                rows = db.run(lambda cur: (cur.execute("SELECT event_id, n FROM py_effects"), cur.fetchall())[1])
                say({"id": req["id"], "ok": True, "effects": {e: n for e, n in rows}})
            elif op in ("pending", "dead-letters"):
                status = "PENDING" if op == "pending" else "DEAD"
                rows = db.run(lambda cur: (cur.execute(
                    "SELECT aggregate_id FROM py_outbox WHERE status = %s", (status,)), cur.fetchall())[1])
                say({"id": req["id"], "ok": True, "payments": [r[0] for r in rows]})
            else:
                say({"id": req["id"], "ok": False, "error": "unknown op " + op})
        except Exception as e:
            say({"id": req["id"], "ok": False, "error": one_line(e)})


def one_line(e):
    return " ".join(str(e).split()) or type(e).__name__


if __name__ == "__main__":
    role = sys.argv[-1]
    {"producer": producer, "relay": relay, "consumer": consumer, "operator": operator}[role]()
