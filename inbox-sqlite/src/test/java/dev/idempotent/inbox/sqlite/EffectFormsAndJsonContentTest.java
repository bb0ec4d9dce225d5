package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.ContentType;
import dev.idempotent.inbox.Outcome;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The void effect and JSON content over a real SQLite file. */
class EffectFormsAndJsonContentTest {

    private static final String ADD = "UPDATE stock SET total = total + ?";

    @TempDir
    Path directory;

    private SqliteFixture fixture;

    @BeforeEach
    void createStock() {
        fixture = new SqliteFixture(directory);
        fixture.jdbi().useHandle(handle -> {
            handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
            handle.execute("INSERT INTO stock VALUES (1, 0)");
        });
    }

    private long total() {
        return fixture.jdbi().withHandle(handle ->
                handle.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
    }

    @Test
    void expressionAndStatementEffectsEachApplyOnceAndDuplicatesDoNotRunThem() {
        try (SqliteInbox inbox = fixture.builder().build()) {
            Outcome<Integer> counted = inbox.apply("snack-7", Content.of(7), tx -> tx.execute(ADD, 7));
            Outcome<Void> done = inbox.apply("snack-8", Content.of(8), tx -> {
                tx.execute(ADD, 8);
            });
            Outcome<Integer> countedAgain = inbox.apply("snack-7", Content.of(7), tx -> tx.execute(ADD, 7));
            Outcome<Void> doneAgain = inbox.apply("snack-8", Content.of(8), tx -> {
                tx.execute(ADD, 8);
            });

            assertEquals(1, assertInstanceOf(Outcome.Applied.class, counted).result(), "rows updated");
            assertNull(assertInstanceOf(Outcome.Applied.class, done).result());
            assertInstanceOf(Outcome.Duplicate.class, countedAgain);
            assertInstanceOf(Outcome.Duplicate.class, doneAgain);
            assertEquals(15, total(), "each effect ran once");
            assertEquals(2, inbox.stats().applied());
            assertEquals(2, inbox.stats().duplicates());
        }
    }

    @Test
    void jsonWrittenAnotherWayIsADuplicateAndChangedJsonAConflict() {
        try (SqliteInbox inbox = fixture.builder().build()) {
            Outcome<Void> first = inbox.apply("snack-7", Content.json("{\"item\":\"crisps\",\"qty\":7}"), tx -> {
                tx.execute(ADD, 7);
            });
            Outcome<Void> reordered = inbox.apply("snack-7", Content.json("{ \"qty\": 7.0, \"item\": \"crisps\" }"), tx -> {
                tx.execute(ADD, 7);
            });
            Outcome<Void> changed = inbox.apply("snack-7", Content.json("{\"item\":\"crisps\",\"qty\":8}"), tx -> {
                tx.execute(ADD, 8);
            });

            assertInstanceOf(Outcome.Applied.class, first);
            assertInstanceOf(Outcome.Duplicate.class, reordered);
            Outcome.Conflict<?> conflict = assertInstanceOf(Outcome.Conflict.class, changed);
            assertEquals(ContentType.JSON, conflict.stored().contentType());
            assertFalse(conflict.contentTypeChanged(), "the same canonical form, changed business");
            assertEquals(7, total());
        }
    }
}
