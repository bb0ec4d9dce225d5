package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class InboxSettingsTest {

    private final InboxBuilder<Inbox<Void>> builder = new InboxBuilder<>(CommitMode.GROUP, settings -> {
        throw new AssertionError("not built in these tests");
    });
    private final InboxBuilder<Inbox<Void>> perCaller = new InboxBuilder<>(CommitMode.PER_CALLER, settings -> {
        throw new AssertionError("not built in these tests");
    });

    private static void refusedNaming(String field, Executable call) {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, call);
        assertTrue(refused.getMessage().startsWith(field), refused.getMessage());
    }

    @Test
    void defaultsAreDocumented() {
        InboxSettings defaults = builder.settings();

        assertEquals("default", defaults.name());
        assertEquals(Duration.ofSeconds(5), defaults.busyTimeout());
        assertEquals(1 << 20, defaults.maxContentBytes());
        assertEquals(ContentStorage.FINGERPRINT_ONLY, defaults.contentStorage());
    }

    @Test
    void badValuesAreRefusedWithTheFieldName() {
        refusedNaming("name", () -> builder.name(""));
        refusedNaming("name", () -> builder.name("has space"));
        refusedNaming("name", () -> builder.name("x".repeat(65)));
        refusedNaming("busyTimeout", () -> builder.busyTimeout(Duration.ofMillis(-1)));
        refusedNaming("busyTimeout", () -> builder.busyTimeout(Duration.ofHours(2)));
        refusedNaming("maxContentBytes", () -> builder.maxContentBytes(0));
        refusedNaming("maxContentBytes", () -> builder.maxContentBytes((16 << 20) + 1));
        assertThrows(NullPointerException.class, () -> builder.clock(null));
        assertThrows(NullPointerException.class, () -> builder.listener(null));
    }

    @Test
    void retentionMustCoverTheSendersResendAgePlusTheSkewMargin() {
        InboxBuilder<Inbox<Void>> covering = builder.retention(Duration.ofDays(8))
                .clockSkewMargin(Duration.ofHours(1))
                .senderMaxResendAge(Duration.ofDays(7));
        assertEquals(Duration.ofDays(8), covering.settings().retention());

        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> covering.retention(Duration.ofDays(7)).build());
        assertTrue(refused.getMessage().startsWith("retention"), refused.getMessage());
        refusedNaming("retention", () -> builder.clockSkewMargin(Duration.ofDays(1)).retention(Duration.ofHours(1))
                .settings());
        refusedNaming("retention", () -> builder.retention(Duration.ZERO));
        refusedNaming("clockSkewMargin", () -> builder.clockSkewMargin(Duration.ofDays(2)));
        refusedNaming("senderMaxResendAge", () -> builder.senderMaxResendAge(Duration.ZERO));
    }

    @Test
    void groupSettingsAreRefusedWhereTheInboxDoesNotCommitInGroups() {
        refusedNaming("maxGroupSize", () -> perCaller.maxGroupSize(10).settings());
        refusedNaming("maxGroupWait", () -> perCaller.maxGroupWait(Duration.ofMillis(1)).build());
        refusedNaming("maxGroupSize", () -> builder.maxGroupSize(10).commitMode(CommitMode.PER_CALLER).settings());

        assertEquals(10, perCaller.commitMode(CommitMode.GROUP).maxGroupSize(10).settings().maxGroupSize());
        assertEquals(CommitMode.GROUP, builder.settings().commitMode(), "the adapter's default");
        assertEquals(CommitMode.PER_CALLER, perCaller.settings().commitMode(), "the adapter's default");
        assertEquals(InboxSettings.DEFAULT_MAX_GROUP_SIZE, builder.settings().maxGroupSize());
    }

    @Test
    void builderIsImmutable() {
        InboxBuilder<Inbox<Void>> named = builder.name("receipts");

        assertNotSame(builder, named);
        assertEquals("default", builder.settings().name());
        assertEquals("receipts", named.settings().name());
    }

    @Test
    void statsAttemptsIsTheSumOfTheOutcomes() {
        InboxStats stats = new InboxStats(1, 2, 3, 4, 5, 6, 7);

        assertEquals(28, stats.attempts());
        assertEquals(3, stats.accepted());
    }
}
