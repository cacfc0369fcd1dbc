-- Each listing item's digest, computed by PostgreSQL from the item itself, so no writer (nor an
-- older instance during an upgrade) can store an item without it. A page reads the digests, not
-- the items: an instance answers from the items it keeps by (lot id, digest) and reads only the
-- ones it does not hold (crates/adapters-diesel/src/item_cache.rs). MD5 as a content key, not
-- for secrecy: a collision would need two items of one lot, both written by its clients.
ALTER TABLE green_lots ADD COLUMN listing_digest uuid
    GENERATED ALWAYS AS (md5(listing_item)::uuid) STORED;
ALTER TABLE roasted_lots ADD COLUMN listing_digest uuid
    GENERATED ALWAYS AS (md5(listing_item)::uuid) STORED;
ALTER TABLE blended_lots ADD COLUMN listing_digest uuid
    GENERATED ALWAYS AS (md5(listing_item)::uuid) STORED;
