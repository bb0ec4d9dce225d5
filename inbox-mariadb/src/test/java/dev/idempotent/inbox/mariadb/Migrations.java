package dev.idempotent.inbox.mariadb;

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

/** The inbox's migrations applied to a fixture's database as a team's own build would apply them. */
final class Migrations {

    static final String FLYWAY_LOCATION = "classpath:dev/idempotent/inbox/mariadb/flyway";
    static final String FLYWAY_PREFIXED_LOCATION = "classpath:dev/idempotent/inbox/mariadb/flyway-prefixed";
    static final String LIQUIBASE_CHANGELOG = "dev/idempotent/inbox/mariadb/liquibase/inbox-changelog.xml";
    static final String LIQUIBASE_PREFIXED_CHANGELOG =
            "dev/idempotent/inbox/mariadb/liquibase/inbox-changelog-prefixed.xml";

    private Migrations() {}

    private static String url(String database) {
        return "jdbc:mariadb://" + MariaDbFixture.HOST + ":" + MariaDbFixture.PORT + "/" + database;
    }

    /** Flyway over the default names' location, in the fixture's database, all steps. */
    static int flyway(MariaDbFixture fixture) {
        return flywayDefaultNames(fixture.database()).load().migrate().migrationsExecuted;
    }

    /** Flyway over the default names' location, in {@code database}, not yet loaded. */
    static FluentConfiguration flywayDefaultNames(String database) {
        return Flyway.configure().dataSource(url(database), MariaDbFixture.USER, MariaDbFixture.PASSWORD)
                .locations(FLYWAY_LOCATION);
    }

    /**
     * Flyway over the templates' location with {@code placeholders.inbox_table_prefix=prefix}, in
     * {@code database}, keeping its history in table {@code prefix + "flyway_history"}; not yet loaded.
     */
    static FluentConfiguration flywayPrefixed(String database, String prefix) {
        return Flyway.configure().dataSource(url(database), MariaDbFixture.USER, MariaDbFixture.PASSWORD)
                .locations(FLYWAY_PREFIXED_LOCATION)
                .placeholders(Map.of("inbox_table_prefix", prefix))
                .table(prefix + "flyway_history");
    }

    /** Liquibase over the default names' changelog, in the fixture's database, all change sets. */
    static void liquibase(MariaDbFixture fixture) throws SQLException, LiquibaseException {
        liquibase(fixture.database(), LIQUIBASE_CHANGELOG, Map.of(), null);
    }

    /** Liquibase's validate of {@code changelog} against {@code database}; throws if it fails. */
    static void liquibaseValidate(String database, String changelog) throws SQLException, LiquibaseException {
        try (Connection connection = DriverManager.getConnection(url(database), MariaDbFixture.USER,
                MariaDbFixture.PASSWORD)) {
            Database target = DatabaseFactory.getInstance()
                    .findCorrectDatabaseImplementation(new JdbcConnection(connection));
            new CommandScope(ValidateCommandStep.COMMAND_NAME)
                    .addArgumentValue(DatabaseChangelogCommandStep.CHANGELOG_FILE_ARG, changelog)
                    .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, target)
                    .execute();
        }
    }

    /**
     * Liquibase over {@code changelog} in {@code database} with changelog parameters
     * {@code parameters}: the first {@code count} change sets not yet run, or all if {@code null}.
     */
    static void liquibase(String database, String changelog, Map<String, String> parameters, Integer count)
            throws SQLException, LiquibaseException {
        try (Connection connection = DriverManager.getConnection(url(database), MariaDbFixture.USER,
                MariaDbFixture.PASSWORD)) {
            Database target = DatabaseFactory.getInstance()
                    .findCorrectDatabaseImplementation(new JdbcConnection(connection));
            ChangeLogParameters changelogParameters = new ChangeLogParameters(target);
            parameters.forEach(changelogParameters::set);
            CommandScope command = count == null
                    ? new CommandScope(UpdateCommandStep.COMMAND_NAME)
                            .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, changelog)
                    : new CommandScope(UpdateCountCommandStep.COMMAND_NAME)
                            .addArgumentValue(UpdateCountCommandStep.CHANGELOG_FILE_ARG, changelog)
                            .addArgumentValue(UpdateCountCommandStep.COUNT_ARG, count);
            command.addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, target)
                    .addArgumentValue(DatabaseChangelogCommandStep.CHANGELOG_PARAMETERS, changelogParameters)
                    .execute();
        }
    }
}
