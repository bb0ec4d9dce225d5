/**
 * The crash harness: a receiver in a child JVM that halts itself at a chosen phase of
 * {@link dev.idempotent.inbox.Inbox#apply}, an independent connection that reads what survived,
 * and the restart that proves each message is counted exactly once. Used by the {@code crash-lab}
 * command and by the examples' tests.
 */
package dev.idempotent.inbox.examples.crash;
