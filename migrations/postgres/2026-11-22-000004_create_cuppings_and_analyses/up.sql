-- Lots are referenced by id and type (green, roasted or blended); existence is checked by the
-- use cases, since a reference may point at any of three tables.
CREATE TABLE cuppings (
    id TEXT PRIMARY KEY NOT NULL,
    cupping_number BIGINT NOT NULL UNIQUE,
    start_date TIMESTAMP NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('DRAFT', 'OPEN', 'CLOSED')),
    cupping_sheet TEXT NOT NULL
);
CREATE INDEX cuppings_newest ON cuppings (start_date, id);

CREATE TABLE cupped_coffees (
    id TEXT PRIMARY KEY NOT NULL,
    cupping_id TEXT NOT NULL REFERENCES cuppings (id),
    position INTEGER NOT NULL,
    coffee_number BIGINT NOT NULL UNIQUE,
    lot_id TEXT NOT NULL,
    lot_type TEXT NOT NULL,
    UNIQUE (cupping_id, position)
);

-- Scores in micro-units; sensorial attributes as a JSON array of {"name", "score"} (micro-units).
CREATE TABLE cupping_results (
    id TEXT PRIMARY KEY NOT NULL,
    cupped_coffee_id TEXT NOT NULL REFERENCES cupped_coffees (id),
    final_score BIGINT NOT NULL,
    scoring_state TEXT NOT NULL CHECK (scoring_state IN ('INCLUDED', 'EXCLUDED')),
    evaluator TEXT,
    note TEXT,
    sensorial_attributes TEXT NOT NULL,
    recorded_at TIMESTAMP NOT NULL
);
CREATE INDEX cupping_results_by_coffee ON cupping_results (cupped_coffee_id, recorded_at, id);

-- Measures in micro-units; screen sizes and defects as JSON arrays.
CREATE TABLE physical_analyses (
    id TEXT PRIMARY KEY NOT NULL,
    analysis_number BIGINT NOT NULL UNIQUE,
    analysis_date TIMESTAMP NOT NULL,
    lot_id TEXT NOT NULL,
    lot_type TEXT NOT NULL,
    moisture BIGINT,
    water_activity BIGINT,
    density BIGINT,
    screen_sizes TEXT NOT NULL,
    defects TEXT NOT NULL,
    note TEXT,
    evaluator TEXT
);
CREATE INDEX physical_analyses_newest ON physical_analyses (analysis_date, id);
CREATE INDEX physical_analyses_by_lot ON physical_analyses (lot_id, analysis_date, id);
