package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.examples.crash.CrashReceiver;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import dev.idempotent.inbox.examples.publisher.Attempt;
import dev.idempotent.inbox.examples.publisher.DeliveryListener;
import dev.idempotent.inbox.examples.publisher.DeliveryReport;
import dev.idempotent.inbox.examples.publisher.Enqueued;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.ItemsFile;
import dev.idempotent.inbox.examples.publisher.Outbox;
import dev.idempotent.inbox.examples.publisher.OutboxItem;
import dev.idempotent.inbox.examples.publisher.Publisher;
import dev.idempotent.inbox.examples.publisher.PublisherSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Enqueues shipments in the publisher's outbox and delivers everything pending. */
@Command(name = "publish", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = {"Enqueues shipments in the outbox, then delivers every pending item until it is acked,"
                + " rejected or exhausted.",
                "Exits 0 only when nothing is left pending or exhausted."},
        footerHeading = "%nThe items file:%n",
        footer = {"CSV in UTF-8, one item a line: id,qty or id,qty,origin. An optional first line id,qty or"
                + " id,qty,origin is a header; blank lines and lines starting with # are skipped. Quote a field"
                + " that holds a comma or a double quote, and double the quotes inside it: \"crate 3, shelf \"\"B\"\"\",2."
                + " origin, optional, is when the business was created, in ISO-8601 (2024-05-01T12:00:00Z);"
                + " without it, the time the item is first enqueued. A malformed line is reported with its"
                + " number and nothing is enqueued."},
        exitCodeListHeading = ExitCodes.HEADING,
        exitCodeList = {" 0:nothing is left pending or exhausted (rejected items are settled: they are listed)",
                " 1:items are left pending or exhausted", ExitCodes.USAGE_LINE,
                "  :(--outbox naming a directory, or a file in a directory that does not exist; --to that is not"
                        + " http://HOST:PORT; --requeue of an id that is not exhausted: nothing is requeued)",
                ExitCodes.INPUT_LINE,
                ExitCodes.DATABASE_LINE, ExitCodes.SOFTWARE_LINE})
final class PublishCommand implements Callable<Integer> {

    private static final int SHOWN_PARKED = 20;

    @Spec
    CommandSpec spec;

    @Option(names = "--outbox", required = true, paramLabel = "FILE", description = "The publisher's SQLite file, created if absent.")
    Path outboxFile;

    @Option(names = "--to", required = true, paramLabel = "URL",
            description = "The receiver, as http://HOST:PORT, for example http://127.0.0.1:8080 (serve's default"
                    + " port). Repeat it for instances of one warehouse"
                    + " that share a database: the s-th enqueued item goes first to URL number (s mod n, counting from 0),"
                    + " and each uncertain attempt moves it on to the next URL in the list.")
    List<String> to;

    @Option(names = "--token", paramLabel = "T", description = "Send 'Authorization: Bearer T'.")
    String token;

    // Plain options rather than picocli's argument groups, whose messages for a wrong combination
    // ("expected only one match") name no option; the combinations are checked in itemsToEnqueue.
    @Option(names = "--id", paramLabel = "ID", description = "The shipment's id; with --qty.")
    String id;

    @Option(names = "--qty", paramLabel = "N", description = "The shipment's quantity; with --id.")
    Integer qty;

    @Option(names = "--file", paramLabel = "ITEMS.csv",
            description = "A CSV file of items to enqueue, in order: id,qty or id,qty,origin (see below).")
    Path file;

    @Option(names = "--requeue", arity = "0..*", paramLabel = "ID",
            description = "Make exhausted items pending again, with a fresh --max-attempts, before delivering: all of"
                    + " them, or the ids given. An id that is not exhausted is refused and nothing is requeued.")
    List<String> requeue;

    @Option(names = "--max-attempts", paramLabel = "N", defaultValue = "8",
            description = "Attempts per item before it is parked as exhausted (default ${DEFAULT-VALUE}).")
    int maxAttempts;

    @Option(names = "--window", paramLabel = "N", defaultValue = "8",
            description = "Requests in flight at once (default ${DEFAULT-VALUE}).")
    int window;

    @Option(names = "--timeout-ms", paramLabel = "MS", defaultValue = "10000",
            description = "Wait this long for a response before the attempt is uncertain (default ${DEFAULT-VALUE}).")
    long timeoutMillis;

    @Option(names = "--backoff-ms", paramLabel = "MS", defaultValue = "100",
            description = "The wait after the first uncertain attempt; it doubles up to --max-backoff-ms (default ${DEFAULT-VALUE}).")
    long backoffMillis;

    @Option(names = "--max-backoff-ms", paramLabel = "MS", defaultValue = "5000",
            description = "The longest wait between two attempts (default ${DEFAULT-VALUE}).")
    long maxBackoffMillis;

    @Option(names = "--max-resend-age", paramLabel = "DURATION",
            description = "Stop sending an item this long after it was first enqueued (its origin time) and park it as"
                    + " exhausted, as " + DurationOption.ACCEPTED + " (default: no limit). Give the receivers"
                    + " serve --sender-max-resend-age with the same value.")
    Duration maxResendAge;

    @Option(names = "--park-on-auth-failure",
            description = "Park an item as rejected, reason 'token refused', when the receiver answers 401. By default"
                    + " a 401 is uncertain and the item is resent: a corrected --token would deliver it.")
    boolean parkOnAuthFailure;

    // Hidden: an experiment switch, like the crash receiver's --halt-at, not an operator's option.
    @Option(names = "--halt-after-ack", paramLabel = "ID", hidden = true,
            description = "For experiments: once the verified ACK for ID arrives, print 'HALTING ACK_VERIFIED ID' and halt"
                    + " this JVM (no shutdown hooks, exit status 86) before the completion mark is written.")
    String haltAfterAck;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        PublisherSettings settings = settings();
        CommandError.requireFileInExistingDirectory(spec.commandLine(), "--outbox", outboxFile);
        // Read whole before the outbox is opened: a bad file enqueues nothing and creates nothing.
        List<Outbox.Item> toEnqueue = itemsToEnqueue();
        if (requeue != null && !requeue.isEmpty() && !Files.exists(outboxFile)) {
            throw new ParameterException(spec.commandLine(), "--requeue " + requeue.get(0) + ": --outbox " + outboxFile
                    + " does not exist, so it holds no exhausted item; give the outbox the items were enqueued in");
        }
        try (Outbox outbox = openOutbox()) {
            if (spec.commandLine().getParseResult().hasMatchedOption("--requeue")) {
                requeue(out, outbox);
            }
            if (!toEnqueue.isEmpty()) {
                reportEnqueued(out, toEnqueue, outbox.enqueueAll(toEnqueue));
            }
            out.println("delivering pending items to " + (to.size() == 1 ? settings.receiptsUri()
                    : settings.receivers().stream().map(URI::toString).collect(Collectors.joining(", "))));
            Map<URI, AtomicLong> byReceiver = new LinkedHashMap<>();
            settings.receivers().forEach(receiver -> byReceiver.put(receiver, new AtomicLong()));
            DeliveryListener listener = new DeliveryListener() {
                @Override
                public void onAttempt(Attempt attempt) {
                    byReceiver.get(attempt.receiver()).incrementAndGet();
                }

                @Override
                public void onVerifiedAck(String id, boolean applied) {
                    if (id.equals(haltAfterAck)) {
                        out.println("HALTING ACK_VERIFIED " + id);
                        out.flush();
                        Runtime.getRuntime().halt(CrashReceiver.HALT_STATUS);
                    }
                }
            };
            DeliveryReport report = new Publisher(outbox, settings, listener).deliverPending();
            out.printf("acked %d (duplicates confirmed %d), rejected %d, exhausted %d; attempts %d (resends %d)%n",
                    report.acked(), report.duplicatesConfirmed(), report.rejected(), report.exhausted(),
                    report.attempts(), report.resends());
            if (to.size() > 1) {
                out.println("attempts by receiver: " + byReceiver.entrySet().stream()
                        .map(entry -> entry.getKey() + " " + entry.getValue().get())
                        .collect(Collectors.joining(", ")));
            }
            Map<ItemState, Long> counts = outbox.counts();
            out.printf("outbox: %d acked, %d pending, %d rejected, %d exhausted%n", counts.get(ItemState.ACKED),
                    counts.get(ItemState.PENDING), counts.get(ItemState.REJECTED), counts.get(ItemState.EXHAUSTED));
            showParked(out, outbox.parked());
            if (counts.get(ItemState.EXHAUSTED) > 0) {
                out.println("exhausted items stay in the outbox: --requeue makes them pending again (all of them,"
                        + " or --requeue ID...)");
            }
            boolean settled = counts.get(ItemState.PENDING) == 0 && counts.get(ItemState.EXHAUSTED) == 0;
            return settled ? 0 : 1;
        }
    }

    private void requeue(PrintStream out, Outbox outbox) {
        List<String> ids = requeue == null ? List.of() : requeue;
        try {
            out.println("requeued " + outbox.requeue(ids) + " exhausted items");
        } catch (Outbox.NotExhausted e) {
            throw new ParameterException(spec.commandLine(), "--requeue " + e.id() + ": "
                    + (e.state().isEmpty() ? "no such item in the outbox" : "the item is "
                    + e.state().get().name().toLowerCase(Locale.ROOT) + ", not exhausted")
                    + "; give ids of exhausted items, or no id for all of them (nothing was requeued)");
        }
    }

    /** The {@code --to} values as receivers: http:// or https://, a host, optionally a port and a path. */
    private List<URI> receivers() {
        List<URI> receivers = new ArrayList<>(to.size());
        for (String value : to) {
            URI uri = null;
            try {
                uri = new URI(value);
            } catch (URISyntaxException e) {
                // answered below, with what would be accepted
            }
            boolean http = uri != null
                    && ("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()));
            // A port that is not a number leaves the URI without a host (a "registry" authority).
            if (!http || uri.getHost() == null || uri.getRawUserInfo() != null || uri.getRawQuery() != null
                    || uri.getRawFragment() != null) {
                throw new ParameterException(spec.commandLine(), "--to " + value + " is not a receiver's address;"
                        + " give http://HOST:PORT, for example http://127.0.0.1:8080");
            }
            receivers.add(uri);
        }
        return receivers;
    }

    private PublisherSettings settings() {
        List<URI> receivers = receivers();
        // Checked here, not only by PublisherSettings, whose messages name its fields rather than the options.
        requireOption(maxAttempts >= 1, "--max-attempts must be at least 1, was " + maxAttempts);
        requireOption(window >= 1, "--window must be at least 1, was " + window);
        requireOption(timeoutMillis >= 1, "--timeout-ms must be at least 1, was " + timeoutMillis);
        requireOption(maxBackoffMillis >= 0, "--max-backoff-ms must be at least 0, was " + maxBackoffMillis);
        requireOption(backoffMillis >= 0 && backoffMillis <= maxBackoffMillis,
                "--backoff-ms must be from 0 to --max-backoff-ms (" + maxBackoffMillis + "), was " + backoffMillis);
        requireOption(maxResendAge == null || !(maxResendAge.isNegative() || maxResendAge.isZero()),
                "--max-resend-age must be positive, was " + maxResendAge);
        requireOption(token == null || !token.isBlank(), "--token must not be blank");
        try {
            PublisherSettings settings = PublisherSettings.to(receivers)
                    .withMaxAttempts(maxAttempts)
                    .withWindow(window)
                    .withRequestTimeout(Duration.ofMillis(timeoutMillis))
                    .withBackoff(Duration.ofMillis(backoffMillis), Duration.ofMillis(maxBackoffMillis));
            if (maxResendAge != null) {
                settings = settings.withMaxResendAge(maxResendAge);
            }
            if (parkOnAuthFailure) {
                settings = settings.withOnAuthFailure(PublisherSettings.AuthFailure.PARK);
            }
            return token == null ? settings : settings.withToken(token);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private void requireOption(boolean valid, String message) {
        if (!valid) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    private List<Outbox.Item> itemsToEnqueue() {
        if (file != null && (id != null || qty != null)) {
            throw new ParameterException(spec.commandLine(), "--file cannot be given with "
                    + (id != null ? "--id" : "--qty") + "; give either --id ID --qty N or --file ITEMS.csv");
        }
        if (file == null && id == null && qty == null) {
            return List.of();
        }
        if (file == null) {
            if (id == null || qty == null) {
                throw new ParameterException(spec.commandLine(), (id == null ? "--qty needs --id" : "--id needs --qty")
                        + "; give either --id ID --qty N or --file ITEMS.csv");
            }
            Optional<String> idProblem = ProtocolV1.idProblem(id);
            if (idProblem.isPresent()) {
                throw new ParameterException(spec.commandLine(), "--id: " + idProblem.get());
            }
            if (qty < 1) {
                throw new ParameterException(spec.commandLine(), "--qty must be at least 1, was " + qty);
            }
            return List.of(new Outbox.Item(id, qty));
        }
        String option = "--file " + file;
        if (Files.isDirectory(file)) {
            throw new CommandError(ExitCodes.INPUT, option + " is a directory, not a CSV file");
        }
        try {
            return ItemsFile.read(file);
        } catch (ItemsFile.Malformed e) {
            throw new CommandError(ExitCodes.INPUT, option + " line " + e.line() + ": " + e.reason());
        } catch (NoSuchFileException e) {
            throw new CommandError(ExitCodes.INPUT, option + " does not exist");
        } catch (AccessDeniedException e) {
            throw new CommandError(ExitCodes.INPUT, option + " cannot be read: permission denied");
        } catch (IOException e) {
            throw new CommandError(ExitCodes.INPUT, option + " cannot be read: " + e.getMessage());
        }
    }

    private Outbox openOutbox() {
        try {
            return Outbox.open(outboxFile);
        } catch (InboxStorageException e) {
            throw CommandError.database("--outbox", outboxFile.toString(), true, e);
        }
    }

    private static void reportEnqueued(PrintStream out, List<Outbox.Item> items, List<Enqueued> results) {
        int added = 0;
        int again = 0;
        int refused = 0;
        for (int i = 0; i < results.size(); i++) {
            switch (results.get(i)) {
                case ADDED -> added++;
                case ALREADY_ENQUEUED -> again++;
                case REFUSED_OTHER_QTY -> {
                    refused++;
                    if (refused <= SHOWN_PARKED) {
                        out.println("refused " + items.get(i).id() + ": already enqueued with another qty");
                    }
                }
            }
        }
        out.printf("enqueued %d items: %d new, %d already enqueued, %d refused (another qty for a known id)%n",
                results.size(), added, again, refused);
    }

    private static void showParked(PrintStream out, List<OutboxItem> parked) {
        for (int i = 0; i < Math.min(parked.size(), SHOWN_PARKED); i++) {
            OutboxItem item = parked.get(i);
            out.printf("  %s %s after %d attempts: %s%n", item.state().name().toLowerCase(Locale.ROOT),
                    item.id(), item.attempts(), item.reason());
        }
        if (parked.size() > SHOWN_PARKED) {
            out.printf("  ... and %d more parked items%n", parked.size() - SHOWN_PARKED);
        }
    }
}
