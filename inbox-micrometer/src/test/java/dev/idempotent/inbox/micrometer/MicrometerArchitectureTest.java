package dev.idempotent.inbox.micrometer;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** An integration module builds on the public API alone: neither the engine nor the adapters' SPI. */
class MicrometerArchitectureTest {

    @Test
    void mainClassesUseOnlyThePublicApi() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.idempotent.inbox.micrometer");
        noClasses().that().resideInAPackage("dev.idempotent.inbox.micrometer")
                .should().dependOnClassesThat().resideInAnyPackage("dev.idempotent.inbox.internal..",
                        "dev.idempotent.inbox.spi..")
                .check(classes);
    }
}
