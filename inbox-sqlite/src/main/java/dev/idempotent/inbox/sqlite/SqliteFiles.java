package dev.idempotent.inbox.sqlite;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** Which file a connection writes, and what SQLite's error messages say that no result code does. */
final class SqliteFiles {

    private SqliteFiles() {}

    /** The path of {@code connection}'s main database, or "" for a temporary or in-memory one. */
    static String mainFile(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT file FROM pragma_database_list WHERE name = 'main'")) {
            String file = rs.next() ? rs.getString(1) : null;
            return file == null ? "" : file;
        }
    }

    /** Whether two paths SQLite reported name one file; links and relative forms are resolved. */
    static boolean same(String a, String b) {
        if (a.equals(b)) {
            return true;
        }
        if (a.isEmpty() || b.isEmpty()) {
            return false;
        }
        try {
            return Path.of(a).toRealPath().equals(Path.of(b).toRealPath());
        } catch (IOException e) {
            return false;
        }
    }

    // SQLite reports these as SQLITE_ERROR, told apart by message only; its messages have been
    // stable for these since savepoints and tables existed.
    static boolean noSuchSavepoint(SQLException failure) {
        return String.valueOf(failure.getMessage()).contains("no such savepoint");
    }

    static boolean noTransactionActive(SQLException failure) {
        return String.valueOf(failure.getMessage()).contains("no transaction is active");
    }
}
