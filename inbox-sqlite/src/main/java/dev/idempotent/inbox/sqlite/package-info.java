/**
 * The SQLite adapter: {@link dev.idempotent.inbox.sqlite.SqliteInbox}, over Jdbi and sqlite-jdbc.
 */
package dev.idempotent.inbox.sqlite;
