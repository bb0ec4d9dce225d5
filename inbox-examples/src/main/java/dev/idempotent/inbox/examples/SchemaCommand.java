package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import dev.idempotent.inbox.postgres.PostgresInbox;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Prints the inbox's DDL for a database, for teams whose DBAs run schema changes: every step of
 * {@link SchemaMigrations#STEPS}, as the adapter's jar ships it. With the default names these are
 * the Flyway migrations under {@code flyway/}; with {@code --table-prefix} they are the templates
 * under {@code flyway-prefixed/} filled in with the prefix, the very statements the inbox runs under
 * schema mode CREATE. Connects to nothing.
 */
@Command(name = "schema", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        exitCodeListHeading = ExitCodes.HEADING,
        exitCodeList = {" 0:the DDL was printed",
                ExitCodes.USAGE_LINE + " (--db naming no kind, file or URL; a --table-prefix that is no plain identifier)"},
        description = {"Prints the DDL of the inbox's tables for a database kind, every schema step in order, as the"
                + " adapter's jar ships it (its Flyway migrations, which the inbox also runs when it creates its"
                + " tables); with --table-prefix, the same steps for tables of that prefix. Connects to nothing;"
                + " hand the output to whoever changes the schema, then build the inbox with schema mode VALIDATE."})
final class SchemaCommand implements Callable<Integer> {

    /** The databases the example knows, each with the adapter class whose package holds its script. */
    enum Kind {
        SQLITE("SQLite", SqliteInbox.class),
        POSTGRESQL("PostgreSQL", PostgresInbox.class),
        MARIADB("MariaDB", MariaDbInbox.class);

        final String shown;
        final Class<?> adapter;

        Kind(String shown, Class<?> adapter) {
            this.shown = shown;
            this.adapter = adapter;
        }

        String resource(String script) {
            return adapter.getPackageName().replace('.', '/') + "/" + script;
        }
    }

    /** The adapters' migrations with the default table names, in the order Flyway runs them. */
    static final List<String> SCRIPTS =
            SchemaMigrations.STEPS.stream().map(step -> SchemaMigrations.DEFAULT_NAMES + step.file()).toList();

    @Spec
    CommandSpec spec;

    // Printing is all the command does; the option stays so that scripts written for it still run.
    @Option(names = "--print", description = "Print the DDL to standard output (what the command does anyway).")
    boolean print;

    @Option(names = "--db", required = true, paramLabel = "KIND|FILE|URL", description = "sqlite, postgresql or"
            + " mariadb, or a database as serve's --db takes it (a SQLite file, a postgresql:// or mariadb:// URL),"
            + " whose kind is used; nothing is opened.")
    String db;

    @Option(names = "--table-prefix", paramLabel = "PREFIX", description = "Print the DDL for tables named with"
            + " PREFIX (orders_ gives orders_message, orders_schema ...): the templates of the adapter's"
            + " flyway-prefixed/ location filled in with it. Lower-case letters, digits and underscores, not"
            + " starting with a digit, at most " + InboxTables.MAX_PREFIX_BYTES + " bytes. Default: the default"
            + " names' scripts (prefix " + InboxTables.DEFAULT_PREFIX + ").")
    String tablePrefix;

    @Override
    public Integer call() {
        // Checked before the kind, so that a bad prefix is refused however --db reads.
        InboxTables tables = tables();
        Kind kind = kindOf(db);
        PrintStream out = System.out;
        if (tables == null) {
            out.println("-- The inbox's migrations for " + kind.shown + ", in order, as " + kind.resource(SCRIPTS.get(0))
                    + " and the next " + (SCRIPTS.size() - 1) + " beside it in its jar.");
            for (String script : SCRIPTS) {
                out.print(InboxRows.script(kind.adapter, script));
            }
        } else {
            String first = SchemaMigrations.TEMPLATES + SchemaMigrations.STEPS.get(0).file();
            out.println("-- The inbox's migrations for " + kind.shown + " with table prefix " + tables.prefix()
                    + ", in order: " + kind.resource(first) + " and the next " + (SchemaMigrations.STEPS.size() - 1)
                    + " beside it in its jar, with " + SchemaMigrations.PLACEHOLDER + " = " + tables.prefix() + ".");
            for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
                out.print(SchemaMigrations.script(kind.adapter, step, tables));
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** The names {@code --table-prefix} gives, or {@code null} for the default names' scripts. */
    private InboxTables tables() {
        if (tablePrefix == null) {
            return null;
        }
        try {
            return InboxTables.prefix(tablePrefix);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--table-prefix: " + e.getMessage());
        }
    }

    static Kind kindOf(String db) {
        switch (db.strip().toLowerCase(Locale.ROOT)) {
            case "sqlite":
                return Kind.SQLITE;
            case "postgresql":
            case "postgres":
                return Kind.POSTGRESQL;
            case "mariadb":
                return Kind.MARIADB;
            default:
                break;
        }
        try {
            if (WarehouseDatabase.sqliteFile(db).isPresent()) {
                return Kind.SQLITE;
            }
        } catch (IllegalArgumentException e) {
            throw new CommandError(ExitCodes.USAGE, e.getMessage() + ", or the kind sqlite, postgresql or mariadb");
        }
        // sqliteFile returns empty only for a postgresql:// or mariadb:// URL, with or without jdbc:
        String scheme = db.substring(0, db.indexOf("://")).toLowerCase(Locale.ROOT);
        return scheme.endsWith("mariadb") ? Kind.MARIADB : Kind.POSTGRESQL;
    }
}
