package dev.idempotent.inbox.spi.jdbc;

import dev.idempotent.inbox.Beta;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * How a store's column holds an instant. Every instant the core stores is already taken to the
 * millisecond, so both forms hold it exactly.
 */
@Beta
public enum TimeColumn {

    /** An integer of milliseconds since the epoch (SQLite). */
    EPOCH_MILLIS {
        @Override
        public void bind(PreparedStatement statement, int index, Instant instant) throws SQLException {
            statement.setLong(index, instant.toEpochMilli());
        }

        @Override
        public Instant read(ResultSet row, String column) throws SQLException {
            long millis = row.getLong(column);
            return row.wasNull() ? null : Instant.ofEpochMilli(millis);
        }
    },

    /**
     * A timestamp with time zone (PostgreSQL), read as a UTC {@link OffsetDateTime} and bound as
     * ISO 8601 text in UTC to a parameter of no declared type, which the server reads as the type
     * the statement gives it, such as the column's in an {@code INSERT}.
     */
    TIMESTAMP_UTC {
        // Text, not an OffsetDateTime: the PostgreSQL driver builds a new calendar for each statement
        // it binds one to, most of the time binding a claim took. Outside years 1 to 9999 the text
        // would have more digits or a sign, which PostgreSQL does not read; the driver does.
        private static final Instant FIRST = Instant.parse("0001-01-01T00:00:00Z");
        private static final Instant AFTER_LAST = Instant.parse("+10000-01-01T00:00:00Z");

        @Override
        public void bind(PreparedStatement statement, int index, Instant instant) throws SQLException {
            if (instant.isBefore(FIRST) || !instant.isBefore(AFTER_LAST)) {
                statement.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
            } else {
                statement.setObject(index, instant.toString(), Types.OTHER);
            }
        }

        @Override
        public Instant read(ResultSet row, String column) throws SQLException {
            OffsetDateTime time = row.getObject(column, OffsetDateTime.class);
            return time == null ? null : time.toInstant();
        }
    };

    /**
     * Binds {@code instant} to parameter {@code index}.
     *
     * @param statement the statement
     * @param index the parameter's index, from 1
     * @param instant the instant
     * @throws SQLException if the driver refuses it
     */
    public abstract void bind(PreparedStatement statement, int index, Instant instant) throws SQLException;

    /**
     * Reads the instant in {@code column} of the row at the cursor.
     *
     * @param row the result set, positioned on a row
     * @param column the column's name
     * @return the instant, or {@code null} if the column is SQL {@code NULL}
     * @throws SQLException if the column is missing or of another type
     */
    public abstract Instant read(ResultSet row, String column) throws SQLException;
}
