package dev.idempotent.inbox.examples.crash;

import dev.idempotent.inbox.Phase;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The parent's side of a {@link CrashReceiver} running in a child JVM: starts it, waits until it
 * is ready, and speaks its line protocol.
 *
 * <p>Not thread-safe: one thread talks to one receiver.
 */
public final class ReceiverProcess implements AutoCloseable {

    /** How long any single step may take before the receiver is declared broken; a safety net only. */
    public static final Duration STEP_TIMEOUT = Duration.ofSeconds(60);

    private final ChildJvm child;
    private final long pid;

    private ReceiverProcess(ChildJvm child) {
        this.child = child;
        try {
            String ready = child.awaitLine(line -> line.startsWith(CrashReceiver.READY + " "), STEP_TIMEOUT);
            this.pid = Long.parseLong(ready.substring(CrashReceiver.READY.length() + 1));
        } catch (RuntimeException e) {
            child.close();
            throw e;
        }
    }

    /**
     * Starts a receiver on {@code db} and returns once its inbox is open.
     *
     * @param busyTimeout the inbox's busy timeout, or {@code null} for the default
     */
    public static ReceiverProcess start(Path db, Duration busyTimeout) {
        return start(db, List.of(), busyTimeout);
    }

    /** Starts a receiver with default settings on {@code db}; returns once its inbox is open. */
    public static ReceiverProcess start(Path db) {
        return start(db, List.of(), null);
    }

    /**
     * Starts a receiver that halts its JVM when message {@code id} reaches {@code phase}; returns
     * once its inbox is open.
     */
    public static ReceiverProcess startHaltingAt(Path db, Phase phase, String id) {
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(id, "id");
        return start(db, List.of("--halt-at", phase.name(), id), null);
    }

    private static ReceiverProcess start(Path db, List<String> options, Duration busyTimeout) {
        Path file = db.toAbsolutePath();
        List<String> jvmOptions = new ArrayList<>(ChildJvm.FAST_START);
        // sqlite-jdbc unpacks its native library into a temporary directory and deletes it at a clean
        // exit; a halted JVM never exits cleanly, so keep the leftovers beside the database instead.
        jvmOptions.add("-Dorg.sqlite.tmpdir=" + file.getParent());
        List<String> args = new ArrayList<>();
        args.add(file.toString());
        args.addAll(options);
        if (busyTimeout != null) {
            args.add("--busy-timeout-ms");
            args.add(Long.toString(busyTimeout.toMillis()));
        }
        String name = "receiver-" + file.getFileName();
        return new ReceiverProcess(ChildJvm.start(name, jvmOptions, CrashReceiver.class.getName(), args));
    }

    /** The receiver's process id. */
    public long pid() {
        return pid;
    }

    /** Delivers one message and waits for its outcome. */
    public Reply apply(Item item) {
        send(item);
        return awaitReply(item.id());
    }

    /** Delivers one message without waiting for anything. */
    public void send(Item item) {
        child.send(CrashReceiver.APPLY + " " + item.id() + " " + item.qty());
    }

    /**
     * The command that delivers {@code items} in order in one line, for starting several
     * receivers on the same work at the same moment: build it once, {@link #sendLine send} it to
     * each, then {@link #awaitBatch} each.
     */
    public static String batchLine(List<Item> items) {
        StringBuilder line = new StringBuilder(CrashReceiver.APPLY_ALL);
        items.forEach(item -> line.append(' ').append(item.id()).append(':').append(item.qty()));
        return line.toString();
    }

    /** Writes a raw protocol line, such as a {@link #batchLine}. */
    public void sendLine(String line) {
        child.send(line);
    }

    /** Waits for the replies to a {@link #batchLine} of {@code count} items, in delivery order. */
    public List<Reply> awaitBatch(int count) {
        List<Reply> replies = new ArrayList<>(count);
        while (true) {
            String line = child.nextLine(STEP_TIMEOUT);
            if (line.startsWith(CrashReceiver.DONE + " ")) {
                if (replies.size() != count) {
                    throw new IllegalStateException("expected " + count + " replies, the receiver gave " + replies.size());
                }
                return replies;
            }
            replies.add(Reply.parse(line));
        }
    }

    /** Waits for the outcome of message {@code id}. */
    public Reply awaitReply(String id) {
        return Reply.parse(child.awaitLine(line -> Reply.isReplyFor(line, id), STEP_TIMEOUT));
    }

    /**
     * Waits until the receiver has halted: either it announced the halt and exited, or it exited
     * or answered without halting, which {@link Halt#atPhase} then reports as not halted.
     */
    public Halt awaitHalt(String id) {
        String line = child.awaitLine(
                candidate -> candidate.startsWith(CrashReceiver.HALTING + " ") || Reply.isReplyFor(candidate, id),
                STEP_TIMEOUT);
        if (!line.startsWith(CrashReceiver.HALTING + " ")) {
            // It answered instead of halting; stop it so the caller sees a finished process either way.
            return new Halt(null, child.kill(), line);
        }
        Phase phase = Phase.valueOf(line.split(" ")[1]);
        return new Halt(phase, child.awaitExit(STEP_TIMEOUT), line);
    }

    /** Asks the receiver to close its inbox and exit, and waits until it has. */
    public void quit() {
        child.send(CrashReceiver.QUIT);
        child.awaitLine(CrashReceiver.BYE::equals, STEP_TIMEOUT);
        int status = child.awaitExit(STEP_TIMEOUT);
        if (status != 0) {
            throw new IllegalStateException("receiver " + pid + " exited with status " + status + " after QUIT");
        }
    }

    /** The child JVM, for scenarios the protocol does not cover (a kill at a random moment). */
    public ChildJvm jvm() {
        return child;
    }

    /** Stops the receiver forcibly if it still runs. */
    @Override
    public void close() {
        child.close();
    }

    /**
     * One message: a business id and its quantity.
     *
     * @param id the business id; no spaces or colons, since the protocol separates with them
     * @param qty the quantity added to the stock total when the id is first applied
     */
    public record Item(String id, long qty) {
        public Item {
            Objects.requireNonNull(id, "id");
            if (id.isEmpty() || id.contains(" ") || id.contains(":")) {
                throw new IllegalArgumentException("id must be non-empty, without spaces or colons: '" + id + "'");
            }
        }
    }

    /** What the receiver reported for one message. */
    public enum Kind {
        /** Newly applied: the effect ran and committed. */
        APPLIED,
        /** Applied before with the same content: accepted, nothing done now. */
        DUPLICATE,
        /** Applied before with other content: refused, the earlier business kept. */
        CONFLICT,
        /** An exception: nothing may be assumed, and nothing is acknowledged. */
        FAILED;

        /** Whether a sender would be acknowledged: the business is in place. */
        public boolean accepted() {
            return this == APPLIED || this == DUPLICATE;
        }
    }

    /**
     * The receiver's answer for one message.
     *
     * @param id the business id
     * @param kind the outcome, or {@link Kind#FAILED}
     * @param detail the exception's class name for {@link Kind#FAILED}; empty otherwise
     */
    public record Reply(String id, Kind kind, String detail) {
        public Reply {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(detail, "detail");
        }

        static boolean isReplyFor(String line, String id) {
            return line.startsWith(CrashReceiver.OUTCOME + " " + id + " ")
                    || line.startsWith(CrashReceiver.FAILED + " " + id + " ");
        }

        static Reply parse(String line) {
            String[] words = line.split(" ");
            if (words.length == 3 && words[0].equals(CrashReceiver.OUTCOME)) {
                return new Reply(words[1], Kind.valueOf(words[2]), "");
            }
            if (words.length == 3 && words[0].equals(CrashReceiver.FAILED)) {
                return new Reply(words[1], Kind.FAILED, words[2]);
            }
            throw new IllegalStateException("not a reply line: " + line);
        }

        @Override
        public String toString() {
            return kind + (detail.isEmpty() ? "" : " (" + detail + ")");
        }
    }

    /**
     * How a receiver told to halt ended.
     *
     * @param phase the phase it announced before halting, or {@code null} if it never did
     * @param exitStatus its exit status
     * @param lastLine the line that ended the wait
     */
    public record Halt(Phase phase, int exitStatus, String lastLine) {

        /** Whether the receiver halted itself exactly at {@code expected}, and nowhere else. */
        public boolean atPhase(Phase expected) {
            return phase == expected && exitStatus == CrashReceiver.HALT_STATUS;
        }
    }
}
