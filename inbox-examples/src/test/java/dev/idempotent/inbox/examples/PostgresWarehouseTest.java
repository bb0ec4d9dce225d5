package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.http.Http;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import dev.idempotent.inbox.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The warehouse on PostgreSQL, over real HTTP: the seed's table, two instances, and retention. */
class PostgresWarehouseTest {

    private static PostgresSchema schema;

    @BeforeAll
    static void createSchema() {
        schema = PostgresSchema.create("examples_warehouse");
    }

    @AfterAll
    static void dropSchema() {
        schema.close();
    }

    @Test
    void seedTableAcrossTwoInstancesOfOneDatabase() throws Exception {
        try (Warehouse first = WarehouseDatabase.open("jdbc:" + schema.url());
                Warehouse second = WarehouseDatabase.open(schema.url());
                WarehouseServer one = WarehouseServer.start(first, ReceiverSettings.loopback());
                WarehouseServer two = WarehouseServer.start(second, ReceiverSettings.loopback())) {
            assertTrue(first.describe().startsWith("PostgreSQL " + PostgresSchema.ADDRESS), first.describe());
            Http a = new Http(one.uri());
            Http b = new Http(two.uri());
            assertTrue(a.receipt("snack-7", 7).json().get("applied").booleanValue());
            assertEquals(200, b.receipt("snack-7", 7).status());
            assertFalse(b.receipt("snack-7", 7).json().get("applied").booleanValue(), "a duplicate on the other instance");
            assertEquals(409, b.receipt("snack-7", 8).status());
            assertTrue(b.receipt("snack-8", 7).json().get("applied").booleanValue());
            assertEquals(new StockLevel(14, 2), first.stock());
            assertEquals(14, a.get("/stock").json().get("total").longValue());
            assertEquals(2, one.metrics().appliedEffects() + two.metrics().appliedEffects(), "two businesses, applied once each");
        }
    }

    @Test
    void staleResendIsRefusedOnPostgresToo() throws Exception {
        Instant t0 = Instant.parse("2026-01-05T10:00:00Z");
        MutableClock clock = new MutableClock(t0);
        try (PostgresSchema own = PostgresSchema.create("examples_retention");
                Warehouse warehouse = PostgresWarehouse.open(own.url(), builder -> builder.clock(clock).retention(Duration.ofDays(7)));
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback())) {
            Http http = new Http(server.uri());
            assertEquals(200, http.receipt("crate-1", 5, t0.toString()).status());
            clock.advance(Duration.ofDays(8));
            assertEquals(1, warehouse.retention().purge().rowsPurged());
            assertEquals(422, http.receipt("crate-1", 5, t0.toString()).status());
            assertEquals(200, http.receipt("crate-2", 3, clock.instant().toString()).status());
            assertEquals(new StockLevel(8, 1), warehouse.stock());
        }
    }

    @Test
    void refusesAnUnknownScheme() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> WarehouseDatabase.open("mysql://127.0.0.1/test"));
        assertTrue(refused.getMessage().contains("not supported"), refused.getMessage());
    }
}
