/** The example warehouse's receiver on Spring Boot. */
package dev.idempotent.inbox.examples.spring;
