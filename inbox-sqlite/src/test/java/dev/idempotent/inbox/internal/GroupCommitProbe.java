package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.ForwardingInbox;
import java.lang.reflect.Field;

/**
 * Reads how many callers wait in an inbox's group commit queue. An adapter's inbox keeps its
 * engine to itself, so the probe reaches it reflectively; a renamed field fails the test loudly.
 */
public final class GroupCommitProbe {

    private GroupCommitProbe() {
    }

    /** The number of requests queued and not yet taken into a group by {@code inbox}'s writer. */
    public static int queued(ForwardingInbox<?> inbox) {
        try {
            Object runner = ((InboxEngine<?>) field(ForwardingInbox.class, "delegate").get(inbox)).transactions();
            if (!(runner instanceof GroupCommit<?> groupCommit)) {
                throw new AssertionError("the inbox does not use group commit but " + runner);
            }
            return groupCommit.queued();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("cannot reach the inbox's group commit", e);
        }
    }

    private static Field field(Class<?> type, String name) throws NoSuchFieldException {
        Field field = type.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }
}
