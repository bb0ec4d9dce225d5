package dev.idempotent.inbox.sqlite;

import static org.quicktheories.generators.SourceDSL.integers;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.sqlite.OrderEffectPropertiesTest.Books;
import dev.idempotent.inbox.sqlite.OrderEffectPropertiesTest.Order;
import dev.idempotent.inbox.testkit.EffectProperties;
import dev.idempotent.inbox.testkit.InboxFixture;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.io.TempDir;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * A user's effect proven with {@link EffectProperties}, on a schema of its own: each order message
 * inserts an order row (order id = message id) and adds its quantity to a per-item total.
 */
class OrderEffectPropertiesTest extends EffectProperties<Order, Books> {

    /** The business payload, sent as JSON. */
    record Order(String item, int qty) {}

    /** The business state: the total per item and the ids of the orders taken. */
    record Books(Map<String, Long> totals, Set<String> orderIds) {}

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        Path file = directory.resolve("orders.db");
        Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(db -> {
            db.execute("CREATE TABLE orders (id TEXT PRIMARY KEY, item TEXT NOT NULL, qty INTEGER NOT NULL)");
            db.execute("CREATE TABLE item_total (item TEXT PRIMARY KEY, total INTEGER NOT NULL)");
        });
        return fixture(jdbi, () -> SqliteInbox.builder(file));
    }

    @Override
    protected Gen<Order> payloads() {
        return Generate.pick(List.of("crisps", "nuts")).zip(integers().between(1, 3), Order::new);
    }

    @Override
    protected Content content(Order order) {
        return Content.json("{\"item\":\"" + order.item() + "\",\"qty\":" + order.qty() + "}");
    }

    @Override
    protected void effect(Handle tx, String id, Order order) {
        tx.execute("INSERT INTO orders (id, item, qty) VALUES (?, ?, ?)", id, order.item(), order.qty());
        tx.execute("INSERT INTO item_total (item, total) VALUES (?, ?)"
                + " ON CONFLICT (item) DO UPDATE SET total = total + excluded.total", order.item(), order.qty());
    }

    @Override
    protected void resetBusinessState(Jdbi jdbi) {
        jdbi.useHandle(db -> {
            db.execute("DELETE FROM orders");
            db.execute("DELETE FROM item_total");
        });
    }

    @Override
    protected Books expected(List<AppliedMessage<Order>> applied) {
        Books books = new Books(new TreeMap<>(), new TreeSet<>());
        for (AppliedMessage<Order> message : applied) {
            books.totals().merge(message.payload().item(), (long) message.payload().qty(), Long::sum);
            books.orderIds().add(message.id());
        }
        return books;
    }

    @Override
    protected Books actual(Jdbi jdbi) {
        return jdbi.withHandle(db -> new Books(
                db.createQuery("SELECT item, total FROM item_total")
                        .map((row, ctx) -> Map.entry(row.getString("item"), row.getLong("total")))
                        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, Long::sum, TreeMap::new)),
                new TreeSet<>(db.createQuery("SELECT id FROM orders").mapTo(String.class).list())));
    }
}
