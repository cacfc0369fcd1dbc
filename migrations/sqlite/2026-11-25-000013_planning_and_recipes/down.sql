DROP INDEX roasted_lots_profile_roasted;
DROP TABLE product_recipes;
DROP TABLE profile_planning;
