-- One GCRA bucket per key, shared by every server instance: the theoretical arrival time (TAT)
-- and the outcome of the last check, in microseconds on the database clock.
-- UNLOGGED: a check is a write on every request, and a bucket is worth no WAL flush (after a
-- crash the buckets start full again, which is what an idle client would have anyway).
CREATE UNLOGGED TABLE rate_limits (
    bucket TEXT PRIMARY KEY,
    tat BIGINT NOT NULL,
    checked_at BIGINT NOT NULL,
    allowed BOOLEAN NOT NULL
);
