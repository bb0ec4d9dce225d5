package dev.idempotent.inbox.mariadb;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import liquibase.command.CommandScope;
import liquibase.command.core.UpdateCommandStep;
import liquibase.command.core.helpers.DbUrlConnectionArgumentsCommandStep;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.exception.LiquibaseException;
import org.flywaydb.core.Flyway;

/** The inbox's migrations applied to a fixture's database as a team's own build would apply them. */
final class Migrations {

    static final String FLYWAY_LOCATION = "classpath:dev/idempotent/inbox/mariadb/flyway";
    static final String LIQUIBASE_CHANGELOG = "dev/idempotent/inbox/mariadb/liquibase/inbox-changelog.xml";

    private Migrations() {}

    private static String url(MariaDbFixture fixture) {
        return "jdbc:mariadb://" + MariaDbFixture.HOST + ":" + MariaDbFixture.PORT + "/" + fixture.database();
    }

    static int flyway(MariaDbFixture fixture) {
        return Flyway.configure().dataSource(url(fixture), MariaDbFixture.USER, MariaDbFixture.PASSWORD)
                .locations(FLYWAY_LOCATION).load().migrate().migrationsExecuted;
    }

    static void liquibase(MariaDbFixture fixture) throws SQLException, LiquibaseException {
        try (Connection connection = DriverManager.getConnection(url(fixture), MariaDbFixture.USER,
                MariaDbFixture.PASSWORD)) {
            Database database = DatabaseFactory.getInstance()
                    .findCorrectDatabaseImplementation(new JdbcConnection(connection));
            new CommandScope(UpdateCommandStep.COMMAND_NAME)
                    .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                    .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, LIQUIBASE_CHANGELOG)
                    .execute();
        }
    }
}
