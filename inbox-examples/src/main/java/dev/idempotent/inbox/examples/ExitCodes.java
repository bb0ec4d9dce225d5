package dev.idempotent.inbox.examples;

/**
 * The exit codes of the examples' commands, one per kind of failure, so that a script can tell
 * them apart; each command's {@code --help} lists those it uses.
 */
final class ExitCodes {

    /** Done: for {@code publish}, nothing left pending or exhausted. */
    static final int OK = 0;
    /** {@code publish}: items are left pending or exhausted. {@code crash-lab}: a phase failed. */
    static final int UNSETTLED = 1;
    /**
     * The command line is wrong: an unknown option, a missing or bad option value (picocli's own
     * code). The message is one line naming the option and what it accepts.
     */
    static final int USAGE = 2;
    /** The input file ({@code publish --file}) is missing, unreadable or malformed. */
    static final int INPUT = 3;
    /** The database cannot be used: read-only, corrupt, unreachable, or from a newer version. */
    static final int DATABASE = 4;
    /**
     * The network: {@code serve} cannot listen on its address (the port is in use, or the address is
     * not this machine's); {@code consume}'s broker does not answer or its queue cannot be consumed.
     */
    static final int NETWORK = 5;
    /** Anything else: a defect, reported with its stack trace (sysexits' EX_SOFTWARE). */
    static final int SOFTWARE = 70;

    static final String HEADING = "%nExit codes:%n";
    static final String USAGE_LINE = " 2:the command line is wrong: an unknown option, a missing or bad option value";
    static final String INPUT_LINE = " 3:the --file is missing, unreadable or malformed (its line and the reason are named)";
    static final String DATABASE_LINE = " 4:the database cannot be used: read-only, not a SQLite database or damaged,"
            + " unreachable, or written by a newer version";
    static final String NETWORK_LINE = " 5:the --port is in use, or --bind is not an address of this machine";
    static final String SOFTWARE_LINE = "70:an internal error, printed with its stack trace";

    private ExitCodes() {}
}
