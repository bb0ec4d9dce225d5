package dev.idempotent.inbox.examples;

/**
 * The warehouse's committed state at one moment.
 *
 * @param total the running stock total
 * @param receipts how many distinct shipments were received: the inbox's rows
 */
public record StockLevel(long total, long receipts) {}
