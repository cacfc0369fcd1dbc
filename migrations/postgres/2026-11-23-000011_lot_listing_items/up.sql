-- The listing read model (docs/performance.md): each lot keeps the exact JSON of its item in
-- listGreenLots / listRoastedLots / getRoastedLotsByIds / listBlendedLots, rewritten in the
-- transaction of every write to the lot. NULL until rendered (rows stored before this
-- migration are rendered at start-up); a page with a NULL item is answered from the domain.
ALTER TABLE green_lots ADD COLUMN listing_item TEXT;
ALTER TABLE roasted_lots ADD COLUMN listing_item TEXT;
ALTER TABLE blended_lots ADD COLUMN listing_item TEXT;
-- Start-up looks for items still to render: these stay empty once every item is rendered, so
-- the look is an empty index probe, not a scan of every lot.
CREATE INDEX green_lots_listing_missing ON green_lots (id) WHERE listing_item IS NULL;
CREATE INDEX roasted_lots_listing_missing ON roasted_lots (id) WHERE listing_item IS NULL;
CREATE INDEX blended_lots_listing_missing ON blended_lots (id) WHERE listing_item IS NULL;
