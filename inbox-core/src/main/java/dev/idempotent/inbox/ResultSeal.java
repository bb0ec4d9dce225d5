package dev.idempotent.inbox;

/**
 * Seals a result's encoded bytes before they are stored, and opens them after they are read: the
 * hook to encrypt a sensitive result, or to keep only what a retry needs. Given to
 * {@link ResultCodec#sealedWith}.
 *
 * <p>A stored result is data at rest with the same retention as its record: whatever
 * {@link #seal} returns stays in the database until the record is purged. A seal that encrypts
 * carries what it needs to open its own output later (a key id in the bytes, say), since the type
 * name and version are the codec's. Implementations must be thread-safe; an exception either
 * method throws fails the call (from {@link #open}, as an unreadable stored result).
 */
@Beta
public interface ResultSeal {

    /**
     * Seals encoded bytes for storing; runs in the call's transaction, after the effect.
     *
     * @param encoded what the codec encoded; never {@code null}
     * @return what to store; not {@code null}
     */
    byte[] seal(byte[] encoded);

    /**
     * Opens what {@link #seal} returned.
     *
     * @param sealed the stored bytes; never {@code null}
     * @return the encoded bytes for the codec to decode; not {@code null}
     */
    byte[] open(byte[] sealed);
}
