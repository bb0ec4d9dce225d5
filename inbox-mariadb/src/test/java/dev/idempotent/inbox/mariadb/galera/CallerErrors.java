package dev.idempotent.inbox.mariadb.galera;

import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.OutcomeUnknownException;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * The errors callers saw, counted by what they were (class, failure kind, the server's error
 * number and SQLState, and whether the effect's own statement threw it), with the ones a caller
 * may not simply retry kept whole: anything {@link FailureKind#of} does not classify
 * {@link FailureKind#RETRYABLE} ({@link OutcomeUnknownException} is). The inbox passes the
 * effect's own exception on unchanged, so a deadlock that hits the effect's statement reaches the
 * caller as the effect's exception, retryable by its SQLState alone.
 */
final class CallerErrors {

    private final Map<String, LongAdder> seen = new ConcurrentHashMap<>();
    private final List<Throwable> untyped = new CopyOnWriteArrayList<>();
    private final LongAdder unknown = new LongAdder();
    private final Map<String, List<String>> history = new ConcurrentHashMap<>();
    private final Set<String> unknownIds = ConcurrentHashMap.newKeySet();

    /**
     * Counts {@code failure}, seen {@code where} (a short phrase: "apply", "caller's commit"), and
     * tells whether the call may be retried.
     */
    boolean retryable(String where, Throwable failure, List<String> ids) {
        FailureKind kind = FailureKind.of(failure);
        // the inbox's message says what it was doing: committing, claiming, releasing a savepoint ...
        String origin = failure instanceof InboxException ? " \"" + firstLine(failure.getMessage()).split(";")[0] + "\"" : fromEffect(failure) ? " (the effect's own)" : " (not the inbox's)";
        String description = where + ": " + describe(failure) + origin + " -> " + kind;
        seen.computeIfAbsent(description, key -> new LongAdder()).increment();
        for (String id : ids) {
            history.computeIfAbsent(id, key -> new CopyOnWriteArrayList<>()).add(description);
        }
        if (failure instanceof OutcomeUnknownException || where.contains("caller's commit") && connectionLost(failure)) {
            // a joined call's commit is the caller's: a lost connection leaves its outcome unknown too
            unknown.increment();
            unknownIds.addAll(ids);
        }
        // A joined caller opens its connection itself: no inbox call was made.
        if (kind != FailureKind.RETRYABLE && !where.contains("caller's connection")) {
            untyped.add(failure);
            return false;
        }
        return true;
    }

    private static boolean connectionLost(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08")) {
                return true;
            }
        }
        return false;
    }

    private static boolean fromEffect(Throwable failure) {
        for (StackTraceElement frame : failure.getStackTrace()) {
            if (frame.getClassName().equals(GaleraDatabase.class.getName()) && frame.getMethodName().equals("recordRun")) {
                return true;
            }
        }
        return false;
    }

    static String describe(Throwable failure) {
        StringBuilder text = new StringBuilder(failure.getClass().getSimpleName());
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                text.append(" [").append(sql.getErrorCode()).append('/').append(sql.getSQLState()).append(' ')
                        .append(t.getClass().getSimpleName()).append(": ")
                        .append(firstLine(sql.getMessage())).append(']');
                break;
            }
        }
        return text.toString();
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        // the driver numbers connections: leave the number out, so that the same error counts once
        String line = message.lines().findFirst().orElse("").replaceFirst("^\\(conn=\\d+\\) ", "");
        return line.length() > 140 ? line.substring(0, 140) + "..." : line;
    }

    /** The errors a caller may not retry, described. */
    List<String> untyped() {
        return untyped.stream().map(CallerErrors::describe).distinct().toList();
    }

    /** The errors deliveries of {@code id} met, in order. */
    List<String> history(String id) {
        return history.getOrDefault(id, List.of());
    }

    /** Whether a call that delivered {@code id} ended with its outcome unknown. */
    boolean outcomeUnknown(String id) {
        return unknownIds.contains(id);
    }

    /** How many calls ended with {@link OutcomeUnknownException}. */
    long outcomeUnknown() {
        return unknown.sum();
    }

    /** One line per kind of error seen, with its count. */
    String summary() {
        Map<String, Long> sorted = new TreeMap<>();
        seen.forEach((key, count) -> sorted.put(key, count.sum()));
        StringBuilder text = new StringBuilder();
        sorted.forEach((key, count) -> text.append(String.format("  %7d  %s%n", count, key)));
        return text.length() == 0 ? "  none\n" : text.toString();
    }
}
