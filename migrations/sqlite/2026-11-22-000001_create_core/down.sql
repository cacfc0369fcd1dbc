DROP TABLE projects;
DROP TABLE locations;
DROP TABLE access_tokens;
DROP TABLE accounts;
DROP TABLE sequences;
DROP TABLE settings;
