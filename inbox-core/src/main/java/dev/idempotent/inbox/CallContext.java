package dev.idempotent.inbox;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.MDC;

/**
 * Carries what a caller binds to its thread (its logging MDC, a tracing span) to the thread that
 * runs its effect. Under {@link CommitMode#GROUP} an effect may run on another caller's thread;
 * the inbox then calls {@link #capture()} on the caller's thread when {@code apply} is called, and
 * {@link Captured#restore()} on the running thread just before the effect, closing the returned
 * scope right after it. An effect that runs on its caller's own thread needs nothing restored, and
 * the inbox restores nothing then.
 *
 * <p>The default is {@link #mdc()}. Modules for other context libraries (Micrometer's
 * context-propagation, for instance) provide their own; combine several with {@link #of}.
 * Implementations must be thread-safe; {@code capture} runs on every call, so it should be cheap.
 */
@Beta
@FunctionalInterface
public interface CallContext {

    /**
     * Takes what an effect should see, on the caller's thread.
     *
     * @return the captured context; never {@code null}
     */
    Captured capture();

    /** A context taken on one thread, to be put in place on another. */
    @FunctionalInterface
    interface Captured {
        /**
         * Puts the captured context in place on the current thread.
         *
         * @return what takes it away again, restoring what the thread had before
         */
        Scope restore();
    }

    /** The time a restored context is in place; closing it puts back what was there before. */
    @FunctionalInterface
    interface Scope extends AutoCloseable {
        @Override
        void close();
    }

    /** {@return a context that carries nothing} */
    static CallContext none() {
        return () -> () -> () -> {};
    }

    /**
     * {@return the caller's SLF4J MDC}: a copy of its map, set on the running thread around the
     * effect, and that thread's own map put back after it.
     */
    static CallContext mdc() {
        return () -> {
            Map<String, String> callers = MDC.getCopyOfContextMap();
            return () -> {
                Map<String, String> own = MDC.getCopyOfContextMap();
                setMdc(callers);
                return () -> setMdc(own);
            };
        };
    }

    /**
     * {@return a context that carries all of {@code contexts}}, restored in the order given and
     * taken away in reverse.
     *
     * @param contexts the contexts to combine; none may be {@code null}
     */
    static CallContext of(CallContext... contexts) {
        List<CallContext> parts = List.of(contexts);
        return () -> {
            List<Captured> captured = parts.stream().map(CallContext::capture).toList();
            return () -> {
                Scope[] scopes = new Scope[captured.size()];
                for (int i = 0; i < scopes.length; i++) {
                    scopes[i] = Objects.requireNonNull(captured.get(i).restore(), "scope");
                }
                return () -> {
                    for (int i = scopes.length - 1; i >= 0; i--) {
                        scopes[i].close();
                    }
                };
            };
        };
    }

    private static void setMdc(Map<String, String> map) {
        if (map == null) {
            MDC.clear();
        } else {
            MDC.setContextMap(map);
        }
    }
}
