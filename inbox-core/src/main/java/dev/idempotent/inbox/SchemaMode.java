package dev.idempotent.inbox;

/**
 * What an inbox does about its tables when it is built. Teams whose migrations run through a tool
 * of their own (Flyway, Liquibase, a DBA's script) choose {@link #VALIDATE}, so that the
 * application's database user needs no DDL rights and a missing migration stops the start-up.
 */
public enum SchemaMode {
    /**
     * Creates the inbox's tables if the database has none yet, from the same script the adapter
     * ships for migration tools; a schema already in place is only checked for its version. The
     * default.
     */
    CREATE,
    /**
     * Runs no DDL: checks that the inbox's tables are there and that the schema version recorded
     * is the one this library writes, or fails the build with {@link InboxStorageException} of
     * kind {@link InboxStorageException.Kind#SCHEMA_MISSING} (or {@code NEWER_SCHEMA}).
     */
    VALIDATE,
    /**
     * Neither creates nor checks anything; a missing table shows as the database's error when the
     * inbox first needs it (SQLite's adapter prepares its statements when it is built, PostgreSQL's
     * and MariaDB's at the first call). For schemas managed entirely outside the application.
     */
    NONE
}
