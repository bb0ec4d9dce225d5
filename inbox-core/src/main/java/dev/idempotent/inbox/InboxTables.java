package dev.idempotent.inbox;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where an inbox keeps its tables: a prefix that every table, index and constraint name of the
 * library starts with, and optionally the schema (PostgreSQL) or database (MariaDB) they live in.
 *
 * <p>The default is prefix {@code inbox_} and the connection's own schema or database: tables
 * {@code inbox_schema}, {@code inbox_message}, {@code inbox_horizon} and {@code inbox_kafka_offset}.
 * With prefix {@code orders_} they are {@code orders_schema}, {@code orders_message} and so on, and
 * the library's derived names (an index such as {@code orders_message_received}) carry the prefix
 * too, so two inboxes on different prefixes share a schema without a clash. Tables the library adds
 * later are named the same way: the prefix and a suffix of at most {@link #MAX_SUFFIX_BYTES} bytes.
 *
 * <p>Both names are plain SQL identifiers, checked here before anything touches the database:
 * lower-case ASCII letters, digits and underscores, not starting with a digit, and short enough
 * that every derived name stays within PostgreSQL's 63 bytes. They are written into SQL unquoted,
 * so a name that is a reserved word of the database (a schema called {@code select}) is refused by
 * the database when the inbox starts.
 */
@Beta
public final class InboxTables {

    /** The prefix of an inbox that chose none. */
    public static final String DEFAULT_PREFIX = "inbox_";

    /**
     * The longest suffix the library appends to the prefix, for a table or a name derived from one
     * (such as {@code kafka_offset_pkey}, PostgreSQL's name of that table's primary key).
     */
    public static final int MAX_SUFFIX_BYTES = 31;

    /** The longest identifier PostgreSQL keeps whole (MariaDB's limit, 64, is one more). */
    public static final int MAX_IDENTIFIER_BYTES = 63;

    /** The longest prefix: with any suffix of the library's, a name fits {@link #MAX_IDENTIFIER_BYTES}. */
    public static final int MAX_PREFIX_BYTES = MAX_IDENTIFIER_BYTES - MAX_SUFFIX_BYTES;

    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");

    private static final InboxTables DEFAULTS = new InboxTables(DEFAULT_PREFIX, null);

    private final String prefix;
    private final String schema;

    private InboxTables(String prefix, String schema) {
        this.prefix = prefix;
        this.schema = schema;
    }

    /** {@return prefix {@code inbox_} in the connection's own schema or database} */
    public static InboxTables defaults() {
        return DEFAULTS;
    }

    /**
     * Tables named with {@code prefix}, in the connection's own schema or database.
     *
     * @param prefix the start of every table name, such as {@code orders_}
     * @return the names
     * @throws IllegalArgumentException if {@code prefix} is not a plain identifier of at most
     *     {@link #MAX_PREFIX_BYTES} bytes; the message names what is accepted
     */
    public static InboxTables prefix(String prefix) {
        return new InboxTables(check("table prefix", prefix, MAX_PREFIX_BYTES), null);
    }

    /**
     * These tables in {@code schema}: a PostgreSQL schema or a MariaDB database, which must exist.
     * SQLite has no schemas and refuses one when the inbox is built.
     *
     * @param schema the schema's name
     * @return the names, in that schema
     * @throws IllegalArgumentException if {@code schema} is not a plain identifier of at most
     *     {@link #MAX_IDENTIFIER_BYTES} bytes
     */
    public InboxTables inSchema(String schema) {
        return new InboxTables(prefix, check("schema", schema, MAX_IDENTIFIER_BYTES));
    }

    /** {@return the prefix every table name starts with} */
    public String prefix() {
        return prefix;
    }

    /** {@return the schema or database the tables are in; empty for the connection's own} */
    public Optional<String> schema() {
        return Optional.ofNullable(schema);
    }

    /** {@return whether these are the default names: prefix {@code inbox_}, the connection's own schema} */
    public boolean isDefault() {
        return equals(DEFAULTS);
    }

    /**
     * The unqualified name of one of the library's tables or derived names.
     *
     * @param suffix what follows the prefix, such as {@code message} or {@code message_received}
     * @return the prefix followed by {@code suffix}
     * @throws IllegalArgumentException if {@code suffix} is not a plain identifier of at most
     *     {@link #MAX_SUFFIX_BYTES} bytes
     */
    public String name(String suffix) {
        return prefix + check("table suffix", suffix, MAX_SUFFIX_BYTES);
    }

    /**
     * The name of one of the library's tables as SQL statements write it: qualified with the
     * schema when there is one.
     *
     * @param suffix what follows the prefix, such as {@code message}
     * @return {@code schema.prefix_suffix}, or {@code prefix_suffix} without a schema
     */
    public String qualified(String suffix) {
        String name = name(suffix);
        return schema == null ? name : schema + "." + name;
    }

    /** {@return the table of schema versions, qualified: {@code inbox_schema} by default} */
    public String schemaTable() {
        return qualified("schema");
    }

    /** {@return the table of records, qualified: {@code inbox_message} by default} */
    public String messageTable() {
        return qualified("message");
    }

    /** {@return the table of horizons, qualified: {@code inbox_horizon} by default} */
    public String horizonTable() {
        return qualified("horizon");
    }

    /** {@return inbox-kafka's table of offsets, qualified: {@code inbox_kafka_offset} by default} */
    public String kafkaOffsetTable() {
        return qualified("kafka_offset");
    }

    /** {@return where the tables are, for messages: {@code "tables inbox_* in schema billing"}} */
    public String describe() {
        return "tables " + prefix + "*" + (schema == null ? "" : " in schema " + schema);
    }

    private static String check(String what, String name, int maxBytes) {
        Objects.requireNonNull(name, what);
        if (!IDENTIFIER.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " '" + name + "' is not a plain identifier: use lower-case"
                    + " letters a-z, digits and underscores, not starting with a digit");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > maxBytes) {
            throw new IllegalArgumentException(what + " '" + name + "' is " + name.length() + " bytes long; at most "
                    + maxBytes + " are accepted, so that every name derived from it fits PostgreSQL's "
                    + MAX_IDENTIFIER_BYTES);
        }
        return name;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof InboxTables that && prefix.equals(that.prefix) && Objects.equals(schema, that.schema);
    }

    @Override
    public int hashCode() {
        return Objects.hash(prefix, schema);
    }

    @Override
    public String toString() {
        return schema == null ? prefix + "*" : schema + "." + prefix + "*";
    }
}
