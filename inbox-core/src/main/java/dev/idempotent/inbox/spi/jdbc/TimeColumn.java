package dev.idempotent.inbox.spi.jdbc;

import dev.idempotent.inbox.Beta;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
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
        // it binds one to, most of the time binding a claim took. What the text cannot hold goes
        // to the driver as before.
        @Override
        public void bind(PreparedStatement statement, int index, Instant instant) throws SQLException {
            String text = isoUtcMillis(instant);
            if (text == null) {
                statement.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
            } else {
                statement.setObject(index, text, Types.OTHER);
            }
        }

        @Override
        public Instant read(ResultSet row, String column) throws SQLException {
            OffsetDateTime time = row.getObject(column, OffsetDateTime.class);
            return time == null ? null : time.toInstant();
        }
    };

    private static final long FIRST_SECOND = Instant.parse("0001-01-01T00:00:00Z").getEpochSecond();
    private static final long AFTER_LAST_SECOND = Instant.parse("+10000-01-01T00:00:00Z").getEpochSecond();
    private static final int SECONDS_PER_DAY = 86_400;
    private static final int NANOS_PER_MILLI = 1_000_000;

    /**
     * {@code instant} as {@code yyyy-MM-ddTHH:mm:ss.SSSZ}, or {@code null} if it falls outside years
     * 1 to 9999 (where the text would need more digits or a sign, which PostgreSQL does not read) or
     * is finer than a millisecond. The same text as {@link Instant#toString()} gives, with the
     * milliseconds always written, made without the formatter that goes through, which took most of
     * the time binding a claim's receive time took once the calendar was gone.
     */
    static String isoUtcMillis(Instant instant) {
        long second = instant.getEpochSecond();
        int nano = instant.getNano();
        if (second < FIRST_SECOND || second >= AFTER_LAST_SECOND || nano % NANOS_PER_MILLI != 0) {
            return null;
        }
        LocalDate date = LocalDate.ofEpochDay(Math.floorDiv(second, SECONDS_PER_DAY));
        int secondOfDay = (int) Math.floorMod(second, SECONDS_PER_DAY);
        char[] text = "0000-00-00T00:00:00.000Z".toCharArray();
        writeDigits(text, 4, date.getYear());
        writeDigits(text, 7, date.getMonthValue());
        writeDigits(text, 10, date.getDayOfMonth());
        writeDigits(text, 13, secondOfDay / 3_600);
        writeDigits(text, 16, secondOfDay / 60 % 60);
        writeDigits(text, 19, secondOfDay % 60);
        writeDigits(text, 23, nano / NANOS_PER_MILLI);
        return new String(text);
    }

    /** Writes {@code value}'s decimal digits into the zeros of {@code text} that end before {@code end}. */
    private static void writeDigits(char[] text, int end, int value) {
        for (int i = end - 1; value > 0; i--, value /= 10) {
            text[i] = (char) ('0' + value % 10);
        }
    }

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
