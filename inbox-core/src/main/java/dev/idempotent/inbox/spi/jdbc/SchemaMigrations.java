package dev.idempotent.inbox.spi.jdbc;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.SchemaMode;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The one discipline by which the library's tables change, on every database and for every
 * component (the inbox's tables, inbox-kafka's offsets, and those to come).
 *
 * <p>Each change is a {@link Step}: a new versioned script, never an edited one, shipped twice
 * beside each store. Under {@link #TEMPLATES} the script names its tables with the placeholder
 * {@value #PLACEHOLDER} (Flyway's {@code ${...}} syntax, which Liquibase's changelog parameters
 * share); under {@link #DEFAULT_NAMES} the same script has the default prefix {@code inbox_}
 * written in, for Flyway users who keep the default names and set no placeholder. Schema mode
 * {@code CREATE} runs the templates, filled in with the inbox's {@link InboxTables}, so what the
 * inbox creates and what a migration tool creates are the same statements.
 *
 * <p>Table {@code <prefix>schema} records, per component, a version and a revision. A revision is an
 * additive change (a new table, a nullable column): a release that knows revision 1 works on a
 * schema at revision 2 of the same version, so a rolling deploy migrates first and then replaces
 * instances one by one. A new version is a breaking change: a release refuses a version newer than
 * it knows, naming the release the schema needs ({@code min_release}), and the CHANGELOG gives the
 * upgrade steps.
 */
@Beta
public final class SchemaMigrations {

    /** The placeholder the templates write before every table and derived name. */
    public static final String PLACEHOLDER = "inbox_table_prefix";

    /** Where the templates are, relative to the store's package: a Flyway location of its own. */
    public static final String TEMPLATES = "flyway-prefixed/";

    /** Where the scripts with the default names are, relative to the store's package. */
    public static final String DEFAULT_NAMES = "flyway/";

    /** The component of the inbox's own tables. */
    public static final String INBOX = "inbox";

    /** The component of inbox-kafka's offsets. */
    public static final String KAFKA_OFFSET = "kafka_offset";

    /**
     * A component's schema version and revision.
     *
     * @param version raised by a breaking change
     * @param revision raised by an additive change; back to 0 with each new version
     */
    public record Level(int version, int revision) implements Comparable<Level> {
        @Override
        public int compareTo(Level other) {
            return version != other.version
                    ? Integer.compare(version, other.version)
                    : Integer.compare(revision, other.revision);
        }

        @Override
        public String toString() {
            return version + "." + revision;
        }
    }

    /**
     * One change of the library's tables.
     *
     * @param migration Flyway's version of the step, such as {@code 0.3}
     * @param description the rest of the file name, such as {@code schema_revision}
     * @param component the component the step changes
     * @param level the component's level once the step ran
     * @param changeSet the id of the step's Liquibase change set
     */
    public record Step(String migration, String description, String component, Level level, String changeSet) {
        /** {@return the script's file name, such as {@code V0_3__schema_revision.sql}} */
        public String file() {
            return "V" + migration.replace('.', '_') + "__" + description + ".sql";
        }

        @Override
        public String toString() {
            return file().substring(0, file().length() - ".sql".length());
        }
    }

    /** Every step, in the order they run. A new step goes at the end; no step is ever changed. */
    public static final List<Step> STEPS = List.of(
            new Step("0.1", "inbox_schema", INBOX, new Level(1, 0), "inbox-schema-1"),
            new Step("0.2", "kafka_offset", KAFKA_OFFSET, new Level(1, 0), "inbox-kafka-offset-1"),
            new Step("0.3", "schema_revision", INBOX, new Level(1, 1), "inbox-schema-revision-1"),
            new Step("0.4", "stored_results", INBOX, new Level(1, 2), "inbox-stored-results-1"));

    /**
     * What a component's row in {@code <prefix>schema} says.
     *
     * @param level the version and revision (revision 0 when the table predates revisions)
     * @param minRelease the oldest release of the library that works on this version, or
     *     {@code null} when the row does not say
     */
    public record Recorded(Level level, String minRelease) {}

    private SchemaMigrations() {}

    /**
     * {@return the level this release of the library knows for {@code component}: the level of its
     * last step}
     *
     * @param component a component of {@link #STEPS}
     */
    public static Level known(String component) {
        Level known = null;
        for (Step step : STEPS) {
            if (step.component().equals(component)) {
                known = step.level();
            }
        }
        if (known == null) {
            throw new IllegalArgumentException("no step of the library's schema is for component " + component);
        }
        return known;
    }

    /**
     * The steps not yet applied to tables whose {@code <prefix>schema} holds {@code recorded}, in
     * order.
     *
     * @param recorded each component's row, empty when the tables are absent
     * @return the steps to run
     */
    public static List<Step> pending(Map<String, Recorded> recorded) {
        List<Step> pending = new ArrayList<>();
        for (Step step : STEPS) {
            Recorded row = recorded.get(step.component());
            if (row == null || row.level().compareTo(step.level()) < 0) {
                pending.add(step);
            }
        }
        return pending;
    }

    /**
     * The script of {@code step} for {@code tables}: the template with the prefix filled in.
     *
     * @param store a class of the store's jar, whose package holds the templates
     * @param step the step
     * @param tables the inbox's table names; the script names no schema, so the store runs it
     *     where the tables belong
     * @return the script
     */
    public static String script(Class<?> store, Step step, InboxTables tables) {
        return fill(InboxRows.script(store, TEMPLATES + step.file()), tables.prefix());
    }

    /**
     * Fills the placeholder of a template in.
     *
     * @param template the template's text
     * @param prefix the table prefix
     * @return the text with every {@code ${inbox_table_prefix}} replaced by {@code prefix}
     */
    public static String fill(String template, String prefix) {
        return template.replace("${" + PLACEHOLDER + "}", prefix);
    }

    /**
     * Reads {@code <prefix>schema}.
     *
     * @param connection a connection
     * @param tables the inbox's table names
     * @return each component's row, in the table's order; empty if the table has no rows
     * @throws SQLException if the table is missing or the read failed
     */
    public static Map<String, Recorded> read(Connection connection, InboxTables tables) throws SQLException {
        Map<String, Recorded> rows = new LinkedHashMap<>();
        try (Statement select = connection.createStatement();
                ResultSet row = select.executeQuery("SELECT * FROM " + tables.schemaTable())) {
            ResultSetMetaData columns = row.getMetaData();
            boolean revisions = false;
            for (int i = 1; i <= columns.getColumnCount(); i++) {
                revisions |= columns.getColumnLabel(i).equalsIgnoreCase("revision");
            }
            while (row.next()) {
                Level level = new Level(row.getInt("version"), revisions ? row.getInt("revision") : 0);
                rows.put(row.getString("component"), new Recorded(level, revisions ? row.getString("min_release") : null));
            }
        }
        return rows;
    }

    /**
     * Refuses tables of a version newer than this release knows, which every schema mode must:
     * such tables were changed in a way this release would misread. A newer revision of the known
     * version passes: it only added what this release does not use.
     *
     * @param recorded each component's row
     * @param tables the inbox's table names, for the message
     * @throws InboxStorageException of kind {@link InboxStorageException.Kind#NEWER_SCHEMA}, naming
     *     the release the tables need
     */
    public static void refuseIncompatible(Map<String, Recorded> recorded, InboxTables tables) {
        for (Map.Entry<String, Recorded> row : recorded.entrySet()) {
            Level known = knownOrNull(row.getKey());
            Level found = row.getValue().level();
            if (known != null && found.version() > known.version()) {
                String needs = row.getValue().minRelease() == null
                        ? "a newer release of this library"
                        : "release " + row.getValue().minRelease() + " of this library or later";
                throw new InboxStorageException(InboxStorageException.Kind.NEWER_SCHEMA, "the " + tables.describe()
                        + " hold component '" + row.getKey() + "' at schema " + found + ", which needs " + needs
                        + "; this release knows schema " + known + " at most", null);
            }
        }
    }

    /**
     * The check of {@link SchemaMode#VALIDATE}: the inbox's component is at the level this release
     * knows, or a newer revision of its version.
     *
     * @param recorded each component's row; empty when the tables are missing
     * @param tables the inbox's table names
     * @param where where the tables were looked for, for the message, such as {@code "schema public"}
     * @param migration how to migrate, for the message, such as the Flyway location
     * @throws InboxStorageException of kind {@link InboxStorageException.Kind#SCHEMA_MISSING}
     *     naming the migrations to run, or of kind {@code NEWER_SCHEMA}
     */
    public static void validate(Map<String, Recorded> recorded, InboxTables tables, String where, String migration) {
        refuseIncompatible(recorded, tables);
        Recorded inbox = recorded.get(INBOX);
        Level known = known(INBOX);
        if (inbox != null && inbox.level().compareTo(known) >= 0) {
            return;
        }
        List<Step> pending = pending(recorded).stream().filter(step -> step.component().equals(INBOX)).toList();
        String state = inbox == null
                ? "the " + tables.describe() + " are missing in " + where
                : "the " + tables.describe() + " in " + where + " are at inbox schema " + inbox.level()
                        + ", older than " + known + " this release needs";
        throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING, state + "; run migration"
                + (pending.size() > 1 ? "s " : " ") + pending.stream().map(Step::toString).collect(Collectors.joining(", "))
                + " (" + migration + "; Liquibase change set" + (pending.size() > 1 ? "s " : " ")
                + pending.stream().map(Step::changeSet).collect(Collectors.joining(", "))
                + "), or build the inbox with schema mode CREATE", null);
    }

    private static Level knownOrNull(String component) {
        Objects.requireNonNull(component, "component");
        return STEPS.stream().anyMatch(step -> step.component().equals(component)) ? known(component) : null;
    }
}
