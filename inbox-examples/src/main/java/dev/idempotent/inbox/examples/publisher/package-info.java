/**
 * The publisher: an outbox in its own SQLite file, and a delivery loop that marks an item done
 * only after a verified acknowledgement. Definite refusals are parked with their reason; uncertain
 * attempts are sent again with backoff, and parked as exhausted when the attempts run out.
 */
package dev.idempotent.inbox.examples.publisher;
