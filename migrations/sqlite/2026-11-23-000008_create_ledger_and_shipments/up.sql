-- Traceability: the append-only ledger of weight changes, and what each order shipped from which lot.
CREATE TABLE ledger_entries (
    id TEXT PRIMARY KEY NOT NULL,
    lot_id TEXT NOT NULL,
    lot_type TEXT NOT NULL,
    kind TEXT NOT NULL,
    delta_micros BIGINT NOT NULL,
    weight_after_micros BIGINT NOT NULL CHECK (weight_after_micros >= 0),
    unit TEXT NOT NULL,
    reference_id TEXT,
    reference_type TEXT,
    operation TEXT NOT NULL,
    client_id TEXT NOT NULL,
    created_date TIMESTAMP NOT NULL
);
CREATE INDEX ledger_entries_newest ON ledger_entries (created_date, id);
CREATE INDEX ledger_entries_lot_newest ON ledger_entries (lot_id, created_date, id);
-- The genealogy walks transfers both ways.
CREATE INDEX ledger_entries_reference ON ledger_entries (reference_id);

ALTER TABLE orders ADD COLUMN shipped_date TIMESTAMP;

CREATE TABLE shipments (
    order_id TEXT NOT NULL REFERENCES orders (id),
    position INTEGER NOT NULL,
    sku TEXT NOT NULL,
    lot_id TEXT NOT NULL,
    lot_type TEXT NOT NULL,
    lot_number BIGINT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    weight_micros BIGINT NOT NULL CHECK (weight_micros > 0),
    weight_unit TEXT NOT NULL,
    shipped_date TIMESTAMP NOT NULL,
    PRIMARY KEY (order_id, position)
);
CREATE INDEX shipments_lot ON shipments (lot_id);
-- A trace lists the cuppings of the lots it reached.
CREATE INDEX cupped_coffees_lot ON cupped_coffees (lot_id);

-- Lots older than the ledger open it with the weight they hold now; the entry takes the lot's id.
INSERT INTO ledger_entries (id, lot_id, lot_type, kind, delta_micros, weight_after_micros, unit,
    reference_id, reference_type, operation, client_id, created_date)
SELECT id, id, 'INVENTORY_GREEN', 'OPENING', weight_micros, weight_micros, weight_unit, NULL, NULL,
    'migration', 'system', CURRENT_TIMESTAMP
FROM green_lots WHERE weight_micros > 0;
INSERT INTO ledger_entries (id, lot_id, lot_type, kind, delta_micros, weight_after_micros, unit,
    reference_id, reference_type, operation, client_id, created_date)
SELECT id, id, 'INVENTORY_ROAST', 'OPENING', weight_micros, weight_micros, weight_unit, NULL, NULL,
    'migration', 'system', CURRENT_TIMESTAMP
FROM roasted_lots WHERE weight_micros > 0;
INSERT INTO ledger_entries (id, lot_id, lot_type, kind, delta_micros, weight_after_micros, unit,
    reference_id, reference_type, operation, client_id, created_date)
SELECT id, id, 'INVENTORY_BLEND', 'OPENING', weight_micros, weight_micros, weight_unit, NULL, NULL,
    'migration', 'system', CURRENT_TIMESTAMP
FROM blended_lots WHERE weight_micros > 0;

-- Entries are never changed or deleted.
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN
    SELECT RAISE(ABORT, 'ledger entries are never changed');
END;
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
BEGIN
    SELECT RAISE(ABORT, 'ledger entries are never deleted');
END;
