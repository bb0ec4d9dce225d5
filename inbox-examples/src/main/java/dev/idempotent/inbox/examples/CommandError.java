package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxStorageException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine;

/**
 * A failure that the user can act on: {@link Main#commandLine()} reports it as one line on
 * standard error, {@code COMMAND: MESSAGE}, and exits with its code; never with a stack trace.
 */
final class CommandError extends RuntimeException {

    private final int exitCode;

    CommandError(int exitCode, String message) {
        // No stack trace: it is never shown, and the message says all there is.
        super(message, null, false, false);
        this.exitCode = exitCode;
    }

    /** One of {@link ExitCodes}. */
    int exitCode() {
        return exitCode;
    }

    /**
     * Refuses, as a bad option value, a file {@code option} would create or open that is a
     * directory or lies in a directory that does not exist. Touches nothing.
     */
    static void requireFileInExistingDirectory(CommandLine commandLine, String option, Path file) {
        if (Files.isDirectory(file)) {
            throw new ParameterException(commandLine, option + " " + file + " is a directory; give a file in it");
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new ParameterException(commandLine, option + " " + file + " is in a directory that does not exist ("
                    + parent + ")");
        }
    }

    /**
     * Creates the directory {@code option} names, with its parents, or refuses, as a bad option
     * value, a path that is a file or cannot be created.
     */
    static Path createDirectory(CommandLine commandLine, String option, Path dir) {
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new ParameterException(commandLine, option + " " + dir + " is a file; give a directory");
        }
        try {
            return Files.createDirectories(dir);
        } catch (IOException | UnsupportedOperationException e) {
            throw new ParameterException(commandLine, option + " " + dir + " cannot be created (" + ioReason(e)
                    + "); give a directory that can be written");
        }
    }

    /** What an I/O failure on a path means, in words rather than its exception's name. */
    private static String ioReason(Exception e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileSystemException fs && fs.getReason() != null) {
            return oneLine(fs.getReason());
        }
        if (e instanceof FileSystemException) {
            return "a part of it is not a directory, or it cannot be written";
        }
        return oneLine(String.valueOf(e.getMessage()));
    }

    /**
     * The error for a database that {@code option} names, shown as {@code shown}, and that failed
     * with {@code failure}.
     */
    static CommandError database(String option, String shown, boolean isFile, InboxStorageException failure) {
        String what = option + " " + shown;
        String message = switch (failure.kind()) {
            case READ_ONLY -> what + " is read-only; it must be writable";
            case CORRUPT -> isFile ? what + " is not a SQLite database, or it is damaged"
                    : what + " reports damaged data: " + reason(failure);
            case NEWER_SCHEMA -> what + " holds tables written by a newer version: " + reason(failure);
            case SCHEMA_MISSING -> what + " lacks the inbox's tables: " + reason(failure);
            case DISK_FULL -> what + ": no space left on its device";
            case UNAVAILABLE -> what + (isFile ? " cannot be opened: " : " cannot be reached: ") + reason(failure);
            case OTHER -> what + " cannot be used: " + reason(failure);
        };
        return new CommandError(ExitCodes.DATABASE, message);
    }

    /** The database's own words, without the exception names around them, on one line. */
    private static String reason(InboxStorageException failure) {
        String reason = failure.getMessage();
        for (Throwable t = failure.getCause(); t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getMessage() != null) {
                reason = sql.getMessage();
                break;
            }
        }
        return oneLine(reason);
    }

    /** {@code text} with its line breaks and the spaces around them made one space. */
    static String oneLine(String text) {
        return String.valueOf(text).strip().replaceAll("\\s*\\R\\s*", " ");
    }
}
