CREATE TABLE green_lots (
    id TEXT PRIMARY KEY NOT NULL,
    origin_id TEXT NOT NULL,
    lot_number BIGINT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    ico_number TEXT,
    external_id TEXT UNIQUE,
    weight_micros BIGINT NOT NULL CHECK (weight_micros >= 0),
    weight_unit TEXT NOT NULL,
    consumed_at TIMESTAMP,
    price_micros BIGINT,
    price_currency TEXT,
    location_id TEXT REFERENCES locations (id),
    projects TEXT NOT NULL,
    details TEXT NOT NULL,
    registration_date TIMESTAMP NOT NULL,
    last_modified_date TIMESTAMP NOT NULL
);
CREATE INDEX green_lots_newest ON green_lots (registration_date, id);
CREATE INDEX green_lots_last_modified ON green_lots (last_modified_date);
CREATE INDEX green_lots_origin_location ON green_lots (origin_id, location_id);
-- At most one active lot of an origin per location.
CREATE UNIQUE INDEX green_lots_one_active_per_location ON green_lots (origin_id, location_id)
    WHERE consumed_at IS NULL AND location_id IS NOT NULL;
