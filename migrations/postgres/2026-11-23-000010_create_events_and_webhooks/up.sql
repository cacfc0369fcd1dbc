-- The change feed (an outbox written in each write's own transaction), webhooks and deliveries.
CREATE TABLE events (
    id TEXT PRIMARY KEY NOT NULL,
    -- Position in the feed; NULL until numbered (PostgreSQL numbers events once their
    -- transaction has finished, so numbers become visible in order).
    sequence BIGINT UNIQUE,
    -- The writer's transaction id (xid8) while the event waits for its number; see event.rs.
    writer_xid BIGINT,
    event_type TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    subject_type TEXT NOT NULL,
    operation TEXT NOT NULL,
    client_id TEXT NOT NULL,
    created_date TIMESTAMP NOT NULL
);
CREATE INDEX events_unnumbered ON events (writer_xid, id) WHERE sequence IS NULL;
CREATE INDEX events_created ON events (created_date);

CREATE TABLE webhooks (
    id TEXT PRIMARY KEY NOT NULL,
    url TEXT NOT NULL,
    -- Event types separated by spaces; empty for every type.
    types TEXT NOT NULL,
    description TEXT,
    status TEXT NOT NULL,
    secret TEXT NOT NULL,
    consecutive_failures INTEGER NOT NULL,
    -- The last event sequence queued for this webhook.
    given_sequence BIGINT NOT NULL,
    created_date TIMESTAMP NOT NULL
);
CREATE INDEX webhooks_newest ON webhooks (created_date, id);

CREATE TABLE deliveries (
    id TEXT PRIMARY KEY NOT NULL,
    webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL,
    http_status INTEGER,
    error TEXT,
    next_attempt_at TIMESTAMP NOT NULL,
    -- The claim of the instance sending it, until it expires.
    lease TEXT,
    lease_until TIMESTAMP,
    created_date TIMESTAMP NOT NULL,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'PENDING';
CREATE INDEX deliveries_newest ON deliveries (webhook_id, created_date, id);
CREATE INDEX deliveries_event ON deliveries (event_id);
