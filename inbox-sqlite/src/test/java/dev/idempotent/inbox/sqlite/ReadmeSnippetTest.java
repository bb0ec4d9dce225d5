package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's getting-started snippet compiles against this build and does what it says, twice. */
class ReadmeSnippetTest {

    private static final Pattern SNIPPET =
            Pattern.compile("<!-- snippet: getting-started -->\\s*```java\\n(.*?)```", Pattern.DOTALL);

    @TempDir
    Path directory;

    @Test
    void gettingStartedSnippetCompilesAndRuns() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        Matcher matcher = SNIPPET.matcher(readme);
        assertTrue(matcher.find(), "README.md has the getting-started snippet");
        Path source = directory.resolve("Receiver.java");
        Files.writeString(source, matcher.group(1));
        String classpath = System.getProperty("java.class.path");

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int compiled = javac.run(null, null, null,
                "-classpath", classpath, "-d", directory.toString(), source.toString());
        assertEquals(0, compiled, "the snippet compiles");

        assertEquals("ACK snack-7", run(classpath));
        assertEquals("ACK snack-7", run(classpath), "a resend is a duplicate, and still acknowledged");
        long total = SqliteInbox.jdbi(directory.resolve("warehouse.db")).withHandle(handle ->
                handle.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
        assertEquals(7, total, "applied once");
    }

    private String run(String classpath) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process process = new ProcessBuilder(java, "-cp", directory + File.pathSeparator + classpath, "Receiver")
                .directory(directory.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), out);
        List<String> lines = out.lines().toList();
        return lines.get(lines.size() - 1);
    }
}
