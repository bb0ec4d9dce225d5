package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.BatchCompletion;
import dev.idempotent.inbox.CallContext;
import dev.idempotent.inbox.CallObserver;
import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.ContentStorage;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxRetention;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageEffect;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.ResultInbox;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.StoredResult;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one implementation of {@link Inbox} over any {@link InboxStore}: validation, the claim, the
 * decision between applied, duplicate and conflict, the effect, commit or rollback, retention,
 * counters, listener calls and logs. Adapters open it with {@link #open} and expose it through
 * their own inbox class; they do not re-implement any of it.
 *
 * <p>Logs go to the logger {@code dev.idempotent.inbox.Inbox} and carry the inbox name, the id and
 * the outcome, never the content.
 *
 * @param <H> the transaction handle effects receive
 */
public final class InboxEngine<H> implements Inbox<H> {

    private static final Logger log = LoggerFactory.getLogger(Inbox.class);

    private final InboxSettings settings;
    private final InboxStore<H> store;
    private final TransactionRunner<H> transactions;
    private final InboxPurger purger;
    private final CallCounters counters = new CallCounters();
    private final AtomicBoolean closed = new AtomicBoolean();
    // Set on the thread that runs one of this inbox's effects, while it runs: a call from there
    // would wait for the transaction it runs in (or, under group commit, lead a group inside one).
    private final ThreadLocal<Boolean> inEffect = new ThreadLocal<>();

    private InboxEngine(InboxSettings settings, InboxStore<H> store) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.store = Objects.requireNonNull(store, "store");
        this.transactions = runnerFor(settings, store, this::notifyGroupCommitted);
        this.purger = new InboxPurger(this, transactions, store, counters);
    }

    /**
     * The inbox over {@code store}: the one way adapters reach the core's engine.
     *
     * @param <H> the transaction handle effects receive
     * @param settings validated settings, as {@link dev.idempotent.inbox.InboxBuilder} made them
     * @param store the adapter's storage; closed with the inbox
     * @return the open inbox
     */
    public static <H> InboxEngine<H> open(InboxSettings settings, InboxStore<H> store) {
        return new InboxEngine<>(settings, store);
    }

    private static <H> TransactionRunner<H> runnerFor(InboxSettings settings, InboxStore<H> store,
            IntConsumer groupCommitted) {
        if (settings.commitMode() == CommitMode.GROUP) {
            return new GroupCommit<>(store, settings.busyTimeout(), settings.maxGroupSize(), settings.maxGroupWait(),
                    groupCommitted);
        }
        return store.writers() == InboxStore.Writers.ONE
                ? new OneWriterTransactions<>(store, settings.busyTimeout())
                : new SerialTransactions<>(store);
    }

    /**
     * Behaves as {@link Inbox#apply(String, Content, Instant, Effect)}.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param id the business id
     * @param content the content
     * @param originTime the origin time, or {@code null} when unknown
     * @param effect the business change
     * @return the outcome, after its commit
     * @throws X the effect's own exception, unchanged
     */
    @Override
    public <R, X extends Exception> Outcome<R> apply(
            String id, Content content, Instant originTime, Effect<H, R, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        CallObserver.Observed observed = settings.observer().start(settings.name(), id);
        Outcome<R> outcome;
        // The context is captured inside the observer's scope, so an effect run on another thread sees it.
        try (CallContext.Scope scope = observed.open()) {
            outcome = applyObserved(id, content, originTime, effect);
        } catch (Exception | Error failure) {
            observeFailure(observed, id, failure);
            throw failure;
        }
        observeFinished(observed, outcome);
        return outcome;
    }

    private <R, X extends Exception> Outcome<R> applyObserved(
            String id, Content content, Instant originTime, Effect<H, R, X> effect) throws X {
        checkCallable("apply");
        long started = System.nanoTime();
        validate(id, content, originTime, started);
        CallContext.Captured context = captureCallContext();
        Thread caller = Thread.currentThread();
        // Written where the work runs (under group commit, another thread); the runner's hand-back
        // of the result publishes it to this thread.
        long[] workStarted = {0};
        Outcome<R> outcome;
        try {
            outcome = transactions.run(tx -> {
                workStarted[0] = System.nanoTime();
                return applyWithin(tx, id, content, originTime, effect, context, caller);
            });
        } catch (Exception failure) {
            notifyTimed(id, started, workStarted[0]);
            countFailure(id, failure);
            notifyFailure(id, failure, started);
            throw Exceptions.<X>asThrownBy(failure);
        } catch (Error failure) {
            notifyTimed(id, started, workStarted[0]);
            countFailure(id, failure);
            notifyFailure(id, failure, started);
            throw failure;
        }
        notifyTimed(id, started, workStarted[0]);
        committed(outcome, started);
        return outcome;
    }

    /**
     * Behaves as {@link Inbox#applyJoined}: the claim and the effect in a savepoint of the
     * caller's transaction; counted when the caller reports its commit.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param transaction the caller's handle
     * @param id the business id
     * @param content the content
     * @param originTime the origin time, or {@code null} when unknown
     * @param effect the business change
     * @return the outcome, pending the caller's commit
     * @throws X the effect's own exception, unchanged
     */
    @Override
    public <R, X extends Exception> PendingOutcome<R> applyJoined(
            H transaction, String id, Content content, Instant originTime, Effect<H, R, X> effect) throws X {
        Objects.requireNonNull(transaction, "transaction");
        Objects.requireNonNull(effect, "effect");
        CallObserver.Observed observed = settings.observer().start(settings.name(), id);
        try (CallContext.Scope scope = observed.open()) {
            return applyJoinedObserved(transaction, id, content, originTime, effect, observed);
        } catch (Exception | Error failure) {
            observeFailure(observed, id, failure);
            throw failure;
        }
    }

    private <R, X extends Exception> PendingOutcome<R> applyJoinedObserved(H transaction, String id, Content content,
            Instant originTime, Effect<H, R, X> effect, CallObserver.Observed observed) throws X {
        checkCallable("applyJoined");
        long started = System.nanoTime();
        validate(id, content, originTime, started);
        Thread caller = Thread.currentThread();
        Outcome<R> outcome;
        try {
            StoreTransaction<H> tx = store.join(transaction);
            tx.savepoint();
            try {
                // The caller's own thread runs the effect, so its context is in place already.
                outcome = applyWithin(tx, id, content, originTime, effect, null, caller);
                tx.releaseSavepoint();
            } catch (Exception | Error failure) {
                try {
                    tx.rollbackToSavepoint();
                } catch (RuntimeException rollbackFailure) {
                    failure.addSuppressed(rollbackFailure);
                }
                throw failure;
            }
        } catch (Exception failure) {
            countFailure(id, failure);
            notifyFailure(id, failure, started);
            throw Exceptions.<X>asThrownBy(failure);
        } catch (Error failure) {
            countFailure(id, failure);
            notifyFailure(id, failure, started);
            throw failure;
        }
        return new Pending<>(outcome, started, observed);
    }

    /** A joined call's outcome, counted once when the caller reports its commit. */
    private final class Pending<R> implements PendingOutcome<R> {

        private static final int OPEN = 0;
        private static final int COMMITTED = 1;
        private static final int ROLLED_BACK = 2;

        private final Outcome<R> outcome;
        private final long started;
        private final CallObserver.Observed observed;
        private final AtomicInteger state = new AtomicInteger(OPEN);

        Pending(Outcome<R> outcome, long started, CallObserver.Observed observed) {
            this.outcome = outcome;
            this.started = started;
            this.observed = observed;
        }

        @Override
        public String id() {
            return outcome.id();
        }

        @Override
        public Outcome<R> uncommitted() {
            return outcome;
        }

        @Override
        public Outcome<R> committed() {
            if (state.compareAndSet(OPEN, COMMITTED)) {
                InboxEngine.this.committed(outcome, started);
                observeFinished(observed, outcome);
            } else if (state.get() == ROLLED_BACK) {
                throw new IllegalStateException("id '" + outcome.id() + "' was reported rolled back; its outcome"
                        + " never became final");
            }
            return outcome;
        }

        @Override
        public void rolledBack() {
            if (state.compareAndSet(OPEN, ROLLED_BACK)) {
                log.debug("inbox={} id={} outcome=rolled-back-by-caller", settings.name(), outcome.id());
                observeRolledBack(observed, outcome.id());
            } else if (state.get() == COMMITTED) {
                throw new IllegalStateException("id '" + outcome.id() + "' was reported committed already");
            }
        }

        @Override
        public String toString() {
            return "PendingOutcome[" + outcome + ", " + switch (state.get()) {
                case COMMITTED -> "committed";
                case ROLLED_BACK -> "rolled back";
                default -> "pending the caller's commit";
            } + "]";
        }
    }

    /**
     * Behaves as {@link Inbox#applyAll(List, MessageEffect, BatchCompletion)}.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param messages the batch
     * @param effect the business change
     * @param completion run in the transaction after the last message
     * @return one result per message, in order, after the commit
     */
    @Override
    public <R, X extends Exception> List<MessageResult<R>> applyAll(
            List<Message> messages, MessageEffect<H, R, X> effect, BatchCompletion<H, R> completion) {
        Objects.requireNonNull(messages, "messages");
        Objects.requireNonNull(effect, "effect");
        Objects.requireNonNull(completion, "completion");
        checkCallable("applyAll");
        long started = System.nanoTime();
        List<Message> batch = List.copyOf(messages);
        CallContext.Captured context = captureCallContext();
        Thread caller = Thread.currentThread();
        List<MessageResult<R>> results;
        try {
            results = transactions.run(tx -> {
                List<MessageResult<R>> judged = new ArrayList<>(batch.size());
                for (Message message : batch) {
                    judged.add(applyInSavepoint(tx, message, effect, started, context, caller));
                }
                List<MessageResult<R>> unmodifiable = Collections.unmodifiableList(judged);
                completion.complete(tx.handle(), unmodifiable);
                return unmodifiable;
            });
        } catch (Exception | Error failure) {
            for (Message message : batch) {
                if (isValid(message)) { // invalid ones were counted as such already
                    countFailure(message.id(), failure);
                    notifyFailure(message.id(), failure, started);
                }
            }
            if (failure instanceof Error error) {
                throw error;
            }
            throw Exceptions.unchecked((Exception) failure);
        }
        for (MessageResult<R> result : results) {
            result.outcome().ifPresentOrElse(outcome -> committed(outcome, started), () -> {
                Exception failure = result.failure().orElseThrow();
                if (!(failure instanceof InvalidMessageException)) {
                    countFailure(result.message().id(), failure);
                    notifyFailure(result.message().id(), failure, started);
                }
            });
        }
        return results;
    }

    private <R, X extends Exception> MessageResult<R> applyInSavepoint(StoreTransaction<H> tx, Message message,
            MessageEffect<H, R, X> effect, long started, CallContext.Captured context, Thread caller) {
        try {
            validate(message.id(), message.content(), message.originTime(), started);
        } catch (InvalidMessageException e) {
            return MessageResult.failed(message, e);
        }
        tx.savepoint();
        try {
            Outcome<R> outcome = applyWithin(tx, message.id(), message.content(), message.originTime(),
                    forMessage(effect, message), context, caller);
            tx.releaseSavepoint();
            return MessageResult.of(message, outcome);
        } catch (Exception failure) {
            // If even this fails, the whole transaction is in doubt: it propagates and rolls back.
            tx.rollbackToSavepoint();
            return MessageResult.failed(message, failure);
        }
    }

    /** The batch's effect for one message; one that stores results stays marked so. */
    private static <H, R, X extends Exception> Effect<H, R, X> forMessage(MessageEffect<H, R, X> effect, Message message) {
        if (effect instanceof ResultStoring.StoringMessageEffect<H, R, X> storing) {
            MessageEffect<H, R, X> plain = storing.effect();
            return ResultStoring.effect(storing.codec(), handle -> plain.apply(handle, message));
        }
        return handle -> effect.apply(handle, message);
    }

    private boolean isValid(Message message) {
        try {
            check(message.id(), message.content(), message.originTime());
            return true;
        } catch (InvalidMessageException e) {
            return false;
        }
    }

    private void check(String id, Content content, Instant originTime) {
        MessageValidation.checkId(id);
        MessageValidation.checkContent(content, settings.maxContentBytes());
        if (originTime != null) {
            MessageValidation.checkOrigin(originTime, settings.clock().instant(), settings.clockSkewMargin());
        }
    }

    private void validate(String id, Content content, Instant originTime, long started) {
        try {
            check(id, content, originTime);
        } catch (InvalidMessageException e) {
            counters.invalid();
            log.debug("inbox={} outcome=invalid problem={}", settings.name(), e.problem());
            notifyFailure(id, e, started);
            throw e;
        }
    }

    /** After the commit that holds {@code outcome}: the last phase, counters, logs, listener. */
    private void committed(Outcome<?> outcome, long started) {
        if (outcome.isNewlyApplied()) {
            notifyPhase(outcome.id(), Phase.COMMITTED);
        }
        countOutcome(outcome);
        notifyOutcome(outcome, started);
    }

    /**
     * The caller's context, for an effect another thread may run; {@code null} when the runner
     * runs every transaction on its caller's thread, where the context is in place already and
     * taking it (a copy of the MDC at least) would be work for nothing on every call.
     */
    private CallContext.Captured captureCallContext() {
        return transactions.runsOnCallersThread() ? null : settings.callContext().capture();
    }

    /**
     * Claims {@code id} in the open transaction and, if the claim is new, runs the effect. Writes
     * nothing for a duplicate or conflict. The caller commits.
     */
    private <R, X extends Exception> Outcome<R> applyWithin(StoreTransaction<H> tx, String id, Content content,
            Instant originTime, Effect<H, R, X> effect, CallContext.Captured context, Thread caller) throws X {
        ResultCodec<R> codec = null;
        Effect<H, R, X> run = effect;
        if (effect instanceof ResultStoring.StoringEffect<H, R, X> storing) {
            codec = storing.codec();
            run = storing.effect();
        }
        Fingerprint fingerprint = content.fingerprint();
        Content kept = settings.contentStorage() == ContentStorage.FULL_CONTENT ? content : null;
        // Stored times are millisecond-precise; read them so, and Applied reports what is stored.
        Instant receivedAt = Instant.ofEpochMilli(settings.clock().millis());
        Optional<InboxRecord> stored = tx.claim(settings.name(), id, fingerprint, kept, receivedAt);
        if (stored.isPresent()) {
            return judge(id, stored.get(), content, fingerprint, codec);
        }
        if (originTime != null) {
            refuseIfStale(tx, id, originTime);
        }
        H handle = tx.handle();
        R result;
        // The caller's context is already in place when the caller's own thread runs its effect.
        CallContext.Scope scope = caller == Thread.currentThread() ? null : context.restore();
        inEffect.set(Boolean.TRUE);
        try {
            settings.listener().onPhase(settings.name(), id, Phase.RECORDED);
            result = run.apply(handle);
            settings.listener().onPhase(settings.name(), id, Phase.EFFECT_DONE);
        } finally {
            // set, not remove: in this JDK a removal clears a weak reference through native code, on every call.
            inEffect.set(null);
            if (scope != null) {
                scope.close();
            }
        }
        if (codec != null) {
            // In the claim's transaction, before a batch's or joined call's savepoint is released:
            // a result over the limit (or a codec that throws) rolls the claim back with it.
            tx.storeResult(settings.name(), id,
                    ResultStoring.encode(codec, result, settings.maxResultBytes(), settings.name(), id));
        }
        return new Outcome.Applied<>(id, result, receivedAt);
    }

    /**
     * An earlier delivery of this business was received no earlier than {@code originTime - skew}
     * (the sender's clock may run ahead of ours by up to the margin). If that can be before the
     * horizon, its row may be purged, and the id's absence proves nothing.
     */
    private void refuseIfStale(StoreTransaction<H> tx, String id, Instant originTime) {
        Optional<Instant> horizon = tx.horizon(settings.name());
        if (horizon.isPresent() && originTime.minus(settings.clockSkewMargin()).isBefore(horizon.get())) {
            throw new StaleMessageException(id, originTime, horizon.get(), "id '" + id + "' originated at "
                    + originTime + ", too close to the inbox's horizon " + horizon.get() + " (skew margin "
                    + settings.clockSkewMargin() + "): an earlier delivery may have been purged, so it is not"
                    + " applied; nothing was written");
        }
    }

    /** Duplicate or conflict, comparing under the encoding the stored fingerprint was taken with. */
    private <R> Outcome<R> judge(String id, InboxRecord stored, Content offered, Fingerprint offeredPrint,
            ResultCodec<R> codec) {
        Fingerprint storedPrint = stored.fingerprint();
        Fingerprint comparable = storedPrint.algorithm() == offeredPrint.algorithm() ? offeredPrint
                : offered.fingerprintUnder(storedPrint.algorithm()).orElseThrow(() -> new InboxStorageException(
                        InboxStorageException.Kind.NEWER_SCHEMA,
                        "inbox '" + settings.name() + "' holds id '" + id + "' fingerprinted with encoding v"
                                + storedPrint.algorithm() + ", newer than this library knows",
                        null));
        if (storedPrint.equals(comparable)) {
            // Decoded here, in the transaction: a stored result the codec refuses fails the call
            // (in a batch or a joined call, its savepoint) like any other failure, with nothing written.
            StoredResult<R> result = codec != null
                    ? ResultStoring.decode(codec, stored.result(), settings.name(), id)
                    : stored.result().<StoredResult<R>>map(StoredResult::undecoded).orElse(StoredResult.none());
            return new Outcome.Duplicate<>(id, stored.firstReceivedAt(), storedPrint, result);
        }
        return new Outcome.Conflict<>(id, stored.firstReceivedAt(), storedPrint, offeredPrint);
    }

    /**
     * Behaves as {@link Inbox#find(String)}.
     *
     * @param id the business id
     * @return the record, or empty
     */
    @Override
    public Optional<InboxRecord> find(String id) {
        MessageValidation.checkId(id);
        checkOpen();
        return store.find(settings.name(), id);
    }

    /**
     * Behaves as {@link Inbox#storingResults}: a view whose calls reach this engine with the codec.
     *
     * @param <R> the result type
     * @param codec the codec
     * @return the view
     */
    @Override
    public <R> ResultInbox<H, R> storingResults(ResultCodec<R> codec) {
        return ResultView.of(this, codec);
    }

    @Override
    public InboxRetention retention() {
        return purger;
    }

    /** {@return the inbox's name} */
    @Override
    public String name() {
        return settings.name();
    }

    /** {@return the tables of this inbox's settings} */
    @Override
    public InboxTables tables() {
        return settings.tables();
    }

    /** {@return a snapshot of this engine's counters} */
    @Override
    public InboxStats stats() {
        return counters.snapshot();
    }

    /** {@return the settings this inbox was built with} */
    public InboxSettings settings() {
        return settings;
    }

    /**
     * Refuses later calls, waits for the transaction in progress, if any, then closes the store.
     * Closing twice does nothing.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                transactions.close();
            } finally {
                store.close();
            }
        }
    }

    /** For tests in this package that observe the runner, such as the group-commit queue. */
    TransactionRunner<H> transactions() {
        return transactions;
    }

    void checkOpen() {
        if (closed.get()) {
            throw new InboxException("inbox '" + settings.name() + "' is closed");
        }
    }

    /** Refuses a call on a closed inbox, and one made from inside an effect of this inbox. */
    void checkCallable(String call) {
        checkOpen();
        if (inEffect.get() != null) {
            throw new InboxException(call + " was called on inbox '" + settings.name() + "' from inside an effect of"
                    + " the same inbox; it would need the transaction the effect runs in. Do the work in the effect,"
                    + " through the handle it was given");
        }
    }

    private void countOutcome(Outcome<?> outcome) {
        if (outcome instanceof Outcome.Applied<?>) {
            counters.applied();
            log.debug("inbox={} id={} outcome=applied", settings.name(), outcome.id());
        } else if (outcome instanceof Outcome.Duplicate<?>) {
            counters.duplicate();
            log.debug("inbox={} id={} outcome=duplicate", settings.name(), outcome.id());
        } else {
            counters.conflict();
            Outcome.Conflict<?> conflict = (Outcome.Conflict<?>) outcome;
            // Types only: a digest of low-entropy content (a quantity) can be reversed by trying values.
            // A normal outcome the caller receives as a value: nothing for an operator to act on.
            log.info("inbox={} id={} outcome=conflict stored={} offered={}", settings.name(), outcome.id(),
                    conflict.stored().contentType(), conflict.offered().contentType());
        }
    }

    private void countFailure(String id, Throwable failure) {
        if (failure instanceof StaleMessageException) {
            counters.stale();
            log.info("inbox={} id={} outcome=stale: {}", settings.name(), id, failure.getMessage());
        } else if (failure instanceof InboxBusyException) {
            counters.busy();
            log.warn("inbox={} id={} outcome=busy: {}", settings.name(), id, failure.getMessage());
        } else if (failure instanceof InboxException) {
            counters.failed();
            log.warn("inbox={} id={} outcome=failed: {}", settings.name(), id, failure.toString());
        } else {
            counters.failed();
            // The effect's own message may quote business data, so only its type is logged.
            log.debug("inbox={} id={} outcome=failed effect threw {}", settings.name(), id, failure.getClass().getName());
        }
    }

    private void notifyPhase(String id, Phase phase) {
        try {
            settings.listener().onPhase(settings.name(), id, phase);
        } catch (RuntimeException e) {
            log.warn("inbox={} id={} listener failed in phase {}", settings.name(), id, phase, e);
        }
    }

    private void notifyTimed(String id, long started, long workStarted) {
        if (workStarted == 0) {
            return; // the work never began: nothing was queued for a transaction, or nothing ran in one
        }
        long ended = System.nanoTime();
        try {
            settings.listener().onTimed(settings.name(), id, Duration.ofNanos(workStarted - started),
                    Duration.ofNanos(ended - workStarted));
        } catch (RuntimeException e) {
            log.warn("inbox={} id={} listener failed on timings", settings.name(), id, e);
        }
    }

    private void notifyGroupCommitted(int size) {
        try {
            settings.listener().onGroupCommitted(settings.name(), size);
        } catch (RuntimeException e) {
            log.warn("inbox={} listener failed on a group commit", settings.name(), e);
        }
    }

    private void notifyOutcome(Outcome<?> outcome, long started) {
        InboxListener listener = settings.listener();
        try {
            listener.onOutcome(settings.name(), outcome, Duration.ofNanos(System.nanoTime() - started));
        } catch (RuntimeException e) {
            log.warn("inbox={} id={} listener failed on outcome", settings.name(), outcome.id(), e);
        }
    }

    // An observer that fails must not turn a committed outcome, or the call's own failure, into another.
    private void observeFinished(CallObserver.Observed observed, Outcome<?> outcome) {
        try {
            observed.finished(outcome);
        } catch (RuntimeException e) {
            log.warn("inbox={} id={} observer failed on outcome", settings.name(), outcome.id(), e);
        }
    }

    private void observeFailure(CallObserver.Observed observed, String id, Throwable failure) {
        try {
            observed.failed(failure);
        } catch (RuntimeException e) {
            log.warn("inbox={} id={} observer failed on failure", settings.name(), id, e);
        }
    }

    private void observeRolledBack(CallObserver.Observed observed, String id) {
        try {
            observed.rolledBack();
        } catch (RuntimeException e) {
            log.warn("inbox={} id={} observer failed on rollback", settings.name(), id, e);
        }
    }

    private void notifyFailure(String id, Throwable failure, long started) {
        try {
            settings.listener().onFailure(settings.name(), id, failure, Duration.ofNanos(System.nanoTime() - started));
        } catch (RuntimeException e) {
            log.warn("inbox={} listener failed on failure", settings.name(), e);
        }
    }
}
