-- EUDR due diligence of source green lots (api-decisions §12), one row per lot, replaced whole.
-- `document` is JSON written by the domain: the plots keep every coordinate's digits as sent.
-- `statement_count` lets completeness be read without parsing the document.
CREATE TABLE green_lot_due_diligence (
    green_lot_id TEXT PRIMARY KEY NOT NULL REFERENCES green_lots (id),
    document TEXT NOT NULL,
    statement_count INTEGER NOT NULL CHECK (statement_count >= 0),
    updated_date TIMESTAMP NOT NULL
);
