/**
 * JMH benchmarks of the inbox, each with its baseline in the same run: a hand-written JDBC
 * transaction with the same SQL and durability, and the disk's raw sync rate. Not published; run
 * with {@code java -jar inbox-bench/target/benchmarks.jar}. See {@code BENCHMARKS.md}.
 */
package dev.idempotent.inbox.bench;
