package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.examples.Warehouse;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /receipts}: parses the shipment, hands it to the warehouse, and answers only after
 * the commit. Logs name the id and the outcome, never the quantity or the body.
 */
final class ReceiptsHandler {

    private static final Logger log = LoggerFactory.getLogger(ReceiptsHandler.class);

    private final Warehouse warehouse;
    private final ReceiverMetrics metrics;
    private final AckFault ackFault;
    private final RequestThreads threads;

    ReceiptsHandler(Warehouse warehouse, ReceiverMetrics metrics, AckFault ackFault, RequestThreads threads) {
        this.warehouse = warehouse;
        this.metrics = metrics;
        this.ackFault = ackFault;
        this.threads = threads;
    }

    void handle(HttpExchange exchange) throws IOException {
        Receipt receipt;
        try {
            checkContentType(exchange);
            checkContentEncoding(exchange);
            receipt = ReceiptParser.parse(Exchanges.readBody(exchange));
        } catch (Refusal.Thrown thrown) {
            refuse(exchange, RequestOutcome.INVALID, thrown.refusal());
            return;
        }
        String id = receipt.id();
        Outcome<Void> outcome;
        try {
            outcome = threads.inWarehouse(() -> warehouse.receive(id, receipt.qty(), receipt.origin().orElse(null)));
        } catch (StaleMessageException e) {
            // Definite: the same request will be refused again, so the sender must not resend it.
            refuse(exchange, RequestOutcome.STALE, new Refusal(422, "stale",
                    "the shipment is older than what the warehouse still remembers (horizon " + e.horizon()
                            + "); it may have been received before, so it is refused and nothing changed", id));
            return;
        } catch (InboxBusyException e) {
            exchange.getResponseHeaders().set("Retry-After", "1");
            refuse(exchange, RequestOutcome.BUSY,
                    new Refusal(503, "busy", "the warehouse is busy; nothing was changed, send it again later", id));
            return;
        } catch (InvalidMessageException e) {
            refuse(exchange, RequestOutcome.INVALID, invalid(e, id));
            return;
        } catch (RuntimeException e) {
            log.warn("receipt id={} outcome=failed: {}", id, e.toString());
            refuse(exchange, RequestOutcome.FAILED, new Refusal(500, "failed",
                    "the warehouse could not record the shipment; it is not acknowledged, send it again", id));
            return;
        }
        RequestOutcome counted = outcome.fold(
                applied -> RequestOutcome.APPLIED, duplicate -> RequestOutcome.DUPLICATE, conflict -> RequestOutcome.CONFLICT);
        metrics.count(counted);
        if (ackFault.dropThisAck()) {
            metrics.ackDropped();
            log.info("receipt id={} outcome={} ack=dropped", id, counted.label());
            // Closing an exchange whose response was never started closes the TCP connection.
            exchange.close();
            return;
        }
        log.info("receipt id={} outcome={}", id, counted.label());
        if (outcome.isAccepted()) {
            ObjectNode body = ProtocolV1.JSON.createObjectNode();
            body.put("protocol", ProtocolV1.VERSION);
            body.put("id", id);
            body.put("accepted", true);
            body.put("applied", outcome.isNewlyApplied());
            Exchanges.sendJson(exchange, 200, body);
        } else {
            Exchanges.sendRefusal(exchange, new Refusal(409, "conflict",
                    "this id was received before with another qty; the first shipment is kept", id));
        }
    }

    /** Counts, logs and answers a request that changed nothing. */
    void refuse(HttpExchange exchange, RequestOutcome outcome, Refusal refusal) throws IOException {
        metrics.count(outcome);
        if (refusal.id() != null) {
            log.info("receipt id={} outcome={} status={} error={}", refusal.id(), outcome.label(), refusal.status(), refusal.error());
        } else {
            log.info("receipt outcome={} status={} error={}", outcome.label(), refusal.status(), refusal.error());
        }
        Exchanges.sendRefusal(exchange, refusal);
    }

    /**
     * The refusal for what the inbox found invalid. The parser has checked the id by the same
     * rules already, so most of these are origin times in the future; the id is echoed then, as
     * it is valid.
     */
    private static Refusal invalid(InvalidMessageException e, String id) {
        if (e.problem() == InvalidMessageException.Problem.ORIGIN_IN_FUTURE) {
            // Our own words: the inbox's message quotes the origin time, a part of the body.
            return new Refusal(400, "origin_in_future", "origin is later than the warehouse's clock plus its"
                    + " clock-skew margin; the shipment is refused and nothing changed", id);
        }
        // The inbox's messages about ids quote no part of the id, so they are safe to pass on.
        return new Refusal(400, "invalid_id", e.getMessage(), null);
    }

    private static void checkContentType(HttpExchange exchange) throws Refusal.Thrown {
        String header = exchange.getRequestHeaders().getFirst("Content-Type");
        if (header == null || !isUtf8Json(header)) {
            Exchanges.closeAfterResponse(exchange);
            throw new Refusal.Thrown(Refusal.of(415, "unsupported_media_type",
                    "the body must be sent as Content-Type: application/json"));
        }
    }

    /**
     * No {@code Content-Encoding}, or {@code identity}: the receiver decodes no compressed bodies,
     * and reading gzip bytes as JSON would only give a misleading {@code malformed_json}.
     */
    private static void checkContentEncoding(HttpExchange exchange) throws Refusal.Thrown {
        List<String> encodings = exchange.getRequestHeaders().get("Content-Encoding");
        if (encodings == null) {
            return;
        }
        for (String encoding : encodings) {
            if (!encoding.trim().equalsIgnoreCase("identity")) {
                Exchanges.closeAfterResponse(exchange);
                throw new Refusal.Thrown(Refusal.of(415, "unsupported_content_encoding",
                        "the body must be sent without a Content-Encoding (or as identity)"));
            }
        }
    }

    /** {@code application/json}, with no parameter other than a UTF-8 charset. */
    private static boolean isUtf8Json(String header) {
        String[] parts = header.split(";");
        if (!parts[0].trim().equalsIgnoreCase(ProtocolV1.JSON_MEDIA_TYPE)) {
            return false;
        }
        for (int i = 1; i < parts.length; i++) {
            String parameter = parts[i].trim().toLowerCase(Locale.ROOT).replace("\"", "");
            if (!parameter.equals("charset=utf-8")) {
                return false;
            }
        }
        return true;
    }
}
