-- The producer's tables: the business row and its outbox row are written in
-- one transaction (DESIGN §2). Column names follow the seed's runtime.sql.
CREATE TABLE IF NOT EXISTS payments (
    id           text PRIMARY KEY,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL,
    created_at   timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS outbox_events (
    id               uuid PRIMARY KEY,
    aggregate_id     text NOT NULL,
    event_type       text NOT NULL,
    sequence         bigint NOT NULL,
    payload          jsonb NOT NULL,
    status           text NOT NULL DEFAULT 'PENDING'
                     CHECK (status IN ('PENDING', 'PUBLISHING', 'PUBLISHED', 'FAILED', 'DEAD')),
    attempts         integer NOT NULL DEFAULT 0,
    claim_id         uuid,
    claim_expires_at timestamptz,
    available_at     timestamptz NOT NULL,
    created_at       timestamptz NOT NULL,
    published_at     timestamptz,
    last_error       text
);

-- Serve both branches of the claim query and GetNextOutboxAttemptAt.
CREATE INDEX IF NOT EXISTS outbox_events_due_idx
    ON outbox_events (available_at, created_at) WHERE status IN ('PENDING', 'FAILED');
CREATE INDEX IF NOT EXISTS outbox_events_lease_idx
    ON outbox_events (claim_expires_at) WHERE status = 'PUBLISHING';

-- The consumer's tables, kept apart as a second system's would be: the inbox
-- (dedupe by event_id) and the merchant ledger, whose business key is unique.
CREATE SCHEMA IF NOT EXISTS merchant;

CREATE TABLE IF NOT EXISTS merchant.inbox (
    event_id    uuid PRIMARY KEY,
    received_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE IF NOT EXISTS merchant.ledger (
    id           bigserial PRIMARY KEY,
    payment_id   text NOT NULL UNIQUE,
    event_id     uuid NOT NULL,
    merchant_id  text NOT NULL,
    amount_cents bigint NOT NULL
);
