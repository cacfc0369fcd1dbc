-- PostgreSQL only (its migration of the same name): SQLite pages read their items in the
-- process, so there is no digest to read in their place. Kept so both backends number their
-- migrations alike.
SELECT 1;
