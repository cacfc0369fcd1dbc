DROP INDEX cupped_coffees_lot;
DROP TABLE shipments;
ALTER TABLE orders DROP COLUMN shipped_date;
DROP TRIGGER ledger_entries_no_delete;
DROP TRIGGER ledger_entries_no_update;
DROP TABLE ledger_entries;
