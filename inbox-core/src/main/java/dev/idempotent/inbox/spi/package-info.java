/**
 * What storage adapters implement. Applications do not need this package.
 *
 * <p>An adapter implements {@link dev.idempotent.inbox.spi.InboxStore} and wraps it in an
 * {@link dev.idempotent.inbox.spi.InboxEngine}, which owns validation, the decision between
 * applied, duplicate and conflict, counters, listener calls and logging.
 */
package dev.idempotent.inbox.spi;
