/**
 * The idempotent inbox: what applications use.
 *
 * <p>An {@link dev.idempotent.inbox.Inbox} records "id X was received, with this content" in the
 * same database transaction as the business change, so at-least-once delivery yields exactly-once
 * effects. Adapters (SQLite, PostgreSQL, MariaDB) live in their own modules.
 */
package dev.idempotent.inbox;
