DROP INDEX blended_lots_listing_missing;
DROP INDEX roasted_lots_listing_missing;
DROP INDEX green_lots_listing_missing;
ALTER TABLE blended_lots DROP COLUMN listing_item;
ALTER TABLE roasted_lots DROP COLUMN listing_item;
ALTER TABLE green_lots DROP COLUMN listing_item;
