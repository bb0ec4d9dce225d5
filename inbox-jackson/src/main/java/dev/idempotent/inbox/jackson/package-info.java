/**
 * {@link dev.idempotent.inbox.jackson.JacksonResultCodec}: an effect's result stored as JSON by
 * Jackson 2, for {@link dev.idempotent.inbox.Inbox#storingResults}.
 */
package dev.idempotent.inbox.jackson;
