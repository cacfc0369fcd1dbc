DROP TABLE order_items;
DROP TABLE orders;
DROP TABLE product_variants;
DROP TABLE products;
