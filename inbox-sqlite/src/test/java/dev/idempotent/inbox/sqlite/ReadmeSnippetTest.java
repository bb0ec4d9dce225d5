package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every README snippet marked {@code <!-- snippet: NAME -->} compiles against this build and runs.
 * A snippet that declares a class is compiled as it stands; the getting-started program is run
 * twice in a JVM of its own. Any other snippet is a fragment that uses {@code inbox}, as the
 * README's prose says: it is compiled as the body of a method that takes a {@link SqliteInbox}
 * over a file with the README's {@code stock} table, and run once.
 */
class ReadmeSnippetTest {

    private static final Pattern SNIPPET =
            Pattern.compile("<!-- snippet: ([a-z0-9-]+) -->\\s*```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern CLASS = Pattern.compile("\\bpublic\\s+class\\s+(\\w+)");
    private static final List<String> REQUIRED = List.of("getting-started", "void-effect", "json-content");

    @TempDir
    Path directory;

    @Test
    void everyMarkedSnippetCompilesAndRuns() throws Exception {
        Map<String, String> snippets = snippets();
        assertTrue(snippets.keySet().containsAll(REQUIRED), "README.md marks " + REQUIRED + ": " + snippets.keySet());
        Path classes = Files.createDirectories(directory.resolve("classes"));
        List<String> fragments = new ArrayList<>();
        List<String> sources = new ArrayList<>();
        for (Map.Entry<String, String> snippet : snippets.entrySet()) {
            Matcher declared = CLASS.matcher(snippet.getValue());
            boolean program = declared.find();
            String className = program ? declared.group(1) : fragmentClass(snippet.getKey());
            String source = program ? snippet.getValue() : asMethod(className, snippet.getValue());
            if (!program) {
                fragments.add(className);
            }
            Path file = directory.resolve(className + ".java");
            Files.writeString(file, source);
            sources.add(file.toString());
        }
        String classpath = System.getProperty("java.class.path");

        compile(classpath, classes, sources);

        assertEquals("ACK snack-7", run(classpath, classes));
        assertEquals("ACK snack-7", run(classpath, classes), "a resend is a duplicate, and still acknowledged");
        long total = SqliteInbox.jdbi(directory.resolve("warehouse.db")).withHandle(handle ->
                handle.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
        assertEquals(7, total, "applied once");
        for (String fragment : fragments) {
            runFragment(classes, fragment);
        }
    }

    private static Map<String, String> snippets() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        Map<String, String> snippets = new LinkedHashMap<>();
        Matcher matcher = SNIPPET.matcher(readme);
        while (matcher.find()) {
            assertEquals(null, snippets.put(matcher.group(1), matcher.group(2)),
                    "snippet names are unique: " + matcher.group(1));
        }
        return snippets;
    }

    private static String fragmentClass(String name) {
        StringBuilder className = new StringBuilder("Snippet");
        for (String part : name.split("-")) {
            className.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
        }
        return className.toString();
    }

    private static String asMethod(String className, String body) {
        return """
                import dev.idempotent.inbox.*;
                import dev.idempotent.inbox.sqlite.SqliteInbox;
                import java.time.*;
                import java.util.*;

                public class %s {
                    public static void run(SqliteInbox inbox) throws Exception {
                %s
                    }
                }
                """.formatted(className, body);
    }

    private static void compile(String classpath, Path classes, List<String> sources) {
        List<String> arguments = new ArrayList<>(List.of("-classpath", classpath, "-d", classes.toString()));
        arguments.addAll(sources);
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int compiled = javac.run(null, diagnostics, diagnostics, arguments.toArray(String[]::new));
        assertEquals(0, compiled, () -> "the snippets compile:\n" + diagnostics.toString(StandardCharsets.UTF_8));
    }

    private String run(String classpath, Path classes) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process process = new ProcessBuilder(java, "-cp", classes + File.pathSeparator + classpath, "Receiver")
                .directory(directory.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), out);
        List<String> lines = out.lines().toList();
        return lines.get(lines.size() - 1);
    }

    private void runFragment(Path classes, String className) throws Exception {
        SqliteFixture fixture = new SqliteFixture(Files.createDirectories(directory.resolve(className)));
        fixture.jdbi().useHandle(handle -> {
            handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER)");
            handle.execute("INSERT INTO stock VALUES (1, 0)");
        });
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader());
                SqliteInbox inbox = fixture.builder().build()) {
            Method run = loader.loadClass(className).getMethod("run", SqliteInbox.class);
            run.invoke(null, inbox);
        } catch (InvocationTargetException e) {
            throw new AssertionError("the README snippet in " + className + " failed", e.getCause());
        }
    }
}
