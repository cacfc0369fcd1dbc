-- A page read by its digests (crates/adapters-diesel/src/listing.rs) needs each row's position
-- and digest only: with the digest in the index that orders the page, PostgreSQL answers it from
-- the index alone (an index-only scan: no heap page visited where the visibility map allows).
-- Same keys as before, so every statement that used these indexes still can. No index write is
-- added: an update that changes a lot's item changes a column an index already names (the
-- condition of `*_listing_missing`), so it writes an entry into every index of its table anyway,
-- and an update that leaves the item as it was leaves its digest as it was too.
-- Building the indexes holds off writes to the three tables while it runs.
DROP INDEX green_lots_newest;
CREATE INDEX green_lots_newest ON green_lots (registration_date, id) INCLUDE (listing_digest);
DROP INDEX roasted_lots_newest;
CREATE INDEX roasted_lots_newest ON roasted_lots (roasted_date, id) INCLUDE (listing_digest);
DROP INDEX blended_lots_newest;
CREATE INDEX blended_lots_newest ON blended_lots (blended_date, id) INCLUDE (listing_digest);
