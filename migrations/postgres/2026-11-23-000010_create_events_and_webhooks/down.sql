DROP TABLE deliveries;
DROP TABLE webhooks;
DROP TABLE events;
