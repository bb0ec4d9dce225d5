package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
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
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The snippets of the README and of docs/: every Java block is marked for the test that compiles
 * it, and those marked {@code <!-- snippet: NAME -->} compile against this build and run here. A
 * snippet that declares a class is compiled as it stands; the getting-started program is run twice
 * in a JVM of its own, as the README says, and must print {@code Applied[...]} and then
 * {@code Duplicate[...]}. Any other snippet is a fragment that uses {@code inbox}, as the guides'
 * prose says: it is compiled as the body of a method that takes a {@link SqliteInbox} over a file
 * with a {@code stock (id, total)} table, and run once.
 */
class DocSnippetTest {

    private static final Path ROOT = Path.of("..");
    private static final Pattern SNIPPET =
            Pattern.compile("<!-- snippet: ([a-z0-9-]+) -->\\n```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern CLASS = Pattern.compile("\\bpublic\\s+class\\s+(\\w+)");
    private static final List<String> REQUIRED = List.of(
            "getting-started", "void-effect", "json-content", "joined-handle", "joined-connection", "prove-effect");

    /**
     * The markers of Java blocks, and so the tests that compile them: this one ({@code snippet}),
     * {@code MariaDbDocSnippetTest}, {@code KafkaDocSnippetTest}, {@code RabbitDocSnippetTest},
     * the starter's {@code SpringDocSnippetTest} and micrometer's {@code DocSnippetTest}.
     */
    private static final Set<String> MARKERS = Set.of(
            "snippet", "snippet-mariadb", "snippet-kafka", "snippet-rabbitmq", "spring-snippet", "snippet-micrometer");
    private static final Pattern JAVA_BLOCK = Pattern.compile("(?m)^```java$");
    private static final Pattern MARKER = Pattern.compile("<!-- ([a-z-]+): [a-z0-9-]+ -->");

    @TempDir
    Path directory;

    @Test
    void everyMarkedSnippetCompilesAndRuns() throws Exception {
        Map<String, String> snippets = snippets();
        assertTrue(snippets.keySet().containsAll(REQUIRED), "the docs mark " + REQUIRED + ": " + snippets.keySet());
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

        assertTrue(run(classpath, classes).startsWith("Applied[id=snack-7, result=1,"), "the first run applies");
        assertTrue(run(classpath, classes).startsWith("Duplicate[id=snack-7,"), "the second run is a duplicate");
        long total = SqliteInbox.jdbi(directory.resolve("warehouse.db")).withHandle(handle ->
                handle.createQuery("SELECT SUM(qty) FROM stock").mapTo(Long.class).one());
        assertEquals(7, total, "applied once");
        for (String fragment : fragments) {
            runFragment(classes, fragment);
        }
    }

    @Test
    void everyJavaBlockIsMarkedForATestThatCompilesIt() throws IOException {
        for (Path page : pages()) {
            String text = Files.readString(page, StandardCharsets.UTF_8);
            Matcher block = JAVA_BLOCK.matcher(text);
            while (block.find()) {
                String before = text.substring(0, block.start()).stripTrailing();
                String lastLine = before.substring(before.lastIndexOf('\n') + 1);
                Matcher marker = MARKER.matcher(lastLine);
                int line = (int) text.substring(0, block.start()).lines().count() + 1;
                assertTrue(marker.matches() && MARKERS.contains(marker.group(1)),
                        page + ":" + line + ": a Java block without one of the markers " + MARKERS + " on the line before");
            }
        }
    }

    @Test
    void theReadmeShowsThePomAndProgramOfGettingStarted() throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
        String guide = Files.readString(ROOT.resolve("docs/getting-started.md"), StandardCharsets.UTF_8);
        for (String marker : List.of("<!-- pom: getting-started -->\n```xml\n", "<!-- snippet: getting-started -->\n```java\n")) {
            assertEquals(block(guide, marker), block(readme, marker), "README.md and docs/getting-started.md show one " + marker);
        }
        assertTrue(block(readme, "<!-- snippet: getting-started -->\n```java\n").lines().count() <= 15, "a short example");
        String slf4j = matchOne(Files.readString(ROOT.resolve("pom.xml")), "<slf4j.version>([^<]+)</slf4j.version>");
        assertTrue(guide.contains("<artifactId>slf4j-simple</artifactId>\n  <version>" + slf4j + "</version>"),
                "the logging backend getting-started.md adds is at the slf4j-api version of the build, " + slf4j);
    }

    private static String block(String text, String marker) {
        int start = text.indexOf(marker);
        assertTrue(start >= 0, "marked: " + marker);
        start += marker.length();
        return text.substring(start, text.indexOf("```\n", start));
    }

    private static String matchOne(String text, String regex) {
        Matcher matcher = Pattern.compile(regex).matcher(text);
        assertTrue(matcher.find(), regex);
        return matcher.group(1);
    }

    /** README.md and the manual's pages; not the notes others leave in docs/_incoming. */
    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(path -> path.toString().endsWith(".md"))
                    .filter(path -> !path.startsWith(ROOT.resolve("docs/_incoming")))
                    .sorted()
                    .forEach(pages::add);
        }
        return pages;
    }

    /** Each name once; a name shown on two pages (the README and getting started) must be the same text. */
    private static Map<String, String> snippets() throws IOException {
        Map<String, String> snippets = new LinkedHashMap<>();
        for (Path page : pages()) {
            Matcher matcher = SNIPPET.matcher(Files.readString(page, StandardCharsets.UTF_8));
            while (matcher.find()) {
                String earlier = snippets.putIfAbsent(matcher.group(1), matcher.group(2));
                assertTrue(earlier == null || earlier.equals(matcher.group(2)),
                        "snippet " + matcher.group(1) + " differs between pages; " + page + " has another text");
            }
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
            throw new AssertionError("the snippet in " + className + " failed", e.getCause());
        }
    }
}
