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

/** The warehouse on MariaDB, over real HTTP: the seed's table, two instances, and retention. */
class MariaDbWarehouseTest {

    private static MariaDbDatabase database;

    @BeforeAll
    static void createDatabase() {
        database = MariaDbDatabase.create("examples_warehouse");
    }

    @AfterAll
    static void dropDatabase() {
        database.close();
    }

    @Test
    void seedTableAcrossTwoInstancesOfOneDatabase() throws Exception {
        try (Warehouse first = WarehouseDatabase.open("jdbc:" + database.url());
                Warehouse second = WarehouseDatabase.open(database.url());
                WarehouseServer one = WarehouseServer.start(first, ReceiverSettings.loopback());
                WarehouseServer two = WarehouseServer.start(second, ReceiverSettings.loopback())) {
            assertEquals(database.described(), first.describe());
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
    void countsAffectedRowsThoughTheUrlAsksForFoundRows() throws Exception {
        // The driver would otherwise count the claim of a stored id as a changed row: a new id.
        try (MariaDbDatabase own = MariaDbDatabase.create("examples_found_rows");
                Warehouse warehouse = WarehouseDatabase.open(own.url() + "?useAffectedRows=false");
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback())) {
            Http http = new Http(server.uri());
            assertTrue(http.receipt("found-1", 4).json().get("applied").booleanValue());
            assertFalse(http.receipt("found-1", 4).json().get("applied").booleanValue(), "a duplicate, not a new id");
        }
    }

    @Test
    void staleResendIsRefusedOnMariaDbToo() throws Exception {
        Instant t0 = Instant.parse("2026-01-05T10:00:00Z");
        MutableClock clock = new MutableClock(t0);
        try (MariaDbDatabase own = MariaDbDatabase.create("examples_retention");
                Warehouse warehouse = MariaDbWarehouse.open(own.url(), builder -> builder.clock(clock).retention(Duration.ofDays(7)));
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
    void refusesAUrlWithoutADatabase() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> WarehouseDatabase.open("mariadb://root@127.0.0.1:3306/"));
        assertTrue(refused.getMessage().contains("needs a host and a database"), refused.getMessage());
    }

    @Test
    void showsTheAddressWithoutCredentials() {
        assertEquals("mariadb://db:3306/shop", WarehouseDatabase.shown("mariadb://app:s3cret@db:3306/shop?x=1"));
        assertEquals("jdbc:mariadb://db:3306/shop", WarehouseDatabase.shown("jdbc:mariadb://app@db:3306/shop"));
    }
}
