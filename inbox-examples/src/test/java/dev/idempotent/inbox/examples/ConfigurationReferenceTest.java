package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.kafka.KafkaInboxConsumer;
import dev.idempotent.inbox.rabbitmq.RabbitInboxConsumer;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * docs/configuration.md against the code: every setting of the inbox's builder, of the Kafka and
 * RabbitMQ consumers' builders and every option of the example's commands has a line in its
 * table, so a new one without a line fails here. The Spring Boot properties are checked the same
 * way by the starter's {@code SpringConfigurationReferenceTest}.
 */
class ConfigurationReferenceTest {

    private static final Pattern METHOD = Pattern.compile("`([a-zA-Z]+)\\(");
    private static final Pattern OPTION = Pattern.compile("--[a-z][a-z-]*");

    @Test
    void everyInboxBuilderSettingHasALine() throws IOException {
        assertSameSettings("## Inbox builder", settersOf(InboxBuilder.class));
    }

    @Test
    void everyKafkaConsumerSettingHasALine() throws IOException {
        assertSameSettings("## Kafka consumer", settersOf(KafkaInboxConsumer.Builder.class));
    }

    @Test
    void everyRabbitConsumerSettingHasALine() throws IOException {
        assertSameSettings("## RabbitMQ consumer", settersOf(RabbitInboxConsumer.Builder.class));
    }

    @Test
    void everyOptionOfEveryCommandHasALine() throws IOException {
        String page = page();
        CommandLine main = Main.commandLine();
        assertTrue(!main.getSubcommands().isEmpty());
        main.getSubcommands().forEach((name, command) -> {
            Set<String> options = command.getCommandSpec().options().stream()
                    .filter(option -> !option.hidden() && !option.usageHelp() && !option.versionHelp())
                    .map(OptionSpec::longestName)
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> documented = firstCells(section(page, "### " + name), OPTION);
            assertTrue(documented.containsAll(options), "docs/configuration.md, ### " + name
                    + ": a line for each of " + options + "; it has " + documented);
        });
    }

    /** The builder's methods that return a builder: each is a setting. */
    private static Set<String> settersOf(Class<?> builder) {
        return Arrays.stream(builder.getMethods())
                .filter(method -> !Modifier.isStatic(method.getModifiers()) && method.getReturnType() == builder)
                .map(Method::getName)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private static void assertSameSettings(String heading, Set<String> settings) throws IOException {
        Set<String> documented = firstCells(section(page(), heading), METHOD);
        assertEquals(settings, documented, "docs/configuration.md, " + heading + ": one line per builder method");
    }

    private static String page() throws IOException {
        return Files.readString(Path.of("..", "docs", "configuration.md"), StandardCharsets.UTF_8);
    }

    /** The text under {@code heading}, up to the next heading of the same or a higher level. */
    private static String section(String page, String heading) {
        int start = page.indexOf("\n" + heading + "\n");
        assertTrue(start >= 0, "docs/configuration.md has the section " + heading);
        String level = heading.substring(0, heading.indexOf(' ') + 1);
        Matcher next = Pattern.compile("\n#{1," + (level.length() - 1) + "} ").matcher(page);
        int end = next.find(start + heading.length() + 1) ? next.start() : page.length();
        return page.substring(start, end);
    }

    /** What {@code pattern} finds in the first cell of each table row of {@code section}. */
    private static Set<String> firstCells(String section, Pattern pattern) {
        Set<String> found = new TreeSet<>();
        for (String line : section.split("\n")) {
            if (!line.startsWith("| `")) {
                continue;
            }
            String cell = line.substring(2).split("(?<!\\\\)\\|", 2)[0];
            Matcher matcher = pattern.matcher(cell);
            while (matcher.find()) {
                found.add(matcher.groupCount() > 0 ? matcher.group(1) : matcher.group());
            }
        }
        return found;
    }
}
