CREATE TABLE products (
    id TEXT PRIMARY KEY NOT NULL,
    external_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX products_newest ON products (created_at, id);

-- A SKU belongs to one product for good: it is the key. Package sizes in micrograms.
CREATE TABLE product_variants (
    sku TEXT PRIMARY KEY NOT NULL,
    product_id TEXT NOT NULL REFERENCES products (id),
    position INTEGER NOT NULL,
    package_size_ug BIGINT NOT NULL CHECK (package_size_ug > 0),
    UNIQUE (product_id, position)
);

CREATE TABLE orders (
    id TEXT PRIMARY KEY NOT NULL,
    external_id TEXT NOT NULL UNIQUE,
    order_date TIMESTAMP NOT NULL,
    customer TEXT,
    customer_type TEXT CHECK (customer_type IN ('RETAIL', 'WHOLESALE')),
    status TEXT NOT NULL CHECK (status IN ('OPEN', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED')),
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX orders_newest ON orders (order_date, id);
CREATE INDEX orders_status_newest ON orders (status, order_date, id);

CREATE TABLE order_items (
    order_id TEXT NOT NULL REFERENCES orders (id),
    position INTEGER NOT NULL,
    sku TEXT NOT NULL REFERENCES product_variants (sku),
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_id, position)
);
CREATE INDEX order_items_sku ON order_items (sku);
