package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.InboxProperties;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

class SqliteInboxPropertiesTest extends InboxProperties {

    @Override
    protected InboxFixture openFixture() throws IOException {
        // jqwik has no @TempDir: the fixture removes its own directory.
        Path directory = Files.createTempDirectory("inbox-properties");
        SqliteFixture files = new SqliteFixture(directory);
        return new InboxFixture() {
            @Override
            public org.jdbi.v3.core.Jdbi jdbi() {
                return files.jdbi();
            }

            @Override
            public dev.idempotent.inbox.InboxBuilder<SqliteInbox> builder() {
                return files.builder();
            }

            @Override
            public HeldLock holdWriteLock(String inbox, String id) {
                return files.holdWriteLock(inbox, id);
            }

            @Override
            public void insertReceivedRows(String inbox, String prefix, int count, java.time.Instant receivedAt) {
                files.insertReceivedRows(inbox, prefix, count, receivedAt);
            }

            @Override
            public void close() {
                try (Stream<Path> paths = Files.walk(directory)) {
                    paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }
}
