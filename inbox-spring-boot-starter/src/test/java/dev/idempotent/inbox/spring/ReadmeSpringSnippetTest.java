package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's Spring listener ({@code <!-- spring-snippet: listener -->}) compiles against this build. */
class ReadmeSpringSnippetTest {

    private static final Pattern SNIPPET =
            Pattern.compile("<!-- spring-snippet: listener -->\\s*```java\\n(.*?)```", Pattern.DOTALL);

    // The README leaves its imports out, as README snippets do.
    private static final String IMPORTS = """
            import dev.idempotent.inbox.Content;
            import dev.idempotent.inbox.Outcome;
            import dev.idempotent.inbox.spring.SpringInbox;
            import org.springframework.amqp.AmqpRejectAndDontRequeueException;
            import org.springframework.amqp.rabbit.annotation.RabbitListener;
            import org.springframework.amqp.support.AmqpHeaders;
            import org.springframework.jdbc.core.simple.JdbcClient;
            import org.springframework.messaging.handler.annotation.Header;
            import org.springframework.messaging.handler.annotation.Payload;
            import org.springframework.stereotype.Component;
            import org.springframework.transaction.annotation.Transactional;
            """;

    @TempDir
    Path directory;

    @Test
    void theListenerCompiles() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        Matcher snippet = SNIPPET.matcher(readme);
        assertTrue(snippet.find(), "README.md marks the Spring listener");
        String code = snippet.group(1);
        assertTrue(code.lines().count() <= 25, "a short listener");
        Path source = directory.resolve("ReceiptListener.java");
        Files.writeString(source, IMPORTS + code);

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, null, errors, "-proc:none", "-d", directory.toString(),
                "-cp", System.getProperty("java.class.path"), source.toString());

        assertEquals(0, status, errors.toString(StandardCharsets.UTF_8));
        assertTrue(Files.exists(directory.resolve("ReceiptListener.class")));
    }
}
