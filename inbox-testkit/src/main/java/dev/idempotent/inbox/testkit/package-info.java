/**
 * The behavioural contract of an inbox adapter: {@link dev.idempotent.inbox.testkit.InboxContract}
 * and {@link dev.idempotent.inbox.testkit.RetentionContract} (examples), and
 * {@link dev.idempotent.inbox.testkit.InboxProperties},
 * {@link dev.idempotent.inbox.testkit.RetentionProperties} and
 * {@link dev.idempotent.inbox.testkit.GroupCommitProperties} (QuickTheories properties). An
 * adapter runs them against a real database through small subclasses that supply an
 * {@link dev.idempotent.inbox.testkit.InboxFixture}.
 */
package dev.idempotent.inbox.testkit;
