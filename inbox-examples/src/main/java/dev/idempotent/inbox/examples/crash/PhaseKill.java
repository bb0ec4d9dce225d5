package dev.idempotent.inbox.examples.crash;

import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Halt;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Item;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Kind;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Reply;
import dev.idempotent.inbox.examples.crash.StockView.Snapshot;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The seed's lab as a repeatable run: a receiver in a child JVM commits a few messages, then halts
 * at a chosen {@link Phase} of the next one; an independent connection reads what survived; a new
 * receiver in a new JVM gets the same message again; the independent connection reads the state
 * again.
 *
 * <ul>
 *   <li>Halted at {@code RECORDED} or {@code EFFECT_DONE}, before the commit: the message must
 *       have left no inbox row and no change to the total, and its resend must be {@code APPLIED}.
 *   <li>Halted at {@code COMMITTED}, after the commit but before anyone was told: the row and the
 *       quantity must be there, once, and the resend must be a {@code DUPLICATE}, which is
 *       accepted.
 * </ul>
 *
 * <p>Either way the message ends counted exactly once. A {@linkplain #series series} chains the
 * rounds on one file the way a real receiver lives: the JVM restarted after one halt takes the
 * resend, goes on receiving, and is itself halted in the next round.
 */
public final class PhaseKill {

    private PhaseKill() {}

    /**
     * Runs one round on the SQLite file {@code db}: halt, check, restart, resend, check.
     *
     * @param phase where the first receiver halts
     * @param committedBefore messages the first receiver applies (and commits) before the crash
     * @param crashed the message during which it halts, then resent to the restarted receiver
     * @throws IllegalStateException if a receiver misbehaves outside what is checked (for
     *     instance, a message before the crash is not applied)
     */
    public static Report run(Path db, Phase phase, List<Item> committedBefore, Item crashed) {
        return series(db, phase, List.of(new Round(committedBefore, crashed))).get(0);
    }

    /**
     * Runs {@code rounds} one after the other on the SQLite file {@code db}, one receiver JVM per
     * round plus the last restart; each receiver first takes the resend of the previous round's
     * message, then the round's own messages, and halts in the round's last one.
     *
     * @return one report per round, in order
     * @throws IllegalStateException if a receiver misbehaves outside what is checked
     */
    public static List<Report> series(Path db, Phase phase, List<Round> rounds) {
        List<Report> reports = new ArrayList<>(rounds.size());
        ReceiverProcess current = ReceiverProcess.startHaltingAt(db, phase, rounds.get(0).crashed().id());
        try {
            for (int i = 0; i < rounds.size(); i++) {
                Round round = rounds.get(i);
                long haltedPid = current.pid();
                for (Item item : round.committedBefore()) {
                    Reply reply = current.apply(item);
                    if (reply.kind() != Kind.APPLIED) {
                        throw new IllegalStateException("setting up: " + item + " was " + reply + ", not APPLIED");
                    }
                }
                Snapshot before = StockView.read(db);
                current.send(round.crashed());
                Halt halt = current.awaitHalt(round.crashed().id());
                current.close();
                Snapshot afterCrash = StockView.read(db);

                // The restart: a new JVM on the same file, told to halt in the next round's message.
                current = i + 1 < rounds.size()
                        ? ReceiverProcess.startHaltingAt(db, phase, rounds.get(i + 1).crashed().id())
                        : ReceiverProcess.start(db);
                Reply resend = current.apply(round.crashed());
                Snapshot after = StockView.read(db);
                reports.add(new Report(phase, round.crashed(), haltedPid, before, halt, afterCrash, current.pid(),
                        resend, after));
            }
            current.quit();
        } finally {
            current.close();
        }
        return reports;
    }

    /**
     * One round of a series.
     *
     * @param committedBefore messages applied and committed before the halt
     * @param crashed the message the receiver halts in
     */
    public record Round(List<Item> committedBefore, Item crashed) {
        public Round {
            committedBefore = List.copyOf(committedBefore);
            Objects.requireNonNull(crashed, "crashed");
        }
    }

    /**
     * Everything one run saw, and whether it proves the guarantee.
     *
     * @param phase where the first receiver was told to halt
     * @param item the message it halted in
     * @param firstPid the halted receiver's process id
     * @param before committed state before the message was sent
     * @param halt how the first receiver ended
     * @param afterCrash committed state right after the halt, through an independent connection
     * @param secondPid the restarted receiver's process id
     * @param resend what the restarted receiver answered to the resend
     * @param after committed state right after the resend, through an independent connection
     */
    public record Report(
            Phase phase,
            Item item,
            long firstPid,
            Snapshot before,
            Halt halt,
            Snapshot afterCrash,
            long secondPid,
            Reply resend,
            Snapshot after) {

        public Report {
            Objects.requireNonNull(phase, "phase");
            Objects.requireNonNull(item, "item");
            Objects.requireNonNull(before, "before");
            Objects.requireNonNull(halt, "halt");
            Objects.requireNonNull(afterCrash, "afterCrash");
            Objects.requireNonNull(resend, "resend");
            Objects.requireNonNull(after, "after");
        }

        /** Whether the halt came after the commit, so the message must already be in the file. */
        public boolean committedBeforeHalt() {
            return phase == Phase.COMMITTED;
        }

        /** The total the independent connection must see right after the halt. */
        public long expectedTotalAfterCrash() {
            return before.total() + (committedBeforeHalt() ? item.qty() : 0);
        }

        /** The total the independent connection must see at the end: the quantity exactly once. */
        public long expectedFinalTotal() {
            return before.total() + item.qty();
        }

        /** What the resend must return: applied now after a rollback, a duplicate after a commit. */
        public Kind expectedResend() {
            return committedBeforeHalt() ? Kind.DUPLICATE : Kind.APPLIED;
        }

        /** Whether the first receiver halted exactly at the phase. */
        public boolean haltedAtPhase() {
            return halt.atPhase(phase);
        }

        /** Whether the state after the halt is all-or-nothing as the phase demands. */
        public boolean crashStateCorrect() {
            return afterCrash.has(item.id()) == committedBeforeHalt()
                    && afterCrash.total() == expectedTotalAfterCrash()
                    && afterCrash.rows() == before.rows() + (committedBeforeHalt() ? 1 : 0);
        }

        /** Whether the resend got the expected, accepted, outcome. */
        public boolean resendCorrect() {
            return resend.kind() == expectedResend() && resend.kind().accepted();
        }

        /** How many times the final total holds the message's quantity (the quantity is positive). */
        public long timesCounted() {
            return (after.total() - before.total()) / item.qty();
        }

        /** Whether the message ended counted once, with its row, and nothing else changed. */
        public boolean finalStateCorrect() {
            return after.has(item.id()) && after.total() == expectedFinalTotal() && after.rows() == before.rows() + 1;
        }

        /** Whether this run proves the guarantee at its phase. */
        public boolean proven() {
            return problems().isEmpty();
        }

        /** What went wrong, one sentence each; empty when proven. */
        public List<String> problems() {
            List<String> problems = new ArrayList<>();
            if (!haltedAtPhase()) {
                problems.add("receiver " + firstPid + " did not halt at " + phase + ": " + halt);
            }
            if (!crashStateCorrect()) {
                problems.add("after the halt the independent connection saw row=" + yesNo(afterCrash.has(item.id()))
                        + " total=" + afterCrash.total() + " rows=" + afterCrash.rows() + ", expected row="
                        + yesNo(committedBeforeHalt()) + " total=" + expectedTotalAfterCrash());
            }
            if (!resendCorrect()) {
                problems.add("the resend returned " + resend + ", expected " + expectedResend());
            }
            if (!finalStateCorrect()) {
                problems.add("after the resend: row=" + yesNo(after.has(item.id())) + " total=" + after.total()
                        + " rows=" + after.rows() + ", expected the row and total=" + expectedFinalTotal());
            }
            return problems;
        }

        /** One line for logs: phase, item, what was seen, verdict. */
        public String summary() {
            return String.format("%-11s %s/%d: halted %s (exit %d); independent connection after halt: row %s, total %d"
                            + " (before %d); resend -> %s; final row %s, total %d = counted %dx; %s",
                    phase, item.id(), item.qty(), halt.phase() == null ? "NO" : halt.phase(), halt.exitStatus(),
                    yesNo(afterCrash.has(item.id())), afterCrash.total(), before.total(), resend,
                    yesNo(after.has(item.id())), after.total(), timesCounted(), proven() ? "OK" : "FAILED " + problems());
        }

        static String yesNo(boolean value) {
            return value ? "yes" : "no";
        }
    }
}
