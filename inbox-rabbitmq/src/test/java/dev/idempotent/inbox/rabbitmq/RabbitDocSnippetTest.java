package dev.idempotent.inbox.rabbitmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The snippets of docs/rabbitmq.md: the consumer compiles against this build and runs against the
 * test broker, with the snippet's queue and file replaced by the test's own (a message published
 * before it starts is applied and acked by the time it closes); the Spring AMQP listener compiles
 * as it stands, its imports included.
 */
class RabbitDocSnippetTest {

    private static final Pattern SNIPPET = Pattern.compile(
            "<!-- snippet-rabbitmq: consumer -->\\n```java\\n(.*?)```", Pattern.DOTALL);

    private static final Pattern SPRING_SNIPPET = Pattern.compile(
            "<!-- snippet-rabbitmq: spring-listener -->\\n```java\\n(.*?)```", Pattern.DOTALL);

    @TempDir
    Path dir;

    @Test
    void springAmqpListenerSnippetCompiles() throws Exception {
        Matcher snippet = SPRING_SNIPPET.matcher(page());
        assertTrue(snippet.find(), "docs/rabbitmq.md marks the Spring AMQP listener");
        assertTrue(snippet.group(1).contains("private final Inbox<Handle> inbox;"), "the listener says which inbox it calls");
        Path source = dir.resolve("ReceiptListener.java");
        Files.writeString(source, snippet.group(1));
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int compiled = ToolProvider.getSystemJavaCompiler().run(null, diagnostics, diagnostics,
                "-classpath", System.getProperty("java.class.path"), "-d", dir.toString(), source.toString());
        assertEquals(0, compiled, () -> "the snippet compiles:\n" + diagnostics.toString(StandardCharsets.UTF_8));
    }

    private static String page() throws java.io.IOException {
        return Files.readString(Path.of("..", "docs", "rabbitmq.md"), StandardCharsets.UTF_8);
    }

    @Test
    void fromRabbitMqSnippetCompilesAndConsumes() throws Exception {
        Matcher snippet = SNIPPET.matcher(page());
        assertTrue(snippet.find(), "docs/rabbitmq.md marks the consumer snippet");
        Path db = dir.resolve("stock.db");
        try (RabbitFixture rabbit = new RabbitFixture(false)) {
            Jdbi.create("jdbc:sqlite:" + db).useHandle(handle -> {
                handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
                handle.execute("INSERT INTO stock (id, total) VALUES (1, 0)");
            });
            String body = snippet.group(1)
                    .replace("\"receipts\"", "queue")
                    .replace("Path.of(\"stock.db\")", "Path.of(file)")
                    .replace("amqp://guest:guest@127.0.0.1:5672",
                            "amqp://guest:guest@" + RabbitFixture.HOST + ":" + RabbitFixture.PORT)
                    .replace("consumer.close();", "awaitAck.accept(consumer);\nconsumer.close();");
            Path source = dir.resolve("FromRabbitMq.java");
            Files.writeString(source, """
                    import com.rabbitmq.client.Connection;
                    import com.rabbitmq.client.ConnectionFactory;
                    import dev.idempotent.inbox.Content;
                    import dev.idempotent.inbox.rabbitmq.Decoded;
                    import dev.idempotent.inbox.rabbitmq.RabbitInboxConsumer;
                    import dev.idempotent.inbox.sqlite.SqliteInbox;
                    import java.nio.charset.StandardCharsets;
                    import java.nio.file.Path;
                    import java.util.function.Consumer;

                    public class FromRabbitMq {
                        public static void run(String queue, String file, Consumer<RabbitInboxConsumer> awaitAck)
                                throws Exception {
                    %s
                            inbox.close();
                            connection.close();
                        }
                    }
                    """.formatted(body));

            ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            int compiled = javac.run(null, diagnostics, diagnostics, "-classpath", System.getProperty("java.class.path"),
                    "-d", dir.toString(), source.toString());
            assertEquals(0, compiled, () -> "the snippet compiles:\n" + diagnostics.toString(StandardCharsets.UTF_8));

            rabbit.publish("snack-7", "7");
            java.util.function.Consumer<RabbitInboxConsumer> awaitAck =
                    consumer -> RabbitFixture.await("the ack", () -> consumer.stats().acked() == 1);
            try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
                loader.loadClass("FromRabbitMq").getMethod("run", String.class, String.class, java.util.function.Consumer.class)
                        .invoke(null, rabbit.queue, db.toString(), awaitAck);
            }
            long total = Jdbi.create("jdbc:sqlite:" + db)
                    .withHandle(handle -> handle.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
            assertEquals(7, total);
            assertEquals(0, rabbit.ready());
            assertEquals(List.of(), rabbit.takeDeadLetters());
        }
    }
}
