CREATE TABLE IF NOT EXISTS stock (
    item     TEXT    NOT NULL PRIMARY KEY,
    total    INTEGER NOT NULL,
    receipts INTEGER NOT NULL
);
INSERT OR IGNORE INTO stock (item, total, receipts) VALUES ('snack', 0, 0);
