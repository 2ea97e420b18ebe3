#!/usr/bin/env node
// A transactional outbox + inbox in Node.js (the pg package only), run by
// outboxcheck's process contract: one process per role, JSON lines on stdin
// and stdout (protocol outboxcheck/1, docs/process-subjects.md).
//
//     node outbox.js [--no-inbox | --unfenced] producer|relay|consumer|operator
//
// The seed's design: the business row and its event in one transaction; a
// relay that claims due events with FOR UPDATE SKIP LOCKED, a lease and a
// claim_id, renews the claim just before each publish, and marks PUBLISHED
// only while its claim is current (else a retry with backoff, DEAD after the
// last attempt, also for an event claimed that often without an outcome); a
// consumer that dedupes by event_id in the transaction of its effect.
// The broken variants: --no-inbox applies the effect without the inbox;
// --unfenced completes a claim by the row alone, not while the claim is
// current.
'use strict';

const crypto = require('crypto');
const readline = require('readline');
const { Client } = require('pg');

const SCHEMA = `
CREATE TABLE IF NOT EXISTS js_payments (
    id text PRIMARY KEY, merchant_id text NOT NULL, amount_cents bigint NOT NULL);
CREATE TABLE IF NOT EXISTS js_outbox (
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
CREATE TABLE IF NOT EXISTS js_inbox (event_id text PRIMARY KEY);
CREATE TABLE IF NOT EXISTS js_effects (event_id text PRIMARY KEY, n int NOT NULL);
`;

const URL = process.env.OUTBOXCHECK_DATABASE_URL || '';
const LEASE_MS = Number(process.env.OUTBOXCHECK_LEASE_MS || 30000);
const BACKOFF_MS = Number(process.env.OUTBOXCHECK_BACKOFF_MS || 1000);
const MAX_ATTEMPTS = Number(process.env.OUTBOXCHECK_MAX_ATTEMPTS || 5);
const CALL_TIMEOUT_MS = 2000; // a statement not answered in this long is given up, its connection dropped
const ACK_DEADLINE_MS = LEASE_MS * 0.8; // a publish not acknowledged in this long is given up on
const BATCH = 10;
const NO_INBOX = process.argv.includes('--no-inbox');
// --unfenced is the other broken variant: its completions (published,
// failed, dead) update the row by seq alone, not while the claim is
// current. A relay paused past its lease wakes and completes a claim that
// another relay took over: its report says the update changed the row.
const UNFENCED = process.argv.includes('--unfenced');
const FENCE = (n) => (UNFENCED ? `$${n}::text IS NOT NULL` : `claim_id = $${n}`);

const say = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const log = (...args) => process.stderr.write(args.join(' ') + '\n');
const oneLine = (e) => String((e && e.message) || e).split(/\s+/).join(' ');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Lines from stdin: next() resolves with the next object, or null after
// timeoutMs; stdin's end ends the process (the harness is done with it).
class Lines {
  constructor() {
    this.queue = [];
    this.waiters = [];
    const rl = readline.createInterface({ input: process.stdin });
    rl.on('line', (line) => {
      if (!line.trim()) return;
      const obj = JSON.parse(line);
      const w = this.waiters.shift();
      if (w) w(obj);
      else this.queue.push(obj);
    });
    rl.on('close', () => process.exit(0));
  }

  next(timeoutMs) {
    if (this.queue.length > 0) return Promise.resolve(this.queue.shift());
    return new Promise((resolve) => {
      const w = (obj) => { clearTimeout(t); resolve(obj); };
      const t = timeoutMs === undefined ? null : setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        resolve(null);
      }, timeoutMs);
      this.waiters.push(w);
    });
  }
}

const stdin = new Lines();

// DB is one connection; any error drops it, and the next call reconnects.
class DB {
  constructor() { this.client = null; }

  async connect() {
    if (!this.client) {
      const c = new Client({ connectionString: URL, connectionTimeoutMillis: 2000, query_timeout: CALL_TIMEOUT_MS });
      c.on('error', () => {}); // a dropped connection surfaces at the next query
      try {
        await c.connect();
      } catch (e) {
        c.end().catch(() => {});
        throw e;
      }
      this.client = c;
    }
    return this.client;
  }

  drop() {
    if (this.client) this.client.end().catch(() => {});
    this.client = null;
  }

  // run runs fn(client) in one transaction and commits it (or rolls it back).
  async run(fn, commit = true) {
    const c = await this.connect();
    try {
      await c.query('BEGIN');
      const result = await fn(c);
      await c.query(commit ? 'COMMIT' : 'ROLLBACK');
      return result;
    } catch (e) {
      this.drop();
      throw e;
    }
  }
}

// --- producer: the business row and its event, in one transaction ---------

async function producer() {
  const db = new DB();
  say({ hello: 'outboxcheck/1', role: 'producer' });
  for (;;) {
    const req = await stdin.next();
    try {
      await db.run(async (c) => {
        for (const p of req.payments) {
          await c.query('INSERT INTO js_payments (id, merchant_id, amount_cents) VALUES ($1, $2, $3)', [p.id, p.merchant_id, p.amount_cents]);
          await c.query('INSERT INTO js_outbox (event_id, aggregate_id, payload) VALUES ($1, $2, $3)', [crypto.randomUUID(), p.id, JSON.stringify(p)]);
        }
      }, Boolean(req.commit));
      say({ id: req.id, ok: true });
    } catch (e) {
      say({ id: req.id, ok: false, error: oneLine(e) });
    }
  }
}

// --- relay: claim with a lease, renew, publish, mark while the claim is current

let stopping = false;

async function relay() {
  process.on('SIGTERM', () => { stopping = true; });
  const db = new DB();
  let publishes = 0;
  say({ hello: 'outboxcheck/1', role: 'relay' });
  while (!stopping) {
    const claimId = crypto.randomUUID();
    let rows;
    try {
      rows = await db.run((c) => claim(c, claimId));
    } catch (e) {
      log('claim:', oneLine(e));
      await sleep(50);
      continue;
    }
    if (rows.length === 0) {
      await sleep(20);
      continue;
    }
    for (const r of rows) { // reported as the database said: fencing is judged from them
      say({ op: 'claimed', event: r.event_id, claim: claimId, ...(r.over ? { over: r.over } : {}) });
    }
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (stopping) { // hand back what is not published
        await release(db, claimId, rows.slice(i).map((x) => x.seq));
        break;
      }
      try {
        if (!(await db.run((c) => renew(c, r.seq, claimId)))) continue; // another relay has it
      } catch (e) {
        log('renew:', oneLine(e));
        continue;
      }
      const id = ++publishes;
      say({ op: 'publish', id, message: { id: r.event_id, type: 'payment.created', aggregate_id: r.aggregate_id,
        sequence: Number(r.seq), occurred_at: r.occurred_at.toISOString(), payload: r.payload } });
      let res = await answer(id, ACK_DEADLINE_MS);
      if (res === null) { // no ack within the deadline: it may have arrived; retried later
        say({ op: 'abandon', id });
        res = { result: 'error', error: `no acknowledgement within ${ACK_DEADLINE_MS} ms` };
      }
      try {
        let changed;
        if (res.result === 'accepted') {
          changed = (await db.run((c) => c.query(
            `UPDATE js_outbox SET status = 'PUBLISHED', claim_id = NULL, claim_expires_at = NULL WHERE seq = $1 AND ${FENCE(2)}`, [r.seq, claimId]))).rowCount;
        } else {
          changed = await db.run((c) => fail(c, r.seq, claimId, r.attempts, res.error || res.result));
        }
        say({ op: 'completed', event: r.event_id, claim: claimId, changed: changed > 0 });
      } catch (e) {
        log('mark:', oneLine(e)); // the lease decides: another relay takes it over
      }
    }
  }
  process.exit(0);
}

// answer is the broker's answer to publish id, skipping answers to
// publishes abandoned before; null if none comes within timeoutMs.
async function answer(id, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await stdin.next(Math.max(0, deadline - Date.now()));
    if (res === null || res.id === id) return res;
  }
}

async function claim(c, claimId) {
  // An event claimed MAX_ATTEMPTS times without an outcome is given up on
  // here, or a poison that kills its relay is retried for ever.
  await c.query(`UPDATE js_outbox SET status = 'DEAD', claim_id = NULL, claim_expires_at = NULL,
      last_error = 'claimed ' || attempts || ' times without an outcome'
    WHERE status = 'PENDING' AND attempts >= $1 AND (claim_expires_at IS NULL OR claim_expires_at <= now())`, [MAX_ATTEMPTS]);
  // over: the claim still holding a row, its lease run out (a completion
  // clears claim_id), which this one takes the row over from.
  const { rows } = await c.query(`
    WITH due AS (
      SELECT seq, claim_id AS over FROM js_outbox
      WHERE status = 'PENDING' AND available_at <= now() AND attempts < $3
        AND (claim_expires_at IS NULL OR claim_expires_at <= now())
      ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED)
    UPDATE js_outbox o SET claim_id = $1, claim_expires_at = now() + $2 * interval '1 millisecond', attempts = o.attempts + 1
    FROM due WHERE o.seq = due.seq
    RETURNING o.seq, o.event_id, o.aggregate_id, o.payload, o.occurred_at, o.attempts, due.over`, [claimId, LEASE_MS, MAX_ATTEMPTS, BATCH]);
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
}

async function renew(c, seq, claimId) {
  const res = await c.query(`UPDATE js_outbox SET claim_expires_at = now() + $1 * interval '1 millisecond'
    WHERE seq = $2 AND claim_id = $3 AND claim_expires_at > now()`, [LEASE_MS, seq, claimId]);
  return res.rowCount === 1;
}

// fail records a failed publish, fenced by the claim; it resolves with the
// rows it changed.
async function fail(c, seq, claimId, attempts, error) {
  if (attempts >= MAX_ATTEMPTS) {
    return (await c.query(`UPDATE js_outbox SET status = 'DEAD', claim_id = NULL, claim_expires_at = NULL, last_error = $1
      WHERE seq = $2 AND ${FENCE(3)}`, [error, seq, claimId])).rowCount;
  }
  return (await c.query(`UPDATE js_outbox SET claim_id = NULL, claim_expires_at = NULL, last_error = $1,
      available_at = now() + $2 * interval '1 millisecond' WHERE seq = $3 AND ${FENCE(4)}`,
  [error, BACKOFF_MS * 2 ** (attempts - 1), seq, claimId])).rowCount;
}

async function release(db, claimId, seqs) {
  try {
    await db.run((c) => c.query(`UPDATE js_outbox SET claim_id = NULL, claim_expires_at = NULL, attempts = attempts - 1
      WHERE seq = ANY($1) AND claim_id = $2`, [seqs, claimId]));
  } catch (e) {
    log('release:', oneLine(e));
  }
}

// --- consumer: dedupe by event_id in the transaction of the effect ---------

async function consumer() {
  const db = new DB();
  say({ hello: 'outboxcheck/1', role: 'consumer' });
  for (;;) {
    const req = await stdin.next();
    const m = req.message;
    try {
      const c = await db.connect();
      await c.query('BEGIN');
      let fresh = true;
      if (!NO_INBOX) {
        const r = await c.query('INSERT INTO js_inbox (event_id) VALUES ($1) ON CONFLICT DO NOTHING', [m.id]);
        fresh = r.rowCount === 1;
      }
      if (fresh) {
        await c.query('INSERT INTO js_effects (event_id, n) VALUES ($1, 1) ON CONFLICT (event_id) DO UPDATE SET n = js_effects.n + 1', [m.id]);
      }
      if (req.failpoints) await at('before-commit');
      await c.query('COMMIT');
      if (req.failpoints) await at('after-commit');
      say({ id: req.id, ok: true });
    } catch (e) {
      db.drop();
      say({ id: req.id, ok: false, error: oneLine(e) });
    }
  }
}

async function at(failpoint) {
  say({ failpoint });
  const go = await stdin.next();
  if (!go || !go.continue) process.exit(1);
}

// --- operator: schema, reset and the read-backs ------------------------------

async function operator() {
  const db = new DB();
  await db.run((c) => c.query(SCHEMA));
  say({ hello: 'outboxcheck/1', role: 'operator', capabilities: ['pending', 'dead-letters', 'failpoints', 'claims'] });
  for (;;) {
    const req = await stdin.next();
    try {
      switch (req.op) {
        case 'reset':
          await db.run((c) => c.query('TRUNCATE js_payments, js_outbox, js_inbox, js_effects'));
          say({ id: req.id, ok: true });
          break;
        case 'effects': {
          const { rows } = await db.run((c) => c.query('SELECT event_id, n FROM js_effects'));
          say({ id: req.id, ok: true, effects: Object.fromEntries(rows.map((r) => [r.event_id, r.n])) });
          break;
        }
        case 'pending':
        case 'dead-letters': {
          const status = req.op === 'pending' ? 'PENDING' : 'DEAD';
          const { rows } = await db.run((c) => c.query('SELECT aggregate_id FROM js_outbox WHERE status = $1', [status]));
          say({ id: req.id, ok: true, payments: rows.map((r) => r.aggregate_id) });
          break;
        }
        default:
          say({ id: req.id, ok: false, error: 'unknown op ' + req.op });
      }
    } catch (e) {
      say({ id: req.id, ok: false, error: oneLine(e) });
    }
  }
}

const roles = { producer, relay, consumer, operator };
const role = process.argv[process.argv.length - 1];
if (!roles[role]) {
  log('unknown role', role);
  process.exit(2);
}
roles[role]().catch((e) => { log(role + ':', e.stack || e); process.exit(1); });
