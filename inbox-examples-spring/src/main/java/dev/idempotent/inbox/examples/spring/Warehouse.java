package dev.idempotent.inbox.examples.spring;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.spring.SpringInbox;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The warehouse's business: a shipment adds its qty to the stock, once per receipt id. */
@Service
public class Warehouse {

    private final SpringInbox inbox;
    private final JdbcClient jdbc;

    /**
     * The warehouse over the application's inbox and database.
     *
     * @param inbox the inbox, joining this class's transactions
     * @param jdbc the stock's database
     */
    public Warehouse(SpringInbox inbox, JdbcClient jdbc) {
        this.inbox = inbox;
        this.jdbc = jdbc;
    }

    /**
     * Receives one shipment: the id is recorded and the stock raised in one transaction, or
     * neither.
     *
     * @param id the receipt's id
     * @param qty how many snacks arrived
     * @return the outcome: Applied or Duplicate to acknowledge, Conflict to refuse
     */
    @Transactional
    public Outcome<Integer> receive(String id, int qty) {
        return inbox.apply(id, Content.of(qty), tx -> jdbc
                .sql("UPDATE stock SET total = total + :qty, receipts = receipts + 1 WHERE item = 'snack'")
                .param("qty", qty)
                .update());
    }

    /**
     * The stock as committed.
     *
     * @return the total and the number of shipments it came from
     */
    @Transactional(readOnly = true)
    public StockLevel stock() {
        return jdbc.sql("SELECT total, receipts FROM stock WHERE item = 'snack'").query(StockLevel.class).single();
    }

    /**
     * The stock.
     *
     * @param total snacks in stock
     * @param receipts shipments applied
     */
    public record StockLevel(long total, long receipts) {
    }
}
