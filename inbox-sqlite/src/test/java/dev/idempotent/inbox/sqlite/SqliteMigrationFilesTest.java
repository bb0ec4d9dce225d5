package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The two copies of every schema step cannot drift: the script under {@code flyway/} (default
 * names, what Flyway users without a placeholder and the default Liquibase changelog run) is the
 * template under {@code flyway-prefixed/} filled in with {@code inbox_} (what the inbox runs under
 * schema mode CREATE and the prefixed changelog runs), statement for statement.
 */
class SqliteMigrationFilesTest {

    /** The statements of a script: comments and blank lines removed, whitespace made single spaces. */
    static List<String> statements(String script) {
        String code = script.lines()
                .map(line -> line.replaceAll("--.*$", ""))
                .filter(line -> !line.isBlank())
                .reduce("", (a, b) -> a + " " + b);
        return Arrays.stream(code.split(";"))
                .map(statement -> statement.replaceAll("\\s+", " ").trim())
                .filter(statement -> !statement.isEmpty())
                .toList();
    }

    @Test
    void everyStepHasATemplateAndAScriptWithTheDefaultNamesThatAreTheSameStatements() {
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            assertNotNull(SqliteStore.class.getResource(SchemaMigrations.TEMPLATES + step.file()),
                    "template of " + step);
            String template = InboxRows.script(SqliteStore.class, SchemaMigrations.TEMPLATES + step.file());
            String defaults = InboxRows.script(SqliteStore.class, SchemaMigrations.DEFAULT_NAMES + step.file());

            List<String> filledIn = statements(SchemaMigrations.fill(template, InboxTables.DEFAULT_PREFIX));
            assertFalse(filledIn.isEmpty(), step.toString());
            assertEquals(statements(defaults), filledIn, step + ": flyway/ is the template filled in with inbox_");
            assertEquals(filledIn, statements(SchemaMigrations.script(SqliteStore.class, step, InboxTables.defaults())),
                    step + ": what CREATE runs for the default names");
        }
    }

    @Test
    void templatesNameEveryTableAndIndexThroughThePlaceholder() {
        Pattern name = Pattern.compile("(?i)\\b(?:TABLE(?: IF NOT EXISTS)?|INDEX(?: IF NOT EXISTS)?|INTO|UPDATE|ON)\\s+(\\S+)");
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            String template = InboxRows.script(SqliteStore.class, SchemaMigrations.TEMPLATES + step.file());
            for (String statement : statements(template)) {
                Matcher names = name.matcher(statement);
                while (names.find()) {
                    if (names.group(1).equalsIgnoreCase("CONFLICT")) {
                        continue;
                    }
                    assertTrue(names.group(1).startsWith("${" + SchemaMigrations.PLACEHOLDER + "}"),
                            step + " names " + names.group(1) + " without the placeholder: " + statement);
                }
            }
            assertFalse(statements(template).stream().anyMatch(statement -> statement
                            .replace("${" + SchemaMigrations.PLACEHOLDER + "}", "").contains(InboxTables.DEFAULT_PREFIX)),
                    step + " writes the default prefix in");
        }
    }

    @Test
    void bothChangelogsRunEveryStepByItsChangeSetId() {
        String defaults = InboxRows.script(SqliteStore.class, "liquibase/inbox-changelog.xml");
        String prefixed = InboxRows.script(SqliteStore.class, "liquibase/inbox-changelog-prefixed.xml");
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            assertTrue(defaults.matches("(?s).*<changeSet id=\"" + step.changeSet() + "\"[^>]*>\\s*<sqlFile path=\""
                    + "dev/idempotent/inbox/sqlite/flyway/" + step.file() + "\".*"), step + " in inbox-changelog.xml");
            assertTrue(prefixed.matches("(?s).*<changeSet id=\"" + step.changeSet() + "\"[^>]*>\\s*<sqlFile path=\""
                    + "dev/idempotent/inbox/sqlite/flyway-prefixed/" + step.file() + "\".*"),
                    step + " in inbox-changelog-prefixed.xml");
        }
    }
}
