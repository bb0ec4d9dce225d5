/**
 * The PostgreSQL adapter: {@link dev.idempotent.inbox.postgres.PostgresInbox}, over Jdbi and the
 * PostgreSQL JDBC driver.
 */
package dev.idempotent.inbox.postgres;
