-- An application's own first migration, for the tests of the inbox's migration beside it.
CREATE TABLE stock (id INTEGER PRIMARY KEY, total BIGINT NOT NULL);
