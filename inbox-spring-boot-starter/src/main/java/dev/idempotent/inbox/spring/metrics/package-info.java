/**
 * The inbox's Micrometer meters and observations in Spring Boot, from {@code inbox-micrometer}.
 */
package dev.idempotent.inbox.spring.metrics;
