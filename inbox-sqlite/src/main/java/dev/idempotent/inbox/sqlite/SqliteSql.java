package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.spi.jdbc.InboxRows;

/**
 * The store's statements for one inbox's tables. The table names come only from the
 * {@link InboxTables}, which accepts plain identifiers alone; every value is a bound parameter.
 */
final class SqliteSql {

    final InboxTables tables;
    final String claim;
    final String select;
    final String selectHorizon;
    final String storeResult;
    final String raiseHorizon;
    final String deleteOldest;

    SqliteSql(InboxTables tables) {
        this.tables = tables;
        String message = tables.messageTable();
        claim = "INSERT INTO " + message + " (" + InboxRows.COLUMNS + ") VALUES (" + InboxRows.PLACEHOLDERS
                + ") ON CONFLICT (inbox, id) DO NOTHING";
        select = "SELECT " + InboxRows.COLUMNS + ", " + InboxRows.RESULT_COLUMNS + " FROM " + message
                + " WHERE inbox = ? AND id = ?";
        selectHorizon = "SELECT horizon FROM " + tables.horizonTable() + " WHERE inbox = ?";
        storeResult = "UPDATE " + message + " SET result_type = ?, result_type_version = ?, result = ?"
                + " WHERE inbox = ? AND id = ?";
        raiseHorizon = "INSERT INTO " + tables.horizonTable() + " (inbox, horizon) VALUES (?, ?)\n"
                + "ON CONFLICT (inbox) DO UPDATE SET horizon = max(horizon, excluded.horizon)";
        deleteOldest = "DELETE FROM " + message + " WHERE inbox = :inbox AND id IN (\n"
                + "    SELECT id FROM " + message + "\n"
                + "    WHERE inbox = :inbox AND received_at < :cutoff AND (received_at, id) > (:afterReceivedAt, :afterId)\n"
                + "    ORDER BY received_at, id LIMIT :limit)\n"
                + "RETURNING received_at, id";
    }
}
