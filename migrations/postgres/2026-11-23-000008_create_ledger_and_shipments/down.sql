DROP INDEX cupped_coffees_lot;
DROP TABLE shipments;
ALTER TABLE orders DROP COLUMN shipped_date;
DROP TABLE ledger_entries;
DROP FUNCTION ledger_entries_append_only();
