-- An event row takes its writer's transaction id from the insert itself, so a write stores its
-- events without first asking for the id in a statement of its own.
ALTER TABLE events ALTER COLUMN writer_xid SET DEFAULT (pg_current_xact_id()::text::bigint);
