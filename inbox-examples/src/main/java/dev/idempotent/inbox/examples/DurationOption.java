package dev.idempotent.inbox.examples;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a duration option as the Spring Boot starter's properties take one: ISO-8601
 * ({@code P30D}, {@code PT12H}) or a whole number and a unit ({@code 30d}, {@code 12h},
 * {@code 90m}, {@code 45s}, {@code 500ms}), Spring's simple style. Unlike Spring, a number without
 * a unit is refused: it would be milliseconds there, which no one writing {@code --retention 30}
 * means.
 */
final class DurationOption implements ITypeConverter<Duration> {

    /** What a duration option accepts, for the option descriptions and the error message. */
    static final String ACCEPTED = "ISO-8601, e.g. P30D, or 30d, 12h, 90m, 45s, 500ms";

    private static final Pattern SIMPLE = Pattern.compile("(\\d{1,18})(ms|s|m|h|d)");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * The duration {@code value} names.
     *
     * @throws TypeConversionException naming what is accepted, for anything else
     */
    static Duration parse(String value) {
        String text = value.strip();
        try {
            if (text.startsWith("P") || text.startsWith("p") || text.startsWith("-P") || text.startsWith("-p")) {
                return Duration.parse(text);
            }
            Matcher simple = SIMPLE.matcher(text.toLowerCase(Locale.ROOT));
            if (simple.matches()) {
                long amount = Long.parseLong(simple.group(1));
                return switch (simple.group(2)) {
                    case "ms" -> Duration.ofMillis(amount);
                    case "s" -> Duration.ofSeconds(amount);
                    case "m" -> Duration.ofMinutes(amount);
                    case "h" -> Duration.ofHours(amount);
                    default -> Duration.ofDays(amount);
                };
            }
        } catch (DateTimeParseException | ArithmeticException e) {
            // too large, or not ISO-8601 after all: the same answer as any other mistake
        }
        throw new TypeConversionException("'" + value + "' is not a duration; give " + ACCEPTED);
    }
}
