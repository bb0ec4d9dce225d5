/**
 * The seed's snack warehouse, runnable: the {@link dev.idempotent.inbox.examples.Warehouse} (on
 * SQLite or PostgreSQL) and the {@code inbox-examples} command line ({@code demo}, {@code serve},
 * {@code publish}).
 */
package dev.idempotent.inbox.examples;
