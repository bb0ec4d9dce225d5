package dev.idempotent.inbox;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import org.junit.jupiter.api.Test;

/**
 * The direction of dependencies between core's packages: the API depends on nothing of ours, the
 * SPI packages only on the API, the engine on both; and no package cycle. Checked on the compiled
 * main classes, so a reference only a javadoc makes does not count.
 */
class PackageDependenciesTest {

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
                .whereLayer("SPI JDBC").mayOnlyAccessLayers("API", "SPI")
                .whereLayer("internal").mayOnlyAccessLayers("API", "SPI")
                // a new package has to be given its place here before anything may depend on it
                .ensureAllClassesAreContainedInArchitecture();
        layers.check(CORE);
    }

    @Test
    void packagesAreFreeOfCycles() {
        slices().matching("dev.idempotent.(**)").should().beFreeOfCycles().check(CORE);
    }
}
