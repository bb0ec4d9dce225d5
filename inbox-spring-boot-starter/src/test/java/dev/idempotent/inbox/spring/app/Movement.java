package dev.idempotent.inbox.spring.app;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** One receipt's stock movement, written through JPA. */
@Entity
@Table(name = "movement")
public class Movement {

    @Id
    private String receipt;

    private int qty;

    protected Movement() {
    }

    public Movement(String receipt, int qty) {
        this.receipt = receipt;
        this.qty = qty;
    }

    public String receipt() {
        return receipt;
    }

    public int qty() {
        return qty;
    }

    public void qty(int qty) {
        this.qty = qty;
    }
}
