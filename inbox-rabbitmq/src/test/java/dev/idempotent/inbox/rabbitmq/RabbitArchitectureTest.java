package dev.idempotent.inbox.rabbitmq;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The consumer is built on the inbox's public API alone: no SPI, no internal package, no database
 * driver, since it works with any adapter's inbox.
 */
class RabbitArchitectureTest {

    @Test
    void mainClassesUseThePublicApiOnly() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage(
                        "dev.idempotent.inbox.internal..", "dev.idempotent.inbox.spi..", "org.jdbi..", "java.sql..")
                .because("the consumer drives an Inbox<H> of any adapter through its API")
                .check(new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackagesOf(RabbitInboxConsumer.class));
    }
}
