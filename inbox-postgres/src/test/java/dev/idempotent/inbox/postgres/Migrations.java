package dev.idempotent.inbox.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import liquibase.command.CommandScope;
import liquibase.command.core.UpdateCommandStep;
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
        try (Connection connection = dataSource(fixture).getConnection()) {
            Database database = DatabaseFactory.getInstance()
                    .findCorrectDatabaseImplementation(new JdbcConnection(connection));
            new CommandScope(UpdateCommandStep.COMMAND_NAME)
                    .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                    .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, LIQUIBASE_CHANGELOG)
                    .execute();
        }
    }
}
