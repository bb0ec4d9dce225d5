/**
 * An in-memory implementation of the inbox SPI, and the small helpers the core's tests build on:
 * real transactions, savepoints and a single writer, without a database.
 */
package dev.idempotent.inbox.testing;
