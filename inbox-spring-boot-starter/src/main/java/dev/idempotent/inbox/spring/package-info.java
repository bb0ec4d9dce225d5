/**
 * The inbox in Spring Boot: an {@link dev.idempotent.inbox.Inbox} bean over the application's
 * {@code DataSource}, configured by the {@code inbox.*} properties, and a
 * {@link dev.idempotent.inbox.spring.SpringInbox} that applies messages inside the application's
 * Spring-managed transactions; or several named pairs of them, from {@code inbox.instances.<key>.*}.
 * {@link dev.idempotent.inbox.spring.SpringInbox#storingResults} gives a
 * {@link dev.idempotent.inbox.spring.SpringResultInbox} that also stores each effect's result in
 * that transaction, so that a retry gets the first answer.
 */
package dev.idempotent.inbox.spring;
