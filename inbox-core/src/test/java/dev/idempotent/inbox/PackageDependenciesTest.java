package dev.idempotent.inbox;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import com.tngtech.archunit.library.dependencies.SliceRule;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The direction of dependencies between core's packages: the API depends on nothing of ours, the
 * SPI packages only on the API, the engine on both; and no package cycle. Checked on the compiled
 * main classes, so a reference only a javadoc makes does not count.
 */
class PackageDependenciesTest {

    /** A dependency the rules tolerate for now, from one class to another, and why. */
    private record Allowed(String origin, String target, String reason) {
    }

    /*
     * Temporary exceptions, each a single class-to-class dependency, never a package. Remove an
     * entry with the change that ends it; allowedDependenciesAreStillThere fails while a stale one is
     * left.
     */
    private static final List<Allowed> ALLOWED = List.of(
            new Allowed("dev.idempotent.inbox.Content", "dev.idempotent.inbox.internal.FingerprintEncoding",
                    "moves into the API package next"));

    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.idempotent.inbox");

    @Test
    void eachPackageDependsOnlyOnThePackagesBelowIt() {
        LayeredArchitecture layers = layeredArchitecture()
                .consideringOnlyDependenciesInAnyPackage("dev.idempotent..")
                .layer("API").definedBy("dev.idempotent.inbox")
                .layer("SPI").definedBy("dev.idempotent.inbox.spi")
                .layer("SPI JDBC").definedBy("dev.idempotent.inbox.spi.jdbc")
                .layer("internal").definedBy("dev.idempotent.inbox.internal")
                .whereLayer("API").mayNotAccessAnyLayer()
                .whereLayer("SPI").mayOnlyAccessLayers("API")
                .whereLayer("SPI JDBC").mayOnlyAccessLayers("API")
                .whereLayer("internal").mayOnlyAccessLayers("API", "SPI")
                // a new package has to be given its place here before anything may depend on it
                .ensureAllClassesAreContainedInArchitecture();
        for (Allowed allowed : ALLOWED) {
            layers = layers.ignoreDependency(allowed.origin(), allowed.target());
        }
        layers.check(CORE);
    }

    @Test
    void packagesAreFreeOfCycles() {
        SliceRule noCycles = slices().matching("dev.idempotent.(**)").should().beFreeOfCycles();
        for (Allowed allowed : ALLOWED) {
            noCycles = noCycles.ignoreDependency(allowed.origin(), allowed.target());
        }
        noCycles.check(CORE);
    }

    @Test
    void allowedDependenciesAreStillThere() {
        for (Allowed allowed : ALLOWED) {
            boolean stillThere = CORE.contain(allowed.origin()) && CORE.get(allowed.origin())
                    .getDirectDependenciesFromSelf().stream()
                    .anyMatch(dependency -> dependency.getTargetClass().getName().equals(allowed.target()));
            assertTrue(stillThere, allowed.origin() + " no longer depends on " + allowed.target()
                    + ": remove it from ALLOWED (" + allowed.reason() + ")");
        }
    }
}
