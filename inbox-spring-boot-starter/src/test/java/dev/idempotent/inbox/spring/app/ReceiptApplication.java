package dev.idempotent.inbox.spring.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A Spring Boot application with JPA and the inbox, for the tests. */
@SpringBootApplication
public class ReceiptApplication {
}
