package dev.idempotent.inbox.examples;

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
import picocli.CommandLine.Option;

/**
 * Prints the inbox's DDL for a database, for teams whose DBAs run schema changes: the very script
 * the adapter's jar ships as its Flyway migration and runs itself under schema mode CREATE. Connects
 * to nothing.
 */
@Command(name = "schema", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        exitCodeListHeading = ExitCodes.HEADING,
        exitCodeList = {" 0:the DDL was printed", ExitCodes.USAGE_LINE + " (--db naming no kind, file or URL)"},
        description = {"Prints the DDL of the inbox's tables for a database kind, as the adapter's jar ships it (its"
                + " Flyway migration, which the inbox also runs when it creates its tables). Connects to nothing;"
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

    // Printing is all the command does; the option stays so that scripts written for it still run.
    @Option(names = "--print", description = "Print the DDL to standard output (what the command does anyway).")
    boolean print;

    @Option(names = "--db", required = true, paramLabel = "KIND|FILE|URL", description = "sqlite, postgresql or"
            + " mariadb, or a database as serve's --db takes it (a SQLite file, a postgresql:// or mariadb:// URL),"
            + " whose kind is used; nothing is opened.")
    String db;

    @Override
    public Integer call() {
        Kind kind = kindOf(db);
        PrintStream out = System.out;
        out.println("-- The inbox's migrations for " + kind.shown + ", in order, as " + kind.resource(SCRIPTS.get(0))
                + " and the next " + (SCRIPTS.size() - 1) + " beside it in its jar.");
        for (String script : SCRIPTS) {
            out.print(InboxRows.script(kind.adapter, script));
        }
        out.flush();
        return ExitCodes.OK;
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
