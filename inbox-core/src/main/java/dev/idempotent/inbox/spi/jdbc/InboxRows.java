package dev.idempotent.inbox.spi.jdbc;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.ContentType;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.SchemaMode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What every JDBC store does the same way with table {@code inbox_message}: the order of its
 * columns, binding a claim, reading a row back, and loading the schema script shipped beside the
 * store. A store supplies its SQL, its {@link TimeColumn} and its error translation.
 */
@Beta
public final class InboxRows {

    /**
     * The columns of {@code inbox_message} in the order {@link #bindClaim} binds them, for a
     * store's {@code INSERT INTO inbox_message (...) VALUES (?, ?, ?, ?, ?, ?, ?, ?)}.
     */
    public static final String COLUMNS = "inbox, id, fingerprint_algorithm, content_type, content_type_version,"
            + " fingerprint, content, received_at";

    /** The placeholders for {@link #COLUMNS}. */
    public static final String PLACEHOLDERS = "?, ?, ?, ?, ?, ?, ?, ?";

    private InboxRows() {}

    /**
     * A read a store runs on a connection it opened for it.
     *
     * @param <T> what the read returns
     */
    @FunctionalInterface
    public interface Query<T> {
        /**
         * Runs the read.
         *
         * @param connection the connection to read through
         * @return what was read
         * @throws SQLException if the database failed
         */
        T run(Connection connection) throws SQLException;
    }

    /**
     * Binds a claim's values to parameters 1 to 8 of {@code claim}, in the order of {@link #COLUMNS}.
     *
     * @param claim the store's claim statement
     * @param inbox the inbox's name
     * @param id the id
     * @param fingerprint the content's fingerprint
     * @param content the content to keep, or {@code null} to keep none
     * @param receivedAt the receive time
     * @param time how the store's {@code received_at} column holds an instant
     * @throws SQLException if the driver refuses a value
     */
    public static void bindClaim(PreparedStatement claim, String inbox, String id, Fingerprint fingerprint,
            Content content, Instant receivedAt, TimeColumn time) throws SQLException {
        claim.setString(1, inbox);
        claim.setString(2, id);
        claim.setInt(3, fingerprint.algorithm());
        claim.setString(4, fingerprint.contentType().name());
        claim.setInt(5, fingerprint.contentType().version());
        claim.setBytes(6, fingerprint.digest());
        claim.setBytes(7, content == null ? null : content.bytes());
        time.bind(claim, 8, receivedAt);
    }

    /**
     * Reads the row at the cursor of a result set that has the columns of {@link #COLUMNS}, by name.
     *
     * @param row the result set, positioned on a row
     * @param time how the store's {@code received_at} column holds an instant
     * @return the record
     * @throws SQLException if a column is missing or of another type
     */
    public static InboxRecord read(ResultSet row, TimeColumn time) throws SQLException {
        ContentType type = new ContentType(row.getString("content_type"), row.getInt("content_type_version"));
        return InboxRecord.stored(
                row.getString("inbox"),
                row.getString("id"),
                new Fingerprint(row.getInt("fingerprint_algorithm"), type, row.getBytes("fingerprint")),
                time.read(row, "received_at"),
                row.getBytes("content"));
    }

    /**
     * Reads the committed record of {@code id}, as {@code InboxStore.find} answers.
     *
     * @param connection a connection outside any write transaction of the inbox
     * @param inbox the inbox's name
     * @param id the id
     * @param time how the store's time columns hold an instant
     * @return the record, or empty
     * @throws SQLException if the database failed
     */
    public static Optional<InboxRecord> find(Connection connection, String inbox, String id, TimeColumn time)
            throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(
                "SELECT " + COLUMNS + " FROM inbox_message WHERE inbox = ? AND id = ?")) {
            select.setString(1, inbox);
            select.setString(2, id);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? Optional.of(read(row, time)) : Optional.empty();
            }
        }
    }

    /**
     * Reads the horizon of {@code inbox} as {@code connection} sees it.
     *
     * @param connection a connection, in a transaction of the inbox's or outside any
     * @param inbox the inbox's name
     * @param time how the store's time columns hold an instant
     * @return the horizon, or empty if the inbox was never purged
     * @throws SQLException if the database failed
     */
    public static Optional<Instant> horizon(Connection connection, String inbox, TimeColumn time) throws SQLException {
        return instant(connection, "SELECT horizon AS t FROM inbox_horizon WHERE inbox = ?", inbox, time);
    }

    /**
     * Reads the receive time of the oldest row of {@code inbox}.
     *
     * @param connection a connection outside any write transaction of the inbox
     * @param inbox the inbox's name
     * @param time how the store's time columns hold an instant
     * @return that time, or empty if the inbox has no rows
     * @throws SQLException if the database failed
     */
    public static Optional<Instant> oldestReceivedAt(Connection connection, String inbox, TimeColumn time)
            throws SQLException {
        return instant(connection, "SELECT MIN(received_at) AS t FROM inbox_message WHERE inbox = ?", inbox, time);
    }

    private static Optional<Instant> instant(Connection connection, String sql, String inbox, TimeColumn time)
            throws SQLException {
        try (PreparedStatement query = connection.prepareStatement(sql)) {
            query.setString(1, inbox);
            try (ResultSet row = query.executeQuery()) {
                return row.next() ? Optional.ofNullable(time.read(row, "t")) : Optional.empty();
            }
        }
    }

    /**
     * The text of a schema script shipped beside {@code store}.
     *
     * @param store a class of the store's jar, whose package holds the script
     * @param resource the script's path relative to that package, such as {@link #SCHEMA_SCRIPT}
     * @return the script, decoded as UTF-8
     * @throws IllegalStateException if the jar lacks it
     */
    public static String script(Class<?> store, String resource) {
        try (InputStream in = store.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing beside " + store.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The schema script of version 1, relative to the store's package: the script the store runs
     * under {@link SchemaMode#CREATE}, and the Flyway migration and Liquibase change set the jar
     * ships for teams that migrate with a tool, all one file.
     */
    public static final String SCHEMA_SCRIPT = "flyway/V0_1__inbox_schema.sql";

    /**
     * The script of table {@code inbox_kafka_offset}, relative to the store's package: schema
     * component {@code kafka_offset}, version 1, the positions of inbox-kafka's offsets kept in the
     * database. Schema mode {@code CREATE} runs it right after
     * {@link #SCHEMA_SCRIPT} when it creates the schema; Flyway runs it as migration 0.2. A schema
     * already in place gets it only from a migration tool (or by hand), as {@code CREATE} runs no
     * DDL over a schema in place.
     */
    public static final String KAFKA_OFFSET_SCRIPT = "flyway/V0_2__kafka_offset.sql";

    /** The inbox's tables in schema version 1. */
    public static final List<String> TABLES = List.of("inbox_schema", "inbox_message", "inbox_horizon");

    /**
     * The check of {@link SchemaMode#VALIDATE}: every table of {@link #TABLES} exists and the
     * recorded version is the one the store writes.
     *
     * @param recordedVersion the version recorded in {@code inbox_schema}, or {@code null} when
     *     that table or its row is absent
     * @param knownVersion the schema version this library writes
     * @param tableExists whether a table of the given name exists where the inbox works
     * @param where where the inbox works, for the message, such as {@code "schema public"}
     * @param migration how to create the schema, for the message, such as the Flyway location
     * @throws InboxStorageException of kind {@link InboxStorageException.Kind#SCHEMA_MISSING} for a
     *     missing table, a missing or older version; of kind {@code NEWER_SCHEMA} for a newer one
     */
    public static void validateSchema(Integer recordedVersion, int knownVersion, Predicate<String> tableExists,
            String where, String migration) {
        String advice = "; run the inbox's migration (" + migration + "), or build the inbox with schema mode CREATE";
        for (String table : TABLES) {
            if (!tableExists.test(table)) {
                throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING,
                        "the inbox's table " + table + " is missing in " + where + advice, null);
            }
        }
        if (recordedVersion == null) {
            throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING,
                    "inbox_schema in " + where + " records no version for component 'inbox'" + advice, null);
        }
        refuseNewerSchema(recordedVersion, knownVersion);
        if (recordedVersion < knownVersion) {
            throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING,
                    "inbox_schema in " + where + " records version " + recordedVersion + ", older than version "
                            + knownVersion + " this library needs" + advice, null);
        }
    }

    /**
     * Refuses a schema version newer than this library knows, which every schema mode must: the
     * stores' {@code CREATE} finds an existing schema with it, {@code VALIDATE} through
     * {@link #validateSchema}.
     *
     * @param recordedVersion the version recorded in the database
     * @param knownVersion the newest version this library's store knows
     * @throws InboxStorageException of kind {@code NEWER_SCHEMA} if {@code recordedVersion} is newer
     */
    public static void refuseNewerSchema(int recordedVersion, int knownVersion) {
        if (recordedVersion > knownVersion) {
            throw new InboxStorageException(InboxStorageException.Kind.NEWER_SCHEMA,
                    "the database holds inbox schema version " + recordedVersion + ", written by a newer version of"
                            + " this library; this version knows schema " + knownVersion + " at most", null);
        }
    }
}
