/**
 * What JDBC stores share: column order, claim binding, row mapping, time columns and schema
 * scripts. A JDBC adapter is then its SQL and its error translation.
 */
package dev.idempotent.inbox.spi.jdbc;
