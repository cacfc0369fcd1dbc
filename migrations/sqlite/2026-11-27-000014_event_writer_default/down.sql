-- Nothing on SQLite: events are numbered as they are stored (one writer at a time), and carry
-- no writer transaction id. The migration exists so both databases keep the same versions.
SELECT 1;
