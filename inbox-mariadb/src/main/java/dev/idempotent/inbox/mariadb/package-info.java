/**
 * The MariaDB adapter: {@link dev.idempotent.inbox.mariadb.MariaDbInbox}, over Jdbi and a MariaDB
 * (or MySQL) JDBC driver.
 */
package dev.idempotent.inbox.mariadb;
