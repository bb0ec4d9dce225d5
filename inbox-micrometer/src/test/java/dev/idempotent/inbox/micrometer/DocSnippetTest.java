package dev.idempotent.inbox.micrometer;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Micrometer snippet of docs/observability.md compiles against this build, and the inbox it opens is measured. */
class DocSnippetTest {

    private static final Pattern SNIPPET =
            Pattern.compile("<!-- snippet-micrometer: metered-inbox -->\\s*```java\\n(.*?)```", Pattern.DOTALL);

    @TempDir
    Path directory;

    @Test
    void theMetricsSnippetCompilesAndMeasuresItsInbox() throws Exception {
        String page = Files.readString(Path.of("..", "docs", "observability.md"), StandardCharsets.UTF_8);
        Matcher snippet = SNIPPET.matcher(page);
        assertTrue(snippet.find(), "docs/observability.md marks the snippet metered-inbox");
        Path source = directory.resolve("MeteredInbox.java");
        Files.writeString(source, snippet.group(1));
        Path classes = Files.createDirectories(directory.resolve("classes"));
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = compiler.run(null, null, errors, "-d", classes.toString(),
                "-classpath", System.getProperty("java.class.path"), source.toString());
        assertEquals(0, status, errors.toString(StandardCharsets.UTF_8));

        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        TestObservationRegistry observations = TestObservationRegistry.create();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
            Method open = loader.loadClass("MeteredInbox")
                    .getMethod("open", Path.class, MeterRegistry.class, ObservationRegistry.class);
            SqliteInbox inbox = (SqliteInbox) open.invoke(null, directory.resolve("w.db"), meters, observations);
            try (inbox) {
                assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            }
        }

        assertEquals(1.0, meters.get("inbox.messages").tag("inbox", "receipts").tag("outcome", "applied").counter()
                .count());
        assertEquals(1, meters.get("inbox.apply.transaction").timer().count());
        assertTrue(Double.isNaN(meters.get("inbox.retention.horizon.age").timeGauge().value(TimeUnit.SECONDS)));
        assertThat(observations).hasSingleObservationThat().hasNameEqualTo("inbox.apply")
                .hasLowCardinalityKeyValue("outcome", "applied");
    }
}
