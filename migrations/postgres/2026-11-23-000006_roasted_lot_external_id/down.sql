DROP INDEX roasted_lots_external_id;
ALTER TABLE roasted_lots DROP COLUMN external_id;
