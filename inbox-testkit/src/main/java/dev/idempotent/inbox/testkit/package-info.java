/**
 * The behavioural contract of an inbox adapter, run against a real database through small
 * subclasses that supply an {@link dev.idempotent.inbox.testkit.InboxFixture}:
 *
 * <ul>
 *   <li>examples of the user-visible behaviour: {@link dev.idempotent.inbox.testkit.InboxContract},
 *       {@link dev.idempotent.inbox.testkit.RetentionContract} and
 *       {@link dev.idempotent.inbox.testkit.GroupCommitContract};
 *   <li>stored results: {@link dev.idempotent.inbox.testkit.ResultContract}, and
 *       {@link dev.idempotent.inbox.testkit.ResultEdgeContract} for the attempts to make one lie;
 *   <li>the store itself, through the SPI, for adapter authors:
 *       {@link dev.idempotent.inbox.testkit.StoreContract};
 *   <li>QuickTheories properties: {@link dev.idempotent.inbox.testkit.InboxProperties},
 *       {@link dev.idempotent.inbox.testkit.RetentionProperties} and
 *       {@link dev.idempotent.inbox.testkit.GroupCommitProperties};
 *   <li>for users: {@link dev.idempotent.inbox.testkit.EffectProperties}, the same kind of proof
 *       for their own effect and schema;
 *   <li>the package rules an adapter keeps: {@link dev.idempotent.inbox.testkit.ArchitectureRules}.
 * </ul>
 */
package dev.idempotent.inbox.testkit;
