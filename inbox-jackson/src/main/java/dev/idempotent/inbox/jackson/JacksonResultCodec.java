package dev.idempotent.inbox.jackson;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.ResultCodec;
import java.io.IOException;
import java.util.Objects;

/**
 * A {@link ResultCodec} that stores a result as the JSON an {@link ObjectMapper} writes, in
 * UTF-8, and reads it back with the same mapper:
 *
 * <pre>{@code
 * ResultInbox<Handle, Confirmation> orders = inbox.storingResults(
 *         JacksonResultCodec.of(mapper, Confirmation.class, "orders.Confirmation", 1));
 * }</pre>
 *
 * <p>The type name and version are yours, as a content type's are: raise the version when the JSON
 * changes so that the old reader would misread it, and give the new codec the versions it still
 * reads with {@link #alsoDecoding}. A stored result the mapper refuses (a property it does not
 * know, with the mapper's default {@code FAIL_ON_UNKNOWN_PROPERTIES}) is reported as unreadable,
 * never half read. The mapper is used as configured; it must not change after the codec is
 * built (Jackson's own rule for a mapper in use). Thread-safe.
 *
 * <p>Errors name the JSON's line and column, never its text: a stored result is business data,
 * and error messages reach logs.
 *
 * @param <R> the result type
 */
@Beta
public final class JacksonResultCodec<R> implements ResultCodec<R> {

    private final ObjectWriter writer;
    private final ObjectReader reader;
    private final String typeName;
    private final int version;
    private final int[] alsoDecoded;

    private JacksonResultCodec(ObjectWriter writer, ObjectReader reader, String typeName, int version, int[] alsoDecoded) {
        this.writer = writer;
        this.reader = reader;
        this.typeName = Objects.requireNonNull(typeName, "typeName");
        if (typeName.isBlank()) {
            throw new IllegalArgumentException("typeName must not be blank");
        }
        if (version < 0) {
            throw new IllegalArgumentException("version must not be negative, was " + version);
        }
        this.version = version;
        this.alsoDecoded = alsoDecoded;
    }

    /**
     * A codec for results of class {@code type}.
     *
     * @param <R> the result type
     * @param mapper the mapper that writes and reads the JSON; not {@code null}
     * @param type the result's class; not {@code null}
     * @param typeName the type name stored with each result, 1 to 100 characters without control
     *     characters, such as {@code orders.Confirmation}
     * @param version the version this codec writes, zero or more
     * @return the codec; it decodes only {@code version} until {@link #alsoDecoding} says more
     * @throws IllegalArgumentException if the name is blank or the version negative
     */
    public static <R> JacksonResultCodec<R> of(ObjectMapper mapper, Class<R> type, String typeName, int version) {
        Objects.requireNonNull(mapper, "mapper");
        return of(mapper, mapper.constructType(Objects.requireNonNull(type, "type")), typeName, version);
    }

    /**
     * A codec for results of a generic type, such as {@code new TypeReference<List<Booking>>() {}}.
     *
     * @param <R> the result type
     * @param mapper the mapper that writes and reads the JSON; not {@code null}
     * @param type the result's type; not {@code null}
     * @param typeName the type name stored with each result
     * @param version the version this codec writes, zero or more
     * @return the codec
     * @throws IllegalArgumentException if the name is blank or the version negative
     */
    public static <R> JacksonResultCodec<R> of(ObjectMapper mapper, TypeReference<R> type, String typeName,
            int version) {
        Objects.requireNonNull(mapper, "mapper");
        return of(mapper, mapper.constructType(Objects.requireNonNull(type, "type")), typeName, version);
    }

    private static <R> JacksonResultCodec<R> of(ObjectMapper mapper, JavaType type, String typeName, int version) {
        return new JacksonResultCodec<>(mapper.writerFor(type), mapper.readerFor(type), typeName, version, new int[0]);
    }

    /**
     * This codec, reading besides its own version the older {@code versions} whose JSON it reads
     * correctly (a property added since, say, which older results lack).
     *
     * @param versions the older versions this codec's reader reads as they are
     * @return the codec that decodes them too
     */
    public JacksonResultCodec<R> alsoDecoding(int... versions) {
        return new JacksonResultCodec<>(writer, reader, typeName, version, versions.clone());
    }

    @Override
    public String type() {
        return typeName;
    }

    @Override
    public int version() {
        return version;
    }

    @Override
    public boolean decodes(int storedVersion) {
        if (storedVersion == version) {
            return true;
        }
        for (int also : alsoDecoded) {
            if (also == storedVersion) {
                return true;
            }
        }
        return false;
    }

    /**
     * Writes {@code result} as JSON.
     *
     * @param result the effect's result, not {@code null}
     * @return its JSON in UTF-8
     * @throws IllegalArgumentException if the mapper cannot write it (no serializer for a class, say)
     */
    @Override
    public byte[] encode(R result) {
        try {
            return writer.writeValueAsBytes(result);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("a result of type " + typeName + " could not be written as JSON: "
                    + e.getClass().getSimpleName() + where(e.getLocation()));
        }
    }

    /**
     * Reads a stored result.
     *
     * @param bytes the stored JSON
     * @param storedVersion the version it was stored with
     * @return the result
     * @throws IllegalArgumentException if the JSON does not read as the type; the message names
     *     where, not what
     */
    @Override
    public R decode(byte[] bytes, int storedVersion) {
        try {
            return reader.readValue(bytes);
        } catch (JsonProcessingException e) {
            // Without the cause: Jackson's messages quote the tokens they could not read.
            throw new IllegalArgumentException("a stored result of type " + typeName + " v" + storedVersion
                    + " does not read as JSON of that type: " + e.getClass().getSimpleName() + where(e.getLocation()));
        } catch (IOException e) {
            throw new IllegalArgumentException("a stored result of type " + typeName + " v" + storedVersion
                    + " could not be read: " + e.getClass().getSimpleName());
        }
    }

    private static String where(JsonLocation location) {
        return location == null ? "" : " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    }

    @Override
    public String toString() {
        return "JacksonResultCodec[" + typeName + " v" + version + "]";
    }
}
