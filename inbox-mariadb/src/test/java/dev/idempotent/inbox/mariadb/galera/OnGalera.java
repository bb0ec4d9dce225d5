package dev.idempotent.inbox.mariadb.galera;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test class that runs against the three-node Galera cluster of {@code scripts/galera}, and only
 * when asked with {@code -Dinbox.galera=true}: the cluster takes seconds to start and its own ports.
 * The cluster is started for the run if it is not up, and stopped after the run if it was started
 * for it.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("galera")
@EnabledIfSystemProperty(named = "inbox.galera", matches = "true")
@ExtendWith(GaleraCluster.Extension.class)
@interface OnGalera {}
