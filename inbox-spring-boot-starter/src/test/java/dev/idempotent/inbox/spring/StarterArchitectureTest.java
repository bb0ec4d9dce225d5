package dev.idempotent.inbox.spring;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import org.junit.jupiter.api.Test;

/**
 * The starter works through the inbox's public API, and never names a JDBC driver: the drivers are
 * the application's, so a store whose driver is absent must not be loaded by the starter's classes.
 */
class StarterArchitectureTest {

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.idempotent.inbox.spring");

    @Test
    void usesThePublicApiOnly() {
        noClasses().should().dependOnClassesThat(resideInAnyPackage("dev.idempotent.inbox.internal..",
                        "dev.idempotent.inbox.spi..", "dev.idempotent.inbox.jdbi.spi..")
                        .and(not(belongToAnyOf(SchemaMigrations.class))))
                .because("the starter configures and calls inboxes as any application would; it reads the schema"
                        + " level for Actuator as the stores do, through SchemaMigrations, which applications may use too")
                .check(MAIN);
    }

    @Test
    void namesNoJdbcDriver() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("org.sqlite..", "org.postgresql..", "org.mariadb..")
                .because("the starter comes without drivers; the application brings the one it uses")
                .check(MAIN);
    }

    @Test
    void namesEachStoreInOneClassOnly() {
        noClasses().that().doNotHaveSimpleName("InboxStores")
                .should().dependOnClassesThat().resideInAnyPackage("dev.idempotent.inbox.sqlite..",
                        "dev.idempotent.inbox.postgres..", "dev.idempotent.inbox.mariadb..")
                .because("a store is loaded only for its database, from InboxStores")
                .check(MAIN);
    }

    @Test
    void namesJpaInOneClassOnly() {
        noClasses().that().doNotHaveSimpleName("JpaTransactions")
                .should().dependOnClassesThat().resideInAnyPackage("jakarta.persistence..", "org.springframework.orm..")
                .because("JPA is the application's choice; its classes are loaded only when it is on the class path")
                .check(MAIN);
    }
}
