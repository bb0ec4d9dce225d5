package dev.idempotent.inbox.spring.app;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.spring.SpringInbox;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Receives a receipt in a {@code @Transactional} method: stock through JdbcClient, the movement through JPA. */
@Service
public class ReceiptService {

    /** What the method saw: the outcome, and the inbox's counters inside the transaction, after the apply. */
    public record Received(Outcome<Integer> outcome, InboxStats statsInside) {
    }

    private final SpringInbox inbox;
    private final JdbcClient jdbc;
    private final MovementRepository movements;

    public ReceiptService(SpringInbox inbox, JdbcClient jdbc, MovementRepository movements) {
        this.inbox = inbox;
        this.jdbc = jdbc;
        this.movements = movements;
    }

    @Transactional
    public Received receive(String id, int qty, boolean failAfterApply) {
        Outcome<Integer> outcome = inbox.apply(id, Content.of(qty), tx -> {
            int rows = jdbc.sql("UPDATE stock SET total = total + ? WHERE item = 'snack'").param(qty).update();
            movements.saveAndFlush(new Movement(id, qty));
            return rows;
        });
        InboxStats inside = inbox.inbox().stats();
        if (failAfterApply) {
            throw new IllegalStateException("the business failed after the apply");
        }
        return new Received(outcome, inside);
    }

    /** A business failure the effect declares: checked, so {@code @Transactional} commits on it unless told otherwise. */
    public static final class OutOfStock extends Exception {
        private static final long serialVersionUID = 1L;

        public OutOfStock(String id) {
            super("no stock for " + id);
        }
    }

    /** An effect that saves the movement, then throws a checked exception out of the method. */
    @Transactional
    public void receiveOutOfStock(String id, int qty) throws OutOfStock {
        inbox.apply(id, Content.of(qty), tx -> {
            movements.save(new Movement(id, qty));
            throw new OutOfStock(id);
        });
    }
}
