/**
 * The inbox type of the Jdbi-based adapters, {@link dev.idempotent.inbox.jdbi.JdbiInbox}, with the
 * forms that apply a message inside a transaction the caller already has open.
 */
package dev.idempotent.inbox.jdbi;
