package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Spring snippets of docs/spring-boot.md ({@code <!-- spring-snippet: NAME -->}) compile
 * against this build as they stand, their imports included, as a reader would paste them.
 */
class SpringDocSnippetTest {

    private static final Pattern SNIPPET =
            Pattern.compile("<!-- spring-snippet: ([a-z0-9-]+) -->\\n```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern CLASS = Pattern.compile("\\bpublic\\s+class\\s+(\\w+)");

    @TempDir
    Path directory;

    @Test
    void everySpringSnippetCompilesWithItsOwnImports() throws Exception {
        String page = Files.readString(Path.of("..", "docs", "spring-boot.md"), StandardCharsets.UTF_8);
        Map<String, String> snippets = new LinkedHashMap<>();
        for (Matcher snippet = SNIPPET.matcher(page); snippet.find(); ) {
            snippets.put(snippet.group(1), snippet.group(2));
        }
        assertTrue(snippets.keySet().containsAll(List.of("listener", "usable-after-failure")),
                "docs/spring-boot.md marks the listener and the service that goes on after a failed effect: "
                        + snippets.keySet());
        assertTrue(snippets.get("listener").contains("private final SpringInbox inbox;"),
                "the listener says which inbox it calls");

        List<String> sources = new ArrayList<>();
        List<Path> classes = new ArrayList<>();
        for (Map.Entry<String, String> snippet : snippets.entrySet()) {
            Matcher declared = CLASS.matcher(snippet.getValue());
            assertTrue(declared.find(), "spring-snippet " + snippet.getKey() + " declares a public class");
            Path source = directory.resolve(declared.group(1) + ".java");
            Files.writeString(source, snippet.getValue());
            sources.add(source.toString());
            classes.add(directory.resolve(declared.group(1) + ".class"));
        }
        List<String> arguments = new ArrayList<>(List.of(
                "-proc:none", "-d", directory.toString(), "-cp", System.getProperty("java.class.path")));
        arguments.addAll(sources);

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, null, errors, arguments.toArray(String[]::new));

        assertEquals(0, status, errors.toString(StandardCharsets.UTF_8));
        for (Path compiled : classes) {
            assertTrue(Files.exists(compiled), compiled + " was written");
        }
    }
}
