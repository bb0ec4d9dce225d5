package dev.idempotent.inbox.spi.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The receive time PostgreSQL stores is the text {@link TimeColumn#isoUtcMillis} writes, so it must
 * be the instant's own ISO 8601 form, digit for digit, wherever it writes one at all. A failure
 * prints its seed; replay it with {@code -DQT_SEED=...}.
 */
class TimeColumnTest {

    private static final long FIRST_MILLI = Instant.parse("0001-01-01T00:00:00Z").toEpochMilli();
    private static final long AFTER_LAST_MILLI = Instant.parse("+10000-01-01T00:00:00Z").toEpochMilli();

    @Test
    void everyMillisecondOfYearsOneTo9999IsWrittenAsTheJdkWritesIt() {
        // Half the draws moved to the first or the last millisecond of a day, where every field carries.
        qt().forAll(longs().between(FIRST_MILLI, AFTER_LAST_MILLI - 1), integers().between(0, 3))
                .checkAssert((milli, snap) -> {
                    long drawn = switch (snap) {
                        case 0 -> milli - Math.floorMod(milli, 86_400_000L);
                        case 1 -> milli - Math.floorMod(milli, 86_400_000L) - 1;
                        default -> milli;
                    };
                    Instant instant = Instant.ofEpochMilli(Math.max(FIRST_MILLI, drawn));
                    String jdk = instant.toString();
                    // Instant.toString leaves out a fraction of zero; the text always has three digits.
                    String expected = instant.getNano() == 0 ? jdk.replace("Z", ".000Z") : jdk;
                    assertEquals(expected, TimeColumn.isoUtcMillis(instant));
                    assertEquals(instant, Instant.parse(TimeColumn.isoUtcMillis(instant)));
                });
    }

    @Test
    void theEdgesOfTheRangeAndOfALeapDayAreWritten() {
        assertEquals("0001-01-01T00:00:00.000Z", TimeColumn.isoUtcMillis(Instant.parse("0001-01-01T00:00:00Z")));
        assertEquals("9999-12-31T23:59:59.999Z",
                TimeColumn.isoUtcMillis(Instant.parse("9999-12-31T23:59:59.999Z")));
        assertEquals("2024-02-29T23:59:59.001Z",
                TimeColumn.isoUtcMillis(Instant.parse("2024-02-29T23:59:59.001Z")));
        assertEquals("1969-12-31T23:59:59.999Z", TimeColumn.isoUtcMillis(Instant.ofEpochMilli(-1)));
    }

    @Test
    void whatTheTextCannotHoldIsLeftToTheDriver() {
        assertNull(TimeColumn.isoUtcMillis(Instant.parse("0000-12-31T23:59:59.999Z")));
        assertNull(TimeColumn.isoUtcMillis(Instant.parse("+10000-01-01T00:00:00Z")));
        assertNull(TimeColumn.isoUtcMillis(Instant.parse("2026-12-04T12:00:00.000001Z")));
        assertNull(TimeColumn.isoUtcMillis(Instant.MAX));
        assertNull(TimeColumn.isoUtcMillis(Instant.MIN));
    }
}
