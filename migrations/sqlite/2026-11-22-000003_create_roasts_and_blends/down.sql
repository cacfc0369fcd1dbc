DROP TABLE blend_sources;
DROP TABLE blended_lots;
DROP TABLE roast_curves;
DROP TABLE roast_details;
DROP TABLE roast_sources;
DROP TABLE roasted_lots;
DROP TABLE profiles;
