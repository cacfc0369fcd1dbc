-- PostgreSQL only (its migration of the same name): SQLite has no digest column. Kept so both
-- backends number their migrations alike.
SELECT 1;
