package dev.idempotent.inbox.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import liquibase.changelog.ChangeLogParameters;
import liquibase.command.CommandScope;
import liquibase.command.core.UpdateCommandStep;
import liquibase.command.core.helpers.DatabaseChangelogCommandStep;
import liquibase.command.core.helpers.DbUrlConnectionArgumentsCommandStep;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.exception.LiquibaseException;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.postgresql.ds.PGSimpleDataSource;

/** The inbox's migrations applied to a fixture's schema as a team's own build would apply them. */
final class Migrations {

    static final String FLYWAY_LOCATION = "classpath:dev/idempotent/inbox/postgres/flyway";
    static final String LIQUIBASE_CHANGELOG = "dev/idempotent/inbox/postgres/liquibase/inbox-changelog.xml";
    static final String FLYWAY_PREFIXED_LOCATION = "classpath:dev/idempotent/inbox/postgres/flyway-prefixed";
    static final String LIQUIBASE_PREFIXED_CHANGELOG =
            "dev/idempotent/inbox/postgres/liquibase/inbox-changelog-prefixed.xml";
    /** The changelog as the first release shipped it, change sets inbox-schema-1 and inbox-kafka-offset-1. */
    static final String LIQUIBASE_RELEASED_CHANGELOG = "released/inbox-changelog-0.1.xml";
    /** The last Flyway migration the first release shipped. */
    static final String RELEASED_VERSION = "0.2";

    private Migrations() {}

    private static PGSimpleDataSource dataSource(PostgresFixture fixture) {
        return PostgresFixture.dataSource(PostgresFixture.PORT, "-c search_path=" + fixture.schema());
    }

    /** An application's own migrations, a {@code V1} that creates a business table. */
    static final String APPLICATION_LOCATION = "classpath:application/migration";

    /** A Flyway over the fixture's schema, to configure further. */
    static FluentConfiguration configure(PostgresFixture fixture) {
        return Flyway.configure().dataSource(dataSource(fixture)).schemas(fixture.schema());
    }

    static int flyway(PostgresFixture fixture) {
        return configure(fixture).locations(FLYWAY_LOCATION).load().migrate().migrationsExecuted;
    }

    static void liquibase(PostgresFixture fixture) throws SQLException, LiquibaseException {
        liquibase(fixture.schema(), LIQUIBASE_CHANGELOG, Map.of());
    }

    /** A Flyway over {@code schema}, where the templates' location makes tables of {@code prefix}. */
    static FluentConfiguration configurePrefixed(String schema, String prefix) {
        return Flyway.configure()
                .dataSource(PostgresFixture.dataSource(PostgresFixture.PORT, "-c search_path=" + schema))
                .schemas(schema)
                .locations(FLYWAY_PREFIXED_LOCATION)
                .placeholders(Map.of("inbox_table_prefix", prefix));
    }

    static int flywayPrefixed(PostgresFixture fixture, String schema, String prefix) {
        return configurePrefixed(schema, prefix).load().migrate().migrationsExecuted;
    }

    /**
     * Runs {@code changelog} in {@code schema} (the connection's schema, where Liquibase works and
     * keeps its own tables), with the changelog parameters {@code parameters}.
     */
    static void liquibase(String schema, String changelog, Map<String, String> parameters)
            throws SQLException, LiquibaseException {
        try (Connection connection = PostgresFixture.dataSource(PostgresFixture.PORT, "-c search_path=" + schema)
                .getConnection()) {
            Database database = DatabaseFactory.getInstance()
                    .findCorrectDatabaseImplementation(new JdbcConnection(connection));
            ChangeLogParameters values = new ChangeLogParameters(database);
            parameters.forEach(values::set);
            new CommandScope(UpdateCommandStep.COMMAND_NAME)
                    .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                    .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, changelog)
                    .addArgumentValue(DatabaseChangelogCommandStep.CHANGELOG_PARAMETERS, values)
                    .execute();
        }
    }
}
