package dev.idempotent.inbox;

/**
 * Watches each {@code apply} and {@code applyJoined} of an inbox from its call to its final
 * outcome: the hook a tracing or observation library (Micrometer's {@code Observation}, through
 * {@code InboxObservations} of {@code inbox-micrometer}) plugs into, so that the whole call, and a
 * joined call up to its caller's commit, is one observed unit. Set it with
 * {@link InboxBuilder#observer(CallObserver)}; the default is {@link #NONE}.
 *
 * <p>For each call, on the caller's thread, the inbox calls {@link #start} first (after only the
 * null checks of its arguments, so that a refused call, an invalid id say, is observed too), then
 * {@link Observed#open()}, whose scope stays in place on the caller's thread until the call
 * returns or throws. The inbox captures its {@link CallContext} inside that scope, so whatever
 * {@code open} makes current (an observation, a span) is what the effect sees, even when another
 * caller's thread runs it under {@link CommitMode#GROUP}. Exactly one of the end methods follows,
 * after the scope is closed:
 *
 * <ul>
 *   <li>{@link Observed#finished(Outcome)} when the outcome is final: for {@code apply}, after its
 *       commit, just before it returns; for {@code applyJoined}, when the caller reports its commit
 *       with {@link PendingOutcome#committed()}, on the thread that reports it;
 *   <li>{@link Observed#failed(Throwable)} when the call throws: the effect's own exception,
 *       unchanged, or an {@link InboxException} (a {@link StaleMessageException} and an
 *       {@link InvalidMessageException} among them), before it reaches the caller;
 *   <li>{@link Observed#rolledBack()} when a joined call's caller reports its rollback with
 *       {@link PendingOutcome#rolledBack()}.
 * </ul>
 *
 * <p>A joined call's observation therefore ends only when its commit or rollback is reported: the
 * Jdbi handle form and Spring's {@code SpringInbox} report it themselves; a caller of the
 * connection form must call {@code committed()} or {@code rolledBack()}, or the call is never
 * ended. {@code applyAll} is not observed.
 *
 * <p>Implementations must be thread-safe, and cheap: {@code start} runs on every call. An
 * exception thrown by an end method is logged and does not change the call's result.
 */
@Beta
public interface CallObserver {

    /** Observes nothing, and allocates nothing per call. */
    CallObserver NONE = new CallObserver() {
        private static final CallContext.Scope NO_SCOPE = () -> {};
        private static final Observed NOTHING = new Observed() {
            @Override
            public CallContext.Scope open() {
                return NO_SCOPE;
            }

            @Override
            public void finished(Outcome<?> outcome) {}

            @Override
            public void failed(Throwable failure) {}

            @Override
            public void rolledBack() {}
        };

        @Override
        public Observed start(String inbox, String id) {
            return NOTHING;
        }

        @Override
        public String toString() {
            return "CallObserver.NONE";
        }
    };

    /**
     * Starts watching one call, on the caller's thread, before the inbox checks its arguments.
     *
     * @param inbox the inbox's name
     * @param id the business id as the caller gave it, not yet checked; may be {@code null}
     * @return the call's observation; never {@code null}
     */
    Observed start(String inbox, String id);

    /** One call, from its start to its final outcome; each end method is called at most once, and only one. */
    interface Observed {

        /**
         * Puts this call in place on the caller's thread for the rest of the call.
         *
         * @return what takes it away again; never {@code null}
         */
        CallContext.Scope open();

        /**
         * The outcome is final: committed, whether applied, duplicate or conflict.
         *
         * @param outcome the outcome the caller receives
         */
        void finished(Outcome<?> outcome);

        /**
         * The call threw {@code failure}, which the caller receives next.
         *
         * @param failure the effect's own exception or the inbox's
         */
        void failed(Throwable failure);

        /** The caller's transaction, which a joined call ran in, rolled back: nothing of the call remains. */
        void rolledBack();
    }
}
