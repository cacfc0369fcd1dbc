DROP INDEX blended_lots_newest;
CREATE INDEX blended_lots_newest ON blended_lots (blended_date, id);
DROP INDEX roasted_lots_newest;
CREATE INDEX roasted_lots_newest ON roasted_lots (roasted_date, id);
DROP INDEX green_lots_newest;
CREATE INDEX green_lots_newest ON green_lots (registration_date, id);
