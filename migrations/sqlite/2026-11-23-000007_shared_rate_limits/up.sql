-- Unused on SQLite (one process keeps its limiter in memory); kept so both schemas match.
-- One GCRA bucket per key, shared by every server instance: the theoretical arrival time (TAT)
-- and the outcome of the last check, in microseconds on the database clock.
CREATE TABLE rate_limits (
    bucket TEXT PRIMARY KEY,
    tat BIGINT NOT NULL,
    checked_at BIGINT NOT NULL,
    allowed BOOLEAN NOT NULL
);
