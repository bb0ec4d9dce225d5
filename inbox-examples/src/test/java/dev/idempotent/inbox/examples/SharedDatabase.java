package dev.idempotent.inbox.examples;

import org.jdbi.v3.core.Jdbi;

/** A server database of a test's own that several receivers share; dropped on {@link #close()}. */
interface SharedDatabase extends AutoCloseable {

    /** The {@code --db} URL of this database. */
    String url();

    /** How a warehouse on this database describes where it is: {@code PostgreSQL HOST:PORT/DB}, say. */
    String described();

    /** A Jdbi for reading what the receivers wrote. */
    Jdbi jdbi();

    @Override
    void close();
}
