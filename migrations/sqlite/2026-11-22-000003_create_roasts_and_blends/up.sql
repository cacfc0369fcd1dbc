-- Processing profiles. Components (percentage in micro-units and green lot references) are one
-- JSON text: a profile is always read whole and never queried by component.
CREATE TABLE profiles (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    external_id TEXT UNIQUE,
    profile_group TEXT,
    components TEXT NOT NULL,
    reference_roast_id TEXT,
    projects TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE roasted_lots (
    id TEXT PRIMARY KEY NOT NULL,
    lot_number BIGINT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    weight_micros BIGINT NOT NULL CHECK (weight_micros >= 0),
    weight_unit TEXT NOT NULL,
    roasted_micros BIGINT NOT NULL CHECK (roasted_micros > 0),
    consumed_at TIMESTAMP,
    profile_id TEXT REFERENCES profiles (id),
    location_id TEXT NOT NULL REFERENCES locations (id),
    roasted_date TIMESTAMP NOT NULL,
    projects TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    last_modified_at TIMESTAMP NOT NULL
);
CREATE INDEX roasted_lots_newest ON roasted_lots (roasted_date, id);

-- Lineage: the green lots of a roast and the weight each gave, in the order given.
CREATE TABLE roast_sources (
    roasted_lot_id TEXT NOT NULL REFERENCES roasted_lots (id),
    position INTEGER NOT NULL,
    green_lot_id TEXT NOT NULL,
    name TEXT NOT NULL,
    external_id TEXT,
    used_micros BIGINT NOT NULL CHECK (used_micros > 0),
    used_unit TEXT NOT NULL,
    PRIMARY KEY (roasted_lot_id, position)
);
CREATE INDEX roast_sources_green_lot ON roast_sources (green_lot_id);

CREATE TABLE roast_details (
    roasted_lot_id TEXT PRIMARY KEY NOT NULL REFERENCES roasted_lots (id),
    roast_technician TEXT,
    note TEXT,
    start_temperature_micros BIGINT,
    start_temperature_unit TEXT,
    end_temperature_micros BIGINT,
    end_temperature_unit TEXT,
    roast_value_micros BIGINT,
    roast_value_unit TEXT,
    roast_value2_micros BIGINT,
    roast_value2_unit TEXT,
    roast_duration_micros BIGINT,
    roast_duration_unit TEXT,
    first_crack_time_micros BIGINT,
    first_crack_time_unit TEXT,
    color_change_time_micros BIGINT,
    color_change_time_unit TEXT,
    machine TEXT
);

-- One row per curve; its data points are one compact JSON text of [time_ms, value_micros] pairs.
CREATE TABLE roast_curves (
    roasted_lot_id TEXT NOT NULL REFERENCES roasted_lots (id),
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    unit TEXT NOT NULL,
    data_points TEXT NOT NULL,
    PRIMARY KEY (roasted_lot_id, position)
);

CREATE TABLE blended_lots (
    id TEXT PRIMARY KEY NOT NULL,
    lot_number BIGINT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    weight_micros BIGINT NOT NULL CHECK (weight_micros >= 0),
    weight_unit TEXT NOT NULL,
    consumed_at TIMESTAMP,
    location_id TEXT NOT NULL REFERENCES locations (id),
    blended_date TIMESTAMP NOT NULL,
    projects TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    last_modified_at TIMESTAMP NOT NULL
);
CREATE INDEX blended_lots_newest ON blended_lots (blended_date, id);

-- Lineage: the roasted lots of a blend and the weight each gave, in the order given.
CREATE TABLE blend_sources (
    blended_lot_id TEXT NOT NULL REFERENCES blended_lots (id),
    position INTEGER NOT NULL,
    roasted_lot_id TEXT NOT NULL REFERENCES roasted_lots (id),
    name TEXT NOT NULL,
    external_id TEXT,
    used_micros BIGINT NOT NULL CHECK (used_micros > 0),
    used_unit TEXT NOT NULL,
    PRIMARY KEY (blended_lot_id, position)
);
CREATE INDEX blend_sources_roasted_lot ON blend_sources (roasted_lot_id);
