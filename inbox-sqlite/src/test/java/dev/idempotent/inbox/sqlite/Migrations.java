package dev.idempotent.inbox.sqlite;

import java.nio.file.Path;
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

/** The inbox's migrations applied to a SQLite file as a team's own build would apply them. */
final class Migrations {

    static final String FLYWAY_LOCATION = "classpath:dev/idempotent/inbox/sqlite/flyway";
    static final String LIQUIBASE_CHANGELOG = "dev/idempotent/inbox/sqlite/liquibase/inbox-changelog.xml";

    private Migrations() {}

    static String url(Path file) {
        return "jdbc:sqlite:" + file.toAbsolutePath();
    }

    static void flyway(Path file) {
        Flyway.configure().dataSource(url(file), null, null).locations(FLYWAY_LOCATION).load().migrate();
    }

    static void liquibase(Path file) throws SQLException, LiquibaseException {
        try (Connection connection = DriverManager.getConnection(url(file))) {
            Database database = DatabaseFactory.getInstance()
                    .findCorrectDatabaseImplementation(new JdbcConnection(connection));
            new CommandScope(UpdateCommandStep.COMMAND_NAME)
                    .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                    .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, LIQUIBASE_CHANGELOG)
                    .execute();
        }
    }
}
