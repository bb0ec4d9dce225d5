package dev.idempotent.inbox.examples.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The example warehouse's receiver as a Spring Boot application: {@code POST /receipts} applies a
 * shipment through the inbox inside a {@code @Transactional} method, the stock written through
 * {@code JdbcClient}; {@code GET /stock} shows the stock, {@code /actuator/prometheus} the metrics.
 */
@SpringBootApplication
public class WarehouseApplication {

    /**
     * Starts the receiver; Spring Boot's arguments apply ({@code --server.port=8080},
     * {@code --spring.datasource.url=jdbc:sqlite:other.db}).
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        SpringApplication.run(WarehouseApplication.class, args);
    }
}
