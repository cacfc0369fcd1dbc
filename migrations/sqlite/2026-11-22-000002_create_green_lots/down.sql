DROP TABLE green_lots;
