package dev.idempotent.inbox.examples.crash;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.jdbi.v3.core.Jdbi;

/**
 * The receiver that runs in a child JVM: the seed's warehouse (one {@code stock} row with a
 * running total, changed only through a {@link SqliteInbox}) driven by a line protocol, and able
 * to halt the whole JVM at a chosen {@link Phase} of one message.
 *
 * <p>Arguments: {@code DB [--halt-at PHASE ID] [--busy-timeout-ms MILLIS]}. Once the inbox is
 * open it prints {@code READY pid} and then answers one command per line on standard input:
 *
 * <table>
 *   <caption>The line protocol</caption>
 *   <tr><th>command</th><th>answer</th></tr>
 *   <tr><td>{@code APPLY id qty}</td>
 *       <td>{@code OUTCOME id APPLIED|DUPLICATE|CONFLICT}, or {@code FAILED id ExceptionName}</td></tr>
 *   <tr><td>{@code APPLY_ALL id:qty id:qty ...}</td>
 *       <td>one {@code OUTCOME} or {@code FAILED} line per item, in order, then {@code DONE n}</td></tr>
 *   <tr><td>{@code QUIT}, or the end of input</td><td>closes the inbox, prints {@code BYE}, exits 0</td></tr>
 * </table>
 *
 * <p>With {@code --halt-at PHASE ID}, the inbox's listener prints {@code HALTING PHASE ID} when
 * the message {@code ID} reaches {@code PHASE} and then calls {@link Runtime#halt}: no shutdown
 * hooks, no rollback, no close, no answer. For {@code RECORDED} and {@code EFFECT_DONE} the
 * transaction is still open; for {@code COMMITTED} the commit has returned but the caller, and so
 * any acknowledgement, never learns of it.
 *
 * <p>The stock table is created here with this class's own SQL, so the proof does not depend on
 * how the example {@code Warehouse} is written.
 */
public final class CrashReceiver {

    /** The inbox name the receiver records messages under. */
    public static final String INBOX = "crash-lab";

    /** The exit status of a receiver that halted at its phase; no other path exits with it. */
    public static final int HALT_STATUS = 86;

    static final String READY = "READY";
    static final String HALTING = "HALTING";
    static final String OUTCOME = "OUTCOME";
    static final String FAILED = "FAILED";
    static final String DONE = "DONE";
    static final String BYE = "BYE";
    static final String APPLY = "APPLY";
    static final String APPLY_ALL = "APPLY_ALL";
    static final String QUIT = "QUIT";

    static final String CREATE_STOCK =
            "CREATE TABLE IF NOT EXISTS stock (id INTEGER PRIMARY KEY CHECK (id = 1), total INTEGER NOT NULL)";
    static final String SEED_STOCK = "INSERT INTO stock (id, total) VALUES (1, 0) ON CONFLICT (id) DO NOTHING";
    static final String ADD_TO_STOCK = "UPDATE stock SET total = total + ? WHERE id = 1";
    static final String READ_TOTAL = "SELECT total FROM stock WHERE id = 1";

    private CrashReceiver() {}

    /**
     * Runs the receiver until {@code QUIT}, the end of input, or the halt.
     *
     * @param args {@code DB [--halt-at PHASE ID] [--busy-timeout-ms MILLIS]}
     */
    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: DB [--halt-at PHASE ID] [--busy-timeout-ms MILLIS]");
        }
        Path db = Path.of(args[0]);
        Phase haltAt = null;
        String haltId = null;
        Duration busyTimeout = null;
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--halt-at" -> {
                    haltAt = Phase.valueOf(args[++i]);
                    haltId = args[++i];
                }
                case "--busy-timeout-ms" -> busyTimeout = Duration.ofMillis(Long.parseLong(args[++i]));
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        PrintStream out = System.out;

        Jdbi jdbi = SqliteInbox.jdbi(db);
        jdbi.useHandle(handle -> {
            handle.execute(CREATE_STOCK);
            handle.execute(SEED_STOCK);
        });
        InboxBuilder<SqliteInbox> builder = SqliteInbox.builder(jdbi).name(INBOX);
        if (busyTimeout != null) {
            builder = builder.busyTimeout(busyTimeout);
        }
        if (haltAt != null) {
            builder = builder.listener(new HaltAt(haltAt, haltId, out));
        }
        try (SqliteInbox inbox = builder.build()) {
            out.println(READY + " " + ProcessHandle.current().pid());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null && !line.equals(QUIT)) {
                String[] words = line.trim().split(" +");
                switch (words[0]) {
                    case APPLY -> out.println(apply(inbox, words[1], Long.parseLong(words[2])));
                    case APPLY_ALL -> {
                        for (int i = 1; i < words.length; i++) {
                            int colon = words[i].lastIndexOf(':');
                            out.println(apply(inbox, words[i].substring(0, colon),
                                    Long.parseLong(words[i].substring(colon + 1))));
                        }
                        out.println(DONE + " " + (words.length - 1));
                    }
                    default -> throw new IllegalArgumentException("unknown command: " + line);
                }
            }
        }
        out.println(BYE);
    }

    /** Applies one message and describes the outcome in one protocol line; never throws for it. */
    private static String apply(SqliteInbox inbox, String id, long qty) {
        try {
            Outcome<Integer> outcome = inbox.apply(id, Content.of(qty), tx -> tx.execute(ADD_TO_STOCK, qty));
            String kind = outcome.fold(applied -> "APPLIED", duplicate -> "DUPLICATE", conflict -> "CONFLICT");
            return OUTCOME + " " + id + " " + kind;
        } catch (RuntimeException e) {
            // A failure must reach the parent as a failure, never as an outcome it could count.
            return FAILED + " " + id + " " + e.getClass().getSimpleName();
        }
    }

    /** Halts the JVM when one id reaches one phase. */
    private static final class HaltAt implements InboxListener {
        private final Phase phase;
        private final String id;
        private final PrintStream out;

        HaltAt(Phase phase, String id, PrintStream out) {
            this.phase = phase;
            this.id = id;
            this.out = out;
        }

        @Override
        public void onPhase(String inbox, String messageId, Phase reached) {
            if (reached == phase && messageId.equals(id)) {
                // Say where we stop first, so the parent can tell a halt at the phase from a crash elsewhere.
                out.println(HALTING + " " + reached + " " + messageId);
                out.flush();
                Runtime.getRuntime().halt(HALT_STATUS);
            }
        }
    }
}
