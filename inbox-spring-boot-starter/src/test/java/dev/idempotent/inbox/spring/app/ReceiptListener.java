package dev.idempotent.inbox.spring.app;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.spring.SpringInbox;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.stereotype.Component;
import org.springframework.transaction.event.TransactionalEventListener;

/** Applies a receipt once the transaction that published it has committed, as an application might. */
@Component
public class ReceiptListener {

    /** Published inside a transaction; its receipt is applied after that transaction commits. */
    public record Committed(String id, int qty) {
    }

    private final SpringInbox inbox;
    private final MovementRepository movements;
    private final AtomicReference<Object> last = new AtomicReference<>();

    public ReceiptListener(SpringInbox inbox, MovementRepository movements) {
        this.inbox = inbox;
        this.movements = movements;
    }

    @TransactionalEventListener
    void afterCommit(Committed event) {
        try {
            last.set(inbox.apply(event.id(), Content.of(event.qty()), tx -> movements.save(new Movement(event.id(), event.qty()))));
        } catch (RuntimeException e) {
            last.set(e);
        }
    }

    /** {@return what the last call returned or threw}, or {@code null} before the first */
    public Object last() {
        return last.get();
    }
}
