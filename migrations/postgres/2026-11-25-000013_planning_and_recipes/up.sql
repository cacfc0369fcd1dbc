-- Planning data of a profile (api-decisions §15): kept beside the profile row, which never
-- changes once stored. A NULL expected loss is derived from the profile's roasts.
CREATE TABLE profile_planning (
    profile_id TEXT PRIMARY KEY NOT NULL REFERENCES profiles (id),
    expected_loss_micros BIGINT,
    batch_min_micros BIGINT,
    batch_min_unit TEXT,
    batch_max_micros BIGINT,
    batch_max_unit TEXT,
    updated_at TIMESTAMP NOT NULL
);

-- The recipe of a product: its profiles and their percentages, as JSON in their order.
CREATE TABLE product_recipes (
    product_id TEXT PRIMARY KEY NOT NULL REFERENCES products (id),
    components TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

-- The last roasts of a profile (derived expected loss) and its roasted stock on hand.
CREATE INDEX roasted_lots_profile_roasted ON roasted_lots (profile_id, roasted_date, id);
