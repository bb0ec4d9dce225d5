/**
 * What the Jdbi-based stores share inside their transactions: the guard that refuses an effect's
 * attempt to end its transaction, the watcher that remembers a statement an effect caught, and the
 * joined call's savepoint protocol ({@link dev.idempotent.inbox.jdbi.spi.JoinedTransaction}) with
 * what the joined calls on one connection know of each other ({@link dev.idempotent.inbox.jdbi.spi.JoinedCalls}).
 */
package dev.idempotent.inbox.jdbi.spi;
