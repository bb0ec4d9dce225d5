package dev.idempotent.inbox.spring;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityTransaction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.dao.support.DataAccessUtils;
import org.springframework.orm.jpa.EntityManagerFactoryInfo;
import org.springframework.orm.jpa.EntityManagerFactoryUtils;
import org.springframework.orm.jpa.EntityManagerHolder;
import org.springframework.orm.jpa.JpaDialect;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The JPA persistence contexts taking part in the current Spring transaction, those a
 * {@code JpaTransactionManager} bound to the thread. Named only behind {@link SpringInbox#JPA_PRESENT},
 * so that it is loaded only when the application has Spring's JPA support, and the starter needs
 * neither JPA nor spring-orm.
 */
final class JpaTransactions {

    private JpaTransactions() {
    }

    /**
     * Flushes every entity manager whose resource-local transaction is active on this thread, so that
     * the caller's pending writes reach the database before a joined call's savepoint, and returns
     * what marks those transactions rollback-only, or {@code null} when there are none.
     *
     * @return marks the transactions rollback-only, or {@code null} outside a JPA transaction
     * @throws org.springframework.dao.DataAccessException if a flush fails, translated as the JPA
     *     transaction manager would translate it
     */
    static Runnable flush() {
        List<EntityManager> joined = new ArrayList<>();
        // The application's EntityManagerFactory beans are the keys; the starter does not know them,
        // so it takes every holder bound, as EntityManagerFactoryUtils would find each by its key.
        // A copy: the map is the thread's live one, and a flush may bind a resource (an entity
        // listener's JdbcTemplate, say).
        for (Map.Entry<Object, Object> bound : List.copyOf(TransactionSynchronizationManager.getResourceMap().entrySet())) {
            if (!(bound.getValue() instanceof EntityManagerHolder holder) || !holder.isSynchronizedWithTransaction()) {
                continue;
            }
            EntityManager entityManager = holder.getEntityManager();
            if (!active(entityManager)) {
                continue;
            }
            try {
                entityManager.flush();
            } catch (RuntimeException e) {
                throw translate(bound.getKey(), e);
            }
            joined.add(entityManager);
        }
        return joined.isEmpty() ? null : () -> joined.forEach(JpaTransactions::rollbackOnly);
    }

    /**
     * {@return whether a JPA transaction active on this thread works on {@code dataSource}'s
     * connection}: one whose entity manager factory's data source it is, as {@code
     * JpaTransactionManager} takes its data source from the factory.
     */
    static boolean bindsConnectionOf(DataSource dataSource) {
        for (Map.Entry<Object, Object> bound : TransactionSynchronizationManager.getResourceMap().entrySet()) {
            if (bound.getKey() instanceof EntityManagerFactoryInfo info && info.getDataSource() != null
                    && SpringInbox.transactionKey(info.getDataSource()) == dataSource
                    && bound.getValue() instanceof EntityManagerHolder holder && holder.isSynchronizedWithTransaction()
                    && active(holder.getEntityManager())) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@return whether a JPA transaction on {@code dataSource}'s connection is still bound to this
     * thread with its resource-local transaction over}: the transaction's synchronizations' {@code
     * afterCommit}, before Spring unbinds it.
     */
    static boolean endedOn(DataSource dataSource) {
        for (Map.Entry<Object, Object> bound : TransactionSynchronizationManager.getResourceMap().entrySet()) {
            if (bound.getKey() instanceof EntityManagerFactoryInfo info && info.getDataSource() != null
                    && SpringInbox.transactionKey(info.getDataSource()) == dataSource
                    && bound.getValue() instanceof EntityManagerHolder holder && holder.isSynchronizedWithTransaction()
                    && ended(holder.getEntityManager())) {
                return true;
            }
        }
        return false;
    }

    private static boolean ended(EntityManager entityManager) {
        if (!entityManager.isOpen()) {
            return true;
        }
        try {
            return !entityManager.getTransaction().isActive();
        } catch (IllegalStateException e) {
            // A JTA entity manager: not a transaction the inbox joins, whatever its state.
            return false;
        }
    }

    /** {@return whether {@code manager} is a JPA transaction manager that binds {@code dataSource}'s connections} */
    static boolean manages(Object manager, DataSource dataSource) {
        return manager instanceof JpaTransactionManager jpa && jpa.getDataSource() != null
                && SpringInbox.transactionKey(jpa.getDataSource()) == dataSource;
    }

    private static boolean active(EntityManager entityManager) {
        if (!entityManager.isOpen()) {
            return false;
        }
        try {
            return entityManager.getTransaction().isActive();
        } catch (IllegalStateException e) {
            // A JTA entity manager has no EntityTransaction; its transaction is not one the inbox joins.
            return false;
        }
    }

    private static void rollbackOnly(EntityManager entityManager) {
        EntityTransaction transaction = entityManager.getTransaction();
        if (transaction.isActive()) {
            transaction.setRollbackOnly();
        }
    }

    private static RuntimeException translate(Object factory, RuntimeException e) {
        JpaDialect dialect = factory instanceof EntityManagerFactoryInfo info ? info.getJpaDialect() : null;
        if (dialect != null) {
            return DataAccessUtils.translateIfNecessary(e, dialect);
        }
        RuntimeException translated = EntityManagerFactoryUtils.convertJpaAccessExceptionIfPossible(e);
        return translated == null ? e : translated;
    }
}
