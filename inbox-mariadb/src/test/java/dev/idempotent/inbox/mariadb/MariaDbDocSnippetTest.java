package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MariaDB snippet of docs/databases.md ({@code <!-- snippet-mariadb: builder -->}) compiles
 * against this build and runs against the test server, with the snippet's host and database
 * replaced by the fixture's.
 */
class MariaDbDocSnippetTest {

    private static final Pattern SNIPPET = Pattern.compile(
            "<!-- snippet-mariadb: builder -->\\n```java\\n(.*?)```", Pattern.DOTALL);

    private final MariaDbFixture fixture = MariaDbFixture.defaultNames();

    @TempDir
    Path classes;

    @AfterEach
    void dropDatabase() {
        fixture.close();
    }

    @Test
    void onMariaDbSnippetCompilesAndBuildsAnInbox() throws Exception {
        String page = Files.readString(Path.of("..", "docs", "databases.md"), StandardCharsets.UTF_8);
        Matcher snippet = SNIPPET.matcher(page);
        assertTrue(snippet.find(), "docs/databases.md marks the MariaDB snippet");
        String body = snippet.group(1).replace("db:3306/shop",
                MariaDbFixture.HOST + ":" + MariaDbFixture.PORT + "/" + fixture.database());
        Path source = classes.resolve("OnMariaDb.java");
        Files.writeString(source, """
                import dev.idempotent.inbox.mariadb.MariaDbInbox;
                import org.jdbi.v3.core.Jdbi;

                public class OnMariaDb {
                    public static void run(String user, String password) {
                %s
                        inbox.close();
                    }
                }
                """.formatted(body));

        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int compiled = javac.run(null, diagnostics, diagnostics, "-classpath", System.getProperty("java.class.path"),
                "-d", classes.toString(), source.toString());
        assertEquals(0, compiled, () -> "the snippet compiles:\n" + diagnostics.toString(StandardCharsets.UTF_8));

        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
            loader.loadClass("OnMariaDb").getMethod("run", String.class, String.class)
                    .invoke(null, MariaDbFixture.USER, MariaDbFixture.PASSWORD);
        }
        int tables = fixture.jdbi().withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM information_schema.TABLES"
                + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'inbox%'").mapTo(Integer.class).one());
        assertEquals(4, tables, "the inbox created its schema, the Kafka offsets' table with it");
    }
}
