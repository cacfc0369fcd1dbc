-- The roastUUID of the Artisan log a roast was imported from; unique, so a retried import finds
-- the lot it made instead of roasting twice.
ALTER TABLE roasted_lots ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX roasted_lots_external_id ON roasted_lots (external_id);
