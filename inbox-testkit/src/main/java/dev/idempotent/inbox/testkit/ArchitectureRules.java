package dev.idempotent.inbox.testkit;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.AccessTarget.Predicates.declaredIn;
import static com.tngtech.archunit.core.domain.JavaAccess.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The architecture rule every adapter passes, run from the adapter's tests. An adapter builds on
 * the API and the SPI. Of {@code dev.idempotent.inbox.internal}, which has no compatibility
 * promise, it uses only {@code InboxEngine.open}, the one factory that turns its store into an
 * inbox, so the engine can change without breaking adapters.
 */
public final class ArchitectureRules {

    private static final String INTERNAL = "dev.idempotent.inbox.internal..";
    // A name, not a class literal, so that the testkit itself does not depend on the internal package.
    private static final String ENGINE = "dev.idempotent.inbox.internal.InboxEngine";

    private ArchitectureRules() {
    }

    /**
     * The rule that a class outside {@code dev.idempotent.inbox.internal} uses nothing from that
     * package except {@code InboxEngine.open}; naming {@code InboxEngine}, the type {@code open}
     * returns, is part of calling it.
     *
     * @return the rule, to check against the classes of one adapter
     */
    public static ArchRule internalOnlyThroughTheEngineFactory() {
        return noClasses().that().resideOutsideOfPackage(INTERNAL)
                .should().dependOnClassesThat(resideInAPackage(INTERNAL).and(not(name(ENGINE))))
                .orShould().accessTargetWhere(target(declaredIn(ENGINE)).and(not(target(name("open")))))
                .because("the internal package has no compatibility promise; InboxEngine.open is the one entry");
    }

    /**
     * Checks the main classes in the package of {@code adapterClass}, and in its subpackages,
     * against {@link #internalOnlyThroughTheEngineFactory()}. Test classes are left out: a test may
     * reach into the engine to observe it.
     *
     * @param adapterClass any main class of the adapter, such as its inbox class; not null
     * @throws AssertionError naming each offending dependency, or when no main class was found
     */
    public static void checkAdapter(Class<?> adapterClass) {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackagesOf(adapterClass);
        internalOnlyThroughTheEngineFactory().check(classes);
    }
}
