package dev.idempotent.inbox.spring.app;

import org.springframework.data.jpa.repository.JpaRepository;

/** The movements, a Spring Data JPA repository. */
public interface MovementRepository extends JpaRepository<Movement, String> {
}
