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

/**
 * The Spring listener of docs/spring-boot.md ({@code <!-- spring-snippet: listener -->}) compiles
 * against this build as it stands, its imports included, as a reader would paste it.
 */
class SpringDocSnippetTest {

    private static final Pattern SNIPPET =
            Pattern.compile("<!-- spring-snippet: listener -->\\n```java\\n(.*?)```", Pattern.DOTALL);

    @TempDir
    Path directory;

    @Test
    void theListenerCompilesWithItsOwnImports() throws Exception {
        String page = Files.readString(Path.of("..", "docs", "spring-boot.md"), StandardCharsets.UTF_8);
        Matcher snippet = SNIPPET.matcher(page);
        assertTrue(snippet.find(), "docs/spring-boot.md marks the Spring listener");
        String code = snippet.group(1);
        assertTrue(code.contains("private final SpringInbox inbox;"), "the listener says which inbox it calls");
        Path source = directory.resolve("ReceiptListener.java");
        Files.writeString(source, code);

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, null, errors, "-proc:none", "-d", directory.toString(),
                "-cp", System.getProperty("java.class.path"), source.toString());

        assertEquals(0, status, errors.toString(StandardCharsets.UTF_8));
        assertTrue(Files.exists(directory.resolve("ReceiptListener.class")));
    }
}
