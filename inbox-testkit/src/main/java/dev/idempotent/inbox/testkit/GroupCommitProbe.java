package dev.idempotent.inbox.testkit;

import dev.idempotent.inbox.ForwardingInbox;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * Reads how many callers wait in the group-commit queue of an adapter's inbox, so that a test can
 * know its callers have queued without inferring it from thread states or waiting for time to
 * pass. The queue belongs to the core's engine, which keeps it to itself; the probe reaches it
 * reflectively, and a renamed member fails the test loudly.
 */
public final class GroupCommitProbe {

    private GroupCommitProbe() {}

    /**
     * The number of calls queued and not yet taken into a group.
     *
     * @param inbox an adapter's inbox built with {@link dev.idempotent.inbox.CommitMode#GROUP}
     * @return how many calls wait
     * @throws AssertionError if the inbox does not commit in groups, or its engine cannot be read
     */
    public static int queued(ForwardingInbox<?> inbox) {
        try {
            Field delegate = ForwardingInbox.class.getDeclaredField("delegate");
            delegate.setAccessible(true);
            Object engine = delegate.get(inbox);
            Object runner = invoke(engine, "transactions");
            if (!runner.getClass().getSimpleName().equals("GroupCommit")) {
                throw new AssertionError("the inbox does not commit in groups but with " + runner);
            }
            return (Integer) invoke(runner, "queued");
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("cannot reach the inbox's group commit", e);
        }
    }

    private static Object invoke(Object target, String method) throws ReflectiveOperationException {
        Method m = target.getClass().getDeclaredMethod(method);
        m.setAccessible(true);
        return m.invoke(target);
    }
}
