/**
 * Micrometer for the idempotent inbox, usable without Spring: {@link
 * dev.idempotent.inbox.micrometer.InboxMetrics} counts outcomes and times calls through the inbox's
 * listener, {@link dev.idempotent.inbox.micrometer.InboxObservations} makes each {@code apply} and
 * {@code applyJoined} an {@link io.micrometer.observation.Observation} up to its final outcome (so
 * Micrometer Tracing or OpenTelemetry see it with no code of their own), and {@link
 * dev.idempotent.inbox.micrometer.PropagatedCallContext} carries the caller's observation and MDC
 * to its effect when another caller's thread runs it under group commit.
 */
package dev.idempotent.inbox.micrometer;
