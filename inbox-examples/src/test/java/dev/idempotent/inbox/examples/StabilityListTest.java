package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README's Stability section names every type that carries {@code @Beta}, or has a member
 * that does, in the published modules' sources; so new API marked {@code @Beta} without a word
 * there fails here. ({@code @Beta} is kept in class files only, so the sources are read.)
 */
class StabilityListTest {

    private static final Pattern BETA = Pattern.compile("^\\s*@Beta\\b", Pattern.MULTILINE);

    @Test
    void everyBetaTypeIsNamed() throws IOException {
        Path root = Path.of("..");
        String readme = Files.readString(root.resolve("README.md"), StandardCharsets.UTF_8);
        int start = readme.indexOf("\n## Stability\n");
        assertTrue(start >= 0, "README.md has a Stability section");
        String section = readme.substring(start, readme.indexOf("\n## ", start + 1));

        Set<String> missing = new TreeSet<>();
        try (Stream<Path> sources = Files.walk(root)) {
            sources.filter(path -> path.toString().endsWith(".java"))
                    .filter(path -> path.toString().contains("/src/main/java/"))
                    .filter(path -> !path.toString().contains("/inbox-examples") && !path.toString().contains("/inbox-bench/"))
                    .filter(path -> !path.getFileName().toString().equals("Beta.java"))
                    .filter(StabilityListTest::marked)
                    .map(path -> path.getFileName().toString().replace(".java", ""))
                    .filter(type -> !Pattern.compile("`([a-z]+\\.)*" + type + "[`.]").matcher(section).find())
                    .forEach(missing::add);
        }
        assertTrue(missing.isEmpty(), "README.md, ## Stability: name the @Beta API of " + missing);
    }

    private static boolean marked(Path source) {
        try {
            Matcher matcher = BETA.matcher(Files.readString(source, StandardCharsets.UTF_8));
            return matcher.find();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
