/**
 * The inbox in Spring Boot Actuator: a health contributor and the {@code inbox} endpoint.
 */
package dev.idempotent.inbox.spring.actuate;
