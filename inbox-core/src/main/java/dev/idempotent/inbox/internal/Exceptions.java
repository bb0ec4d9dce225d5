package dev.idempotent.inbox.internal;

/** Rethrowing an exception whose static type was lost on its way across threads or lambdas. */
public final class Exceptions {

    private Exceptions() {}

    /**
     * {@code failure}, typed as what the caller's effect declares. Only valid where the failure is
     * known to be either unchecked or the effect's own exception, which is of type {@code X}.
     */
    @SuppressWarnings("unchecked")
    public static <X extends Exception> X asThrownBy(Exception failure) throws X {
        if (failure instanceof RuntimeException unchecked) {
            throw unchecked;
        }
        return (X) failure;
    }

    /** {@code failure} thrown without a checked-exception declaration, unchanged. */
    public static RuntimeException unchecked(Exception failure) {
        return Exceptions.<RuntimeException>sneaky(failure);
    }

    @SuppressWarnings("unchecked")
    private static <T extends Exception> T sneaky(Exception failure) throws T {
        throw (T) failure;
    }
}
