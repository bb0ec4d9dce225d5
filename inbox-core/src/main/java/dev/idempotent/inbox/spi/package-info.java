/**
 * The contract storage adapters implement, and nothing else: {@link dev.idempotent.inbox.spi.InboxStore}
 * and its {@link dev.idempotent.inbox.spi.StoreTransaction}, with the small values they exchange.
 * Applications do not need this package. The engine that drives a store (validation, the decision
 * between applied, duplicate and conflict, group commit, retention, counters, logs) is the core's;
 * an adapter opens it with {@code dev.idempotent.inbox.internal.InboxEngine#open}.
 */
package dev.idempotent.inbox.spi;
