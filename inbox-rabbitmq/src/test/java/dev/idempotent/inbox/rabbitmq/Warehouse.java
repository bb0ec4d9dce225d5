package dev.idempotent.inbox.rabbitmq;

import com.rabbitmq.client.Delivery;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * A SQLite file with the stock total and a log of every effect run (one row per run, no key, so
 * that an effect run twice shows), and the inbox beside them. The body of a message is its
 * quantity as text; a header {@code origin} carries an origin time.
 */
final class Warehouse {

    final Jdbi jdbi;

    Warehouse(Path file) {
        jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> {
            handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY CHECK (id = 1), total INTEGER NOT NULL)");
            handle.execute("INSERT INTO stock (id, total) VALUES (1, 0)");
            handle.execute("CREATE TABLE effect_run (id TEXT NOT NULL)");
        });
    }

    SqliteInbox inbox(Duration busyTimeout, Clock clock) {
        return SqliteInbox.builder(jdbi).name("warehouse").busyTimeout(busyTimeout).clock(clock)
                .retention(Duration.ofDays(1)).build();
    }

    SqliteInbox inbox() {
        return inbox(Duration.ofSeconds(5), Clock.systemUTC());
    }

    static final ContentDecoder<Long> QUANTITY = delivery -> {
        long qty = Long.parseLong(new String(delivery.getBody(), StandardCharsets.UTF_8));
        Decoded<Long> decoded = Decoded.of(Content.of(qty), qty);
        Object origin = origin(delivery);
        return origin == null ? decoded : decoded.withOriginTime(Instant.parse(origin.toString()));
    };

    static final DeliveryEffect<Handle, Long> ADD = (tx, id, qty) -> {
        tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty);
        tx.execute("INSERT INTO effect_run (id) VALUES (?)", id);
    };

    private static Object origin(Delivery delivery) {
        Map<String, Object> headers = delivery.getProperties().getHeaders();
        return headers == null ? null : headers.get("origin");
    }

    long total() {
        return jdbi.withHandle(h -> h.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
    }

    long effectRuns() {
        return jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM effect_run").mapTo(Long.class).one());
    }

    long distinctEffectRuns() {
        return jdbi.withHandle(h -> h.createQuery("SELECT COUNT(DISTINCT id) FROM effect_run").mapTo(Long.class).one());
    }

    Handle open() {
        return jdbi.open();
    }
}
