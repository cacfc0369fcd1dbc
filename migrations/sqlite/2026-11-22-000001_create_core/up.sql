CREATE TABLE settings (
    name TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

CREATE TABLE sequences (
    name TEXT PRIMARY KEY NOT NULL,
    last_value BIGINT NOT NULL CHECK (last_value >= 0)
);
INSERT INTO sequences (name, last_value) VALUES
    ('PG', 0), ('PR', 0), ('PB', 0), ('CU', 0), ('CC', 0), ('QC', 0);

CREATE TABLE accounts (
    client_id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    scopes TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP
);

CREATE TABLE access_tokens (
    token_hash TEXT PRIMARY KEY NOT NULL,
    client_id TEXT NOT NULL REFERENCES accounts (client_id),
    scopes TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX access_tokens_expires_at ON access_tokens (expires_at);

CREATE TABLE locations (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    external_id TEXT UNIQUE,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX locations_newest ON locations (created_at, id);

CREATE TABLE projects (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL UNIQUE,
    description TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX projects_newest ON projects (created_at, id);
