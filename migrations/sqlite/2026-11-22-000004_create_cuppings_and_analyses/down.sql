DROP TABLE physical_analyses;
DROP TABLE cupping_results;
DROP TABLE cupped_coffees;
DROP TABLE cuppings;
