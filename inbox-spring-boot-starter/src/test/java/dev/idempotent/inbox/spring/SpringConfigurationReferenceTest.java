package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Spring Boot properties of docs/configuration.md against the starter: every component of
 * {@link InboxProperties} and of its {@link InboxProperties.Instance} (each of a nested record's,
 * such as {@code inbox.tables.prefix}), and every property of the
 * configuration metadata the starter's jar carries, has a line in the table, and the table names
 * nothing else; so a new property without a line fails here.
 */
class SpringConfigurationReferenceTest {

    private static final Pattern PROPERTY = Pattern.compile("^\\| `([a-z.<>*-]+)`", Pattern.MULTILINE);
    private static final Pattern METADATA_NAME = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]+)\"");
    private static final String INSTANCES = "inbox.instances.<key>.";

    @Test
    void everyPropertyHasALineAndEveryLineAProperty() throws Exception {
        Set<String> properties = new TreeSet<>();
        for (RecordComponent component : InboxProperties.class.getRecordComponents()) {
            if (component.getName().equals("instances")) {
                properties.add(INSTANCES + "*");
            } else {
                add(properties, "inbox.", component);
            }
        }
        for (RecordComponent component : InboxProperties.Instance.class.getRecordComponents()) {
            add(properties, INSTANCES, component);
        }
        Set<String> metadata = metadataNames();
        assertTrue(metadata.contains("inbox.busy-timeout"), "the starter's configuration metadata: " + metadata);
        for (String name : metadata) {
            properties.add(name.equals("inbox.instances") ? INSTANCES + "*" : name);
        }

        assertEquals(properties, documented(), "docs/configuration.md, ## Spring Boot properties: one line per property");
    }

    /** The property of {@code component}, or of each of its components when it is a record of several settings. */
    private static void add(Set<String> properties, String prefix, RecordComponent component) {
        String name = prefix + kebab(component.getName());
        if (component.getType().isRecord()) {
            for (RecordComponent nested : component.getType().getRecordComponents()) {
                add(properties, name + ".", nested);
            }
        } else {
            properties.add(name);
        }
    }

    private static String kebab(String component) {
        return component.replaceAll("([A-Z])", "-$1").toLowerCase();
    }

    /** The properties of the metadata generated into this module's classes, and of the one written by hand. */
    private static Set<String> metadataNames() throws IOException, URISyntaxException {
        Path classes = Path.of(InboxProperties.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Set<String> names = new TreeSet<>();
        for (String file : new String[] {"spring-configuration-metadata.json", "additional-spring-configuration-metadata.json"}) {
            Path json = classes.resolve("META-INF").resolve(file);
            assertTrue(Files.exists(json), json + " is built");
            String text = Files.readString(json, StandardCharsets.UTF_8);
            int properties = text.indexOf("\"properties\"");
            int hints = text.indexOf("\"hints\"", properties);
            Matcher matcher = METADATA_NAME.matcher(text.substring(properties, hints < 0 ? text.length() : hints));
            while (matcher.find()) {
                names.add(matcher.group(1));
            }
        }
        return names;
    }

    private static Set<String> documented() throws IOException {
        String page = Files.readString(Path.of("..", "docs", "configuration.md"), StandardCharsets.UTF_8);
        int start = page.indexOf("\n## Spring Boot properties\n");
        assertTrue(start >= 0, "docs/configuration.md has the section Spring Boot properties");
        int end = page.indexOf("\n## ", start + 1);
        Matcher matcher = PROPERTY.matcher(page.substring(start, end));
        Set<String> names = new TreeSet<>();
        while (matcher.find()) {
            names.add(matcher.group(1));
        }
        return names;
    }
}
