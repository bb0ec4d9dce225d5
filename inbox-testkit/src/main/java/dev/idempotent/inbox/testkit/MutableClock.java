package dev.idempotent.inbox.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A UTC clock that tests move forward by hand, for retention and receive-time scenarios. */
public final class MutableClock extends Clock {

    private volatile Instant now;

    /**
     * A clock that reads {@code start} until it is moved.
     *
     * @param start the first instant
     */
    public MutableClock(Instant start) {
        this.now = start;
    }

    /**
     * Moves the clock forward by {@code duration}.
     *
     * @param duration how far; a negative one moves it back
     */
    public void advance(Duration duration) {
        now = now.plus(duration);
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a test clock stays in UTC");
    }
}
