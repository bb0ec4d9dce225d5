/**
 * What the Jdbi-based stores share inside their transactions: the guard that refuses an effect's
 * attempt to end its transaction, and the watcher that remembers a statement an effect caught.
 */
package dev.idempotent.inbox.jdbi.spi;
