package dev.idempotent.inbox;

/** Whether an inbox keeps the content of each message or only its fingerprint. */
public enum ContentStorage {
    /**
     * Keep the fingerprint only (the default): enough to tell duplicates from conflicts, and no
     * copy of customer data in the inbox table.
     */
    FINGERPRINT_ONLY,
    /** Keep the content beside the fingerprint, for audits and {@link Inbox#find} lookups. */
    FULL_CONTENT
}
