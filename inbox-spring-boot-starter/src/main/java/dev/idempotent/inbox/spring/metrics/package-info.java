/**
 * The inbox's Micrometer meters in Spring Boot, from {@code inbox-micrometer}.
 */
package dev.idempotent.inbox.spring.metrics;
