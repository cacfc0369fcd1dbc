-- Nothing to undo on SQLite.
SELECT 1;
