package dev.idempotent.inbox.micrometer;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.CallContext;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import java.util.Objects;

/**
 * The inbox's {@link CallContext} through Micrometer's context-propagation: every thread-local
 * value registered with its {@code ContextRegistry} (the current {@code Observation}, and with it
 * the current span of Micrometer Tracing; anything else a library registers there) is captured on
 * the caller's thread and put in place around its effect on the thread that runs it. Give it to
 * the builder: {@code SqliteInbox.builder(file).callContext(PropagatedCallContext.withMdc())}.
 */
@Beta
public final class PropagatedCallContext {

    private PropagatedCallContext() {}

    /**
     * {@return the values of the global {@code ContextRegistry}, then the caller's SLF4J MDC}
     * (the inbox's default, {@link CallContext#mdc()}): what a caller that logs and traces sees. A
     * value the caller did not have is cleared around its effect, so that a caller without an
     * observation never runs under the observation of the thread that happens to run its effect.
     */
    public static CallContext withMdc() {
        return CallContext.of(of(ContextSnapshotFactory.builder().clearMissing(true).build()), CallContext.mdc());
    }

    /**
     * {@return the values {@code factory} captures}, and nothing else.
     *
     * @param factory takes the snapshots, from the registry and with the filter it was built with;
     *     not {@code null}
     */
    public static CallContext of(ContextSnapshotFactory factory) {
        Objects.requireNonNull(factory, "factory");
        return () -> {
            ContextSnapshot snapshot = factory.captureAll();
            return () -> {
                ContextSnapshot.Scope scope = snapshot.setThreadLocals();
                return scope::close;
            };
        };
    }
}
