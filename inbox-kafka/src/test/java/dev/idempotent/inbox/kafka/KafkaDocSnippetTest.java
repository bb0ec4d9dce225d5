package dev.idempotent.inbox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The snippets of docs/kafka.md compile against this build as they stand, their imports included:
 * the consumer ({@code StockConsumer}) and the Spring Kafka listener. The consumer runs against a
 * real broker in {@code OutcomeMappingTest}, which builds the same consumer with the test's own
 * broker, topic and file.
 */
class KafkaDocSnippetTest {

    @TempDir
    Path directory;

    @ParameterizedTest
    @CsvSource({"consumer, StockConsumer", "spring-listener, ReceiptListener"})
    void compilesAsItStands(String name, String className) throws Exception {
        String page = Files.readString(Path.of("..", "docs", "kafka.md"), StandardCharsets.UTF_8);
        Matcher snippet = Pattern.compile("<!-- snippet-kafka: " + name + " -->\\n```java\\n(.*?)```", Pattern.DOTALL)
                .matcher(page);
        assertTrue(snippet.find(), "docs/kafka.md marks the snippet " + name);
        Path source = directory.resolve(className + ".java");
        Files.writeString(source, snippet.group(1));

        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int compiled = ToolProvider.getSystemJavaCompiler().run(null, diagnostics, diagnostics, "-proc:none",
                "-classpath", System.getProperty("java.class.path"), "-d", directory.toString(), source.toString());

        assertEquals(0, compiled, () -> "the snippet compiles:\n" + diagnostics.toString(StandardCharsets.UTF_8));
        assertTrue(Files.exists(directory.resolve(className + ".class")));
    }
}
