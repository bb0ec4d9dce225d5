package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Map;
import liquibase.changelog.ChangeLogParameters;
import liquibase.command.CommandScope;
import liquibase.command.core.UpdateCommandStep;
import liquibase.command.core.UpdateCountCommandStep;
import liquibase.command.core.ValidateCommandStep;
import liquibase.command.core.helpers.DatabaseChangelogCommandStep;
import liquibase.command.core.helpers.DbUrlConnectionArgumentsCommandStep;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.exception.LiquibaseException;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;

/** The inbox's migrations applied to a SQLite file as a team's own build would apply them. */
final class Migrations {

    static final String FLYWAY_LOCATION = SqliteStore.FLYWAY;
    static final String FLYWAY_PREFIXED_LOCATION = SqliteStore.FLYWAY_PREFIXED;
    static final String LIQUIBASE_CHANGELOG = SqliteStore.LIQUIBASE;
    static final String LIQUIBASE_PREFIXED_CHANGELOG = SqliteStore.LIQUIBASE_PREFIXED;

    /** The last migration of release 0.1, which shipped V0_1 and V0_2 only. */
    static final String TODAYS_RELEASE = "0.2";

    private Migrations() {}

    static String url(Path file) {
        return "jdbc:sqlite:" + file.toAbsolutePath();
    }

    /** Flyway over the default names. */
    static FluentConfiguration flywayConfig(Path file) {
        return Flyway.configure().dataSource(url(file), null, null).locations(FLYWAY_LOCATION);
    }

    /**
     * Flyway over the templates with {@code prefix}, its history in {@code <prefix>flyway_history}.
     * A history table of its own in a file that already holds tables (another prefix's, the
     * business's) needs a baseline below the first step, or Flyway refuses the non-empty schema.
     */
    static FluentConfiguration flywayPrefixedConfig(Path file, String prefix) {
        return Flyway.configure().dataSource(url(file), null, null).locations(FLYWAY_PREFIXED_LOCATION)
                .placeholders(Map.of(SchemaMigrations.PLACEHOLDER, prefix))
                .table(prefix + "flyway_history")
                .baselineOnMigrate(true)
                .baselineVersion("0");
    }

    static void flyway(Path file) {
        flywayConfig(file).load().migrate();
    }

    static void flywayPrefixed(Path file, String prefix) {
        flywayPrefixedConfig(file, prefix).load().migrate();
    }

    static void liquibase(Path file) throws SQLException, LiquibaseException {
        liquibase(file, LIQUIBASE_CHANGELOG, null, null, null);
    }

    /** The prefixed changelog with parameter {@code prefix}, in changelog tables of that prefix. */
    static void liquibasePrefixed(Path file, String prefix) throws SQLException, LiquibaseException {
        liquibase(file, LIQUIBASE_PREFIXED_CHANGELOG, prefix, prefix + "databasechangelog", null);
    }

    /** The prefixed changelog with no parameter given: its default prefix. */
    static void liquibasePrefixedWithoutParameter(Path file) throws SQLException, LiquibaseException {
        liquibase(file, LIQUIBASE_PREFIXED_CHANGELOG, null, null, null);
    }

    /** The default changelog's first {@code count} change sets: {@code 2} is today's release. */
    static void liquibaseFirst(Path file, int count) throws SQLException, LiquibaseException {
        liquibase(file, LIQUIBASE_CHANGELOG, null, null, count);
    }

    /**
     * Liquibase's validate of the default changelog, or of the prefixed one with {@code prefix}:
     * the changelog is sound and the change sets applied have their checksums.
     */
    static void liquibaseValidate(Path file, String prefix) throws SQLException, LiquibaseException {
        if (prefix == null) {
            liquibase(ValidateCommandStep.COMMAND_NAME, file, LIQUIBASE_CHANGELOG, null, null, null);
        } else {
            liquibase(ValidateCommandStep.COMMAND_NAME, file, LIQUIBASE_PREFIXED_CHANGELOG, prefix,
                    prefix + "databasechangelog", null);
        }
    }

    private static void liquibase(Path file, String changelog, String prefix, String changelogTable, Integer count)
            throws SQLException, LiquibaseException {
        liquibase(count == null ? UpdateCommandStep.COMMAND_NAME : UpdateCountCommandStep.COMMAND_NAME, file,
                changelog, prefix, changelogTable, count);
    }

    private static void liquibase(String[] command, Path file, String changelog, String prefix, String changelogTable,
            Integer count) throws SQLException, LiquibaseException {
        try (Connection connection = DriverManager.getConnection(url(file))) {
            Database database = DatabaseFactory.getInstance()
                    .findCorrectDatabaseImplementation(new JdbcConnection(connection));
            if (changelogTable != null) {
                database.setDatabaseChangeLogTableName(changelogTable);
                database.setDatabaseChangeLogLockTableName(changelogTable + "lock");
            }
            CommandScope update = new CommandScope(command)
                    .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                    .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, changelog);
            if (count != null) {
                update.addArgumentValue(UpdateCountCommandStep.COUNT_ARG, count);
            }
            if (prefix != null) {
                ChangeLogParameters parameters = new ChangeLogParameters(database);
                parameters.set(SchemaMigrations.PLACEHOLDER, prefix);
                update.addArgumentValue(DatabaseChangelogCommandStep.CHANGELOG_PARAMETERS, parameters);
            }
            update.execute();
        }
    }
}
