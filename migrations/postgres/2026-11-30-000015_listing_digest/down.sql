ALTER TABLE blended_lots DROP COLUMN listing_digest;
ALTER TABLE roasted_lots DROP COLUMN listing_digest;
ALTER TABLE green_lots DROP COLUMN listing_digest;
