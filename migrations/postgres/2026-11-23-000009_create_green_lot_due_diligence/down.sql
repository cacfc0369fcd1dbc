DROP TABLE green_lot_due_diligence;
