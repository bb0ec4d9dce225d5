package dev.idempotent.inbox.spi.jdbc;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.ContentType;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxTables;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;

/**
 * What every JDBC store does the same way with its table of records ({@code inbox_message} by
 * default, see {@link InboxTables}): the order of its columns, binding a claim, reading a row back,
 * and loading a script shipped beside the store. A store supplies its SQL, its {@link TimeColumn}
 * and its error translation.
 */
@Beta
public final class InboxRows {

    /**
     * The columns of the table of records in the order {@link #bindClaim} binds them, for a
     * store's {@code INSERT INTO inbox_message (...) VALUES (?, ?, ?, ?, ?, ?, ?, ?)}.
     */
    public static final String COLUMNS = "inbox, id, fingerprint_algorithm, content_type, content_type_version,"
            + " fingerprint, content, received_at";

    /**
     * The columns of a stored result, added by schema step 0.4 ({@code V0_4__stored_results}):
     * all {@code NULL} on a record without one; a stored {@code null} has a type and no bytes.
     * {@link #read} reads them with {@link #COLUMNS}, so a store's reads select both lists.
     */
    public static final String RESULT_COLUMNS = "result_type, result_type_version, result";

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
     * Reads the row at the cursor of a result set that has the columns of {@link #COLUMNS} and
     * {@link #RESULT_COLUMNS}, by name.
     *
     * @param row the result set, positioned on a row
     * @param time how the store's {@code received_at} column holds an instant
     * @return the record
     * @throws SQLException if a column is missing or of another type
     */
    public static InboxRecord read(ResultSet row, TimeColumn time) throws SQLException {
        ContentType type = new ContentType(row.getString("content_type"), row.getInt("content_type_version"));
        String resultType = row.getString("result_type");
        EncodedResult result = resultType == null
                ? null : new EncodedResult(resultType, row.getInt("result_type_version"), row.getBytes("result"));
        return InboxRecord.stored(
                row.getString("inbox"),
                row.getString("id"),
                new Fingerprint(row.getInt("fingerprint_algorithm"), type, row.getBytes("fingerprint")),
                time.read(row, "received_at"),
                row.getBytes("content"),
                result);
    }

    /**
     * Binds a result to parameters 1 to 3 of {@code update}, in the order of {@link #RESULT_COLUMNS},
     * for a store's {@code UPDATE inbox_message SET result_type = ?, result_type_version = ?,
     * result = ? WHERE inbox = ? AND id = ?}.
     *
     * @param update the store's statement
     * @param result the result
     * @throws SQLException if the driver refuses a value
     */
    public static void bindResult(PreparedStatement update, EncodedResult result) throws SQLException {
        update.setString(1, result.type());
        update.setInt(2, result.version());
        update.setBytes(3, result.bytes());
    }

    /**
     * Reads the committed record of {@code id}, as {@code InboxStore.find} answers.
     *
     * @param connection a connection outside any write transaction of the inbox
     * @param tables the inbox's table names
     * @param inbox the inbox's name
     * @param id the id
     * @param time how the store's time columns hold an instant
     * @return the record, or empty
     * @throws SQLException if the database failed
     */
    public static Optional<InboxRecord> find(Connection connection, InboxTables tables, String inbox, String id,
            TimeColumn time) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(
                "SELECT " + COLUMNS + ", " + RESULT_COLUMNS + " FROM " + tables.messageTable() + " WHERE inbox = ? AND id = ?")) {
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
     * @param tables the inbox's table names
     * @param inbox the inbox's name
     * @param time how the store's time columns hold an instant
     * @return the horizon, or empty if the inbox was never purged
     * @throws SQLException if the database failed
     */
    public static Optional<Instant> horizon(Connection connection, InboxTables tables, String inbox, TimeColumn time)
            throws SQLException {
        return instant(connection, "SELECT horizon AS t FROM " + tables.horizonTable() + " WHERE inbox = ?", inbox,
                time);
    }

    /**
     * Reads the receive time of the oldest row of {@code inbox}.
     *
     * @param connection a connection outside any write transaction of the inbox
     * @param tables the inbox's table names
     * @param inbox the inbox's name
     * @param time how the store's time columns hold an instant
     * @return that time, or empty if the inbox has no rows
     * @throws SQLException if the database failed
     */
    public static Optional<Instant> oldestReceivedAt(Connection connection, InboxTables tables, String inbox,
            TimeColumn time) throws SQLException {
        return instant(connection, "SELECT MIN(received_at) AS t FROM " + tables.messageTable() + " WHERE inbox = ?",
                inbox, time);
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
     * The text of a script shipped beside {@code store}.
     *
     * @param store a class of the store's jar, whose package holds the script
     * @param resource the script's path relative to that package
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
}
