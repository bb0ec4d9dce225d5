/**
 * The behavioural contract of an inbox adapter: {@link dev.idempotent.inbox.testkit.InboxContract}
 * (examples) and {@link dev.idempotent.inbox.testkit.InboxProperties} (jqwik properties). An
 * adapter runs both against a real database through a small subclass that supplies an
 * {@link dev.idempotent.inbox.testkit.InboxFixture}.
 */
package dev.idempotent.inbox.testkit;
