/**
 * The warehouse's HTTP receiver: protocol version 1 on the JDK's HTTP server. A response is
 * written only after the inbox committed, and only an accepted outcome is answered with
 * {@code "accepted":true}.
 */
package dev.idempotent.inbox.examples.http;
