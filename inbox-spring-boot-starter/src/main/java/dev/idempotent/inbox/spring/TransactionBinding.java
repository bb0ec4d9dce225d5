package dev.idempotent.inbox.spring;

import java.lang.reflect.Method;
import org.springframework.jdbc.datasource.ConnectionHolder;

/**
 * Whether a connection bound to the thread carries a transaction that a JDBC transaction manager
 * began on it. {@code DataSourceUtils} also binds a connection, for the rest of a transaction of
 * another resource, when something uses the data source inside it; that connection is released at
 * the end and never committed, and with a pool that hands out connections with autocommit off,
 * nothing on the connection itself tells the two apart. Spring keeps the difference in
 * {@code ConnectionHolder.isTransactionActive()}, which it opens to its own transaction managers
 * only, so it is read here reflectively.
 */
final class TransactionBinding {

    private static final Method TRANSACTION_ACTIVE = transactionActive();

    private TransactionBinding() {
    }

    private static Method transactionActive() {
        try {
            Method method = ConnectionHolder.class.getDeclaredMethod("isTransactionActive");
            method.setAccessible(true);
            return method;
        } catch (ReflectiveOperationException | RuntimeException e) {
            // Spring on the module path, or a release without the method: the binding alone decides.
            return null;
        }
    }

    /**
     * {@return whether a JDBC transaction manager began a transaction on the holder's connection}, or
     * {@code true} when that cannot be read, so that the binding alone decides.
     */
    static boolean begun(ConnectionHolder holder) {
        if (TRANSACTION_ACTIVE == null) {
            return true;
        }
        try {
            return (Boolean) TRANSACTION_ACTIVE.invoke(holder);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return true;
        }
    }
}
