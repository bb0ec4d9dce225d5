package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.strings;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import dev.idempotent.inbox.testing.InMemoryDatabase;
import dev.idempotent.inbox.testing.TestInbox;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class InboxTablesTest {

    private static void refused(String startsWith, String contains, Executable call) {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, call);
        assertTrue(refused.getMessage().startsWith(startsWith), refused.getMessage());
        assertTrue(refused.getMessage().contains(contains), refused.getMessage());
    }

    @Test
    void defaultsAreTheInboxPrefixInTheConnectionsOwnSchema() {
        InboxTables defaults = InboxTables.defaults();

        assertEquals("inbox_", defaults.prefix());
        assertEquals(Optional.empty(), defaults.schema());
        assertTrue(defaults.isDefault());
        assertEquals("inbox_schema", defaults.schemaTable());
        assertEquals("inbox_message", defaults.messageTable());
        assertEquals("inbox_horizon", defaults.horizonTable());
        assertEquals("inbox_kafka_offset", defaults.kafkaOffsetTable());
        assertEquals("inbox_message_received", defaults.name("message_received"));
        assertEquals("tables inbox_*", defaults.describe());
        assertEquals(defaults, InboxTables.prefix("inbox_"));
        assertTrue(InboxTables.prefix("inbox_").isDefault());
    }

    @Test
    void aPrefixAndASchemaNameEveryTableAndDerivedName() {
        InboxTables orders = InboxTables.prefix("orders_").inSchema("billing");

        assertEquals("orders_", orders.prefix());
        assertEquals(Optional.of("billing"), orders.schema());
        assertFalse(orders.isDefault());
        assertEquals("billing.orders_schema", orders.schemaTable());
        assertEquals("billing.orders_message", orders.messageTable());
        assertEquals("billing.orders_horizon", orders.horizonTable());
        assertEquals("billing.orders_kafka_offset", orders.kafkaOffsetTable());
        // Derived names (indexes, constraints) are never qualified: they carry the prefix only.
        assertEquals("orders_message_received", orders.name("message_received"));
        assertEquals("tables orders_* in schema billing", orders.describe());
        assertEquals("billing.orders_*", orders.toString());
        assertFalse(InboxTables.defaults().inSchema("public").isDefault());
    }

    @Test
    void equalNamesAreEqualAndOthersAreNot() {
        assertEquals(InboxTables.prefix("a_").inSchema("s"), InboxTables.prefix("a_").inSchema("s"));
        assertEquals(InboxTables.prefix("a_").inSchema("s").hashCode(), InboxTables.prefix("a_").inSchema("s").hashCode());
        assertNotEquals(InboxTables.prefix("a_"), InboxTables.prefix("a_").inSchema("s"));
        assertNotEquals(InboxTables.prefix("a_").inSchema("s"), InboxTables.prefix("a_").inSchema("t"));
        assertNotEquals(InboxTables.prefix("a_"), InboxTables.prefix("b_"));
    }

    @Test
    void prefixesThatAreNotPlainIdentifiersAreRefusedByName() {
        for (String bad : List.of("orders'_", "orders;_", "orders _", "Orders_", "1orders_", "orders-", "orders._",
                "ordérs_", "", "\"orders\"")) {
            refused("table prefix '" + bad + "' is not a plain identifier", "lower-case letters a-z, digits and underscores",
                    () -> InboxTables.prefix(bad));
        }
        assertThrows(NullPointerException.class, () -> InboxTables.prefix(null));
    }

    @Test
    void schemasThatAreNotPlainIdentifiersAreRefusedByName() {
        for (String bad : List.of("billing;", "bil ling", "billing'", "Billing", "public.x")) {
            refused("schema '" + bad + "' is not a plain identifier", "not starting with a digit",
                    () -> InboxTables.defaults().inSchema(bad));
        }
        assertThrows(NullPointerException.class, () -> InboxTables.defaults().inSchema(null));
    }

    @Test
    void lengthsAreBoundedSoThatEveryDerivedNameFitsPostgres() {
        String longest = "p".repeat(InboxTables.MAX_PREFIX_BYTES);
        assertEquals(longest, InboxTables.prefix(longest).prefix());
        refused("table prefix '" + longest + "x' is " + (InboxTables.MAX_PREFIX_BYTES + 1) + " bytes long",
                "at most " + InboxTables.MAX_PREFIX_BYTES + " are accepted", () -> InboxTables.prefix(longest + "x"));

        String longestSchema = "s".repeat(InboxTables.MAX_IDENTIFIER_BYTES);
        assertEquals(Optional.of(longestSchema), InboxTables.defaults().inSchema(longestSchema).schema());
        refused("schema '", "at most 63 are accepted", () -> InboxTables.defaults().inSchema(longestSchema + "s"));

        String longestSuffix = "x".repeat(InboxTables.MAX_SUFFIX_BYTES);
        assertEquals(InboxTables.MAX_IDENTIFIER_BYTES, InboxTables.prefix(longest).name(longestSuffix).length());
        refused("table suffix '", "at most " + InboxTables.MAX_SUFFIX_BYTES,
                () -> InboxTables.defaults().name(longestSuffix + "x"));
        refused("table suffix 'message;drop' is not a plain identifier", "",
                () -> InboxTables.defaults().name("message;drop"));
    }

    @Test
    void everyAcceptedPrefixWithEverySuffixOfTheLibraryIsAPlainIdentifierWithinPostgresLimit() {
        String first = "abcdefghijklmnopqrstuvwxyz_";
        String rest = first + "0123456789";
        qt().forAll(integers().between(0, first.length() - 1), strings().betweenCodePoints('a', 'z').ofLengthBetween(0, 40),
                        strings().betweenCodePoints('a', 'z').ofLengthBetween(1, 40))
                .checkAssert((start, tail, suffix) -> {
                    String prefix = first.charAt(start) + tail;
                    boolean accepted;
                    InboxTables tables = null;
                    try {
                        tables = InboxTables.prefix(prefix);
                        accepted = true;
                    } catch (IllegalArgumentException e) {
                        accepted = false;
                    }
                    assertEquals(prefix.length() <= InboxTables.MAX_PREFIX_BYTES, accepted, prefix);
                    if (accepted && suffix.length() <= InboxTables.MAX_SUFFIX_BYTES) {
                        String name = tables.name(suffix);
                        assertTrue(name.getBytes(StandardCharsets.UTF_8).length <= InboxTables.MAX_IDENTIFIER_BYTES, name);
                        assertTrue(name.chars().allMatch(c -> rest.indexOf(c) >= 0), name);
                    }
                });
    }

    @Test
    void anInboxTellsTheTablesItWasBuiltWithAndAForwardingInboxTheSame() {
        InboxTables orders = InboxTables.prefix("orders_").inSchema("billing");
        try (TestInbox renamed = TestInbox.builder(new InMemoryDatabase()).name("orders").tables(orders).build();
                TestInbox plain = TestInbox.builder(new InMemoryDatabase()).name("plain").build()) {
            assertEquals(orders, renamed.tables(), "TestInbox forwards to the engine, which answers its settings'");
            assertEquals(InboxTables.defaults(), plain.tables());
        }
    }
}
