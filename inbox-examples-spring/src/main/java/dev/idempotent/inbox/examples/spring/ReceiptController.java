package dev.idempotent.inbox.examples.spring;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Outcome;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The receiver's HTTP side, in the example warehouse's protocol: 200 for an accepted shipment
 * ({@code applied} says whether it was new), 409 for another qty under a known id, 400 for a bad
 * receipt, 503 when busy. The answer is sent after the commit, so a 200 is never lost with the data.
 */
@RestController
public class ReceiptController {

    private static final Logger log = LoggerFactory.getLogger(ReceiptController.class);

    private final Warehouse warehouse;

    /**
     * The controller of {@code warehouse}.
     *
     * @param warehouse the business
     */
    public ReceiptController(Warehouse warehouse) {
        this.warehouse = warehouse;
    }

    /**
     * A shipment.
     *
     * @param id the receipt's id, the same on every resend
     * @param qty how many snacks, at least 1
     */
    public record Receipt(String id, Integer qty) {
    }

    /**
     * Receives a shipment.
     *
     * @param receipt the body
     * @return the answer
     */
    @PostMapping(path = "/receipts", consumes = MediaType.APPLICATION_JSON_VALUE)
    public ResponseEntity<Map<String, Object>> receive(@RequestBody Receipt receipt) {
        if (receipt.id() == null || receipt.qty() == null || receipt.qty() < 1) {
            return answer(HttpStatus.BAD_REQUEST, null, "invalid_receipt", "a receipt needs an id and a qty of at least 1");
        }
        Outcome<Integer> outcome = warehouse.receive(receipt.id(), receipt.qty());
        log.info("receipt id={} outcome={}", receipt.id(), outcome.getClass().getSimpleName());
        if (!outcome.isAccepted()) {
            return answer(HttpStatus.CONFLICT, receipt.id(), "conflict",
                    "this id was received before with another qty; the first shipment is kept");
        }
        Map<String, Object> body = body(receipt.id());
        body.put("accepted", true);
        body.put("applied", outcome.isNewlyApplied());
        return ResponseEntity.ok(body);
    }

    /**
     * The stock.
     *
     * @return the total and the number of shipments
     */
    @GetMapping("/stock")
    public Warehouse.StockLevel stock() {
        return warehouse.stock();
    }

    /**
     * A bad id, refused by the inbox's own rules; nothing changed.
     *
     * @param e the refusal
     * @return 400
     */
    @ExceptionHandler(InvalidMessageException.class)
    public ResponseEntity<Map<String, Object>> invalid(InvalidMessageException e) {
        return answer(HttpStatus.BAD_REQUEST, null, "invalid_id", e.getMessage());
    }

    /**
     * The write lock was not obtained in time; nothing changed.
     *
     * @param e the refusal
     * @return 503, to be sent again
     */
    @ExceptionHandler(InboxBusyException.class)
    public ResponseEntity<Map<String, Object>> busy(InboxBusyException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header("Retry-After", "1")
                .body(error(null, "busy", "the warehouse is busy; nothing was changed, send it again later"));
    }

    private static ResponseEntity<Map<String, Object>> answer(HttpStatus status, String id, String error, String message) {
        return ResponseEntity.status(status).body(error(id, error, message));
    }

    private static Map<String, Object> error(String id, String error, String message) {
        Map<String, Object> body = body(id);
        body.put("accepted", false);
        body.put("error", error);
        body.put("message", message);
        return body;
    }

    private static Map<String, Object> body(String id) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("protocol", 1);
        if (id != null) {
            body.put("id", id);
        }
        return body;
    }
}
