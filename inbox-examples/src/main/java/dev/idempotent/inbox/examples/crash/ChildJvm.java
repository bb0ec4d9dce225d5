package dev.idempotent.inbox.examples.crash;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A Java program running in a child JVM of the same Java installation, with the same class path as
 * this JVM, spoken to line by line over its standard input and output.
 *
 * <p>The class path is this JVM's {@code java.class.path}, so the child sees the same classes
 * whether this JVM runs from the examples' shaded jar, from Maven's test class path or from an
 * IDE. Standard output is read on a thread of its own into a queue, so a waiting parent can give
 * up after a timeout instead of blocking forever on a child that died; standard error is kept (its
 * last lines) for failure messages, or written whole to a file when the caller wants to read the
 * child's log. Timeouts are safety nets for broken children, never the means
 * of synchronisation: a parent waits for a line the child prints once it has reached a point.
 *
 * <p>Closing stops the child forcibly if it still runs. A child whose parent dies sees its
 * standard input end, which well-behaved children take as the signal to exit.
 *
 * <p>Not thread-safe: one thread talks to one child; several children may run side by side.
 */
public final class ChildJvm implements AutoCloseable {

    /** Options that make a short-lived child start faster; the code under test is unaffected. */
    public static final List<String> FAST_START = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    private static final int STDERR_LINES_KEPT = 40;

    // A distinct instance marks the end of the output; compared by identity, never by value.
    private static final String END_OF_OUTPUT = new String("<end of output>");

    private final String name;
    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> stdout = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>(); // lines taken from stdout, for failure messages
    private final List<String> stderr = new ArrayList<>(); // guarded by itself
    private final Path stderrFile; // null when standard error is kept in memory
    private boolean ended;

    private ChildJvm(String name, Process process, Path stderrFile) {
        this.name = name;
        this.process = process;
        this.stderrFile = stderrFile;
        this.stdin = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
        pump(process.getInputStream(), stdout::add, true);
        pump(process.getErrorStream(), this::keepStderr, false);
    }

    /**
     * Starts {@code mainClass} in a child JVM.
     *
     * @param name a short name for thread names and failure messages
     * @param jvmOptions options before the class name, such as {@code -Dkey=value}
     * @param mainClass the fully qualified name of a class with a {@code main} method
     * @param args the program's arguments
     * @throws UncheckedIOException if the process cannot be started
     */
    public static ChildJvm start(String name, List<String> jvmOptions, String mainClass, List<String> args) {
        return start(name, jvmOptions, mainClass, args, null);
    }

    /**
     * Starts {@code mainClass} in a child JVM whose standard error goes, whole, to {@code stderrFile}
     * (created or truncated), for a caller that reads the child's log; otherwise as
     * {@link #start(String, List, String, List)}.
     *
     * @param stderrFile where standard error goes, or {@code null} to keep its last lines in memory
     * @throws UncheckedIOException if the process cannot be started
     */
    public static ChildJvm start(String name, List<String> jvmOptions, String mainClass, List<String> args,
            Path stderrFile) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mainClass, "mainClass");
        List<String> command = new ArrayList<>();
        command.add(javaBinary().toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(classPath());
        command.add(mainClass);
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        if (stderrFile != null) {
            builder.redirectError(stderrFile.toFile());
        }
        try {
            return new ChildJvm(name, builder.start(), stderrFile);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start child JVM " + name + ": " + command, e);
        }
    }

    /** The {@code java} launcher of the running JVM. */
    public static Path javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /**
     * This JVM's class path with every entry made absolute, so a child started in another working
     * directory finds the same classes.
     */
    public static String classPath() {
        return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry).toAbsolutePath().toString())
                .collect(Collectors.joining(File.pathSeparator));
    }

    /** The child's process id. */
    public long pid() {
        return process.pid();
    }

    /** Whether the child still runs. */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Writes one line to the child's standard input and flushes it.
     *
     * @throws UncheckedIOException if the child no longer reads (it exited)
     */
    public void send(String line) {
        try {
            stdin.write(line);
            stdin.write('\n');
            stdin.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(failure("cannot write to the child: " + e.getMessage()), e);
        }
    }

    /**
     * Waits for the next line of standard output that {@code wanted} accepts; lines before it are
     * kept for failure messages only.
     *
     * @throws IllegalStateException if the output ends or {@code timeout} passes first
     */
    public String awaitLine(Predicate<String> wanted, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = poll(deadline, timeout);
            if (line == END_OF_OUTPUT) {
                // Put it back: every later wait must see the end too.
                stdout.add(END_OF_OUTPUT);
                throw new IllegalStateException(failure("the child's output ended before the awaited line"));
            }
            seen.add(line);
            if (wanted.test(line)) {
                return line;
            }
        }
    }

    /** Waits for the next line of standard output, whatever it says; as {@link #awaitLine}. */
    public String nextLine(Duration timeout) {
        return awaitLine(line -> true, timeout);
    }

    /**
     * Waits until the child closes its standard output (it usually exits then) and returns the
     * lines not taken yet, in order.
     *
     * @throws IllegalStateException if {@code timeout} passes first
     */
    public List<String> restOfOutput(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<String> rest = new ArrayList<>();
        while (true) {
            String line = poll(deadline, timeout);
            if (line == END_OF_OUTPUT) {
                stdout.add(END_OF_OUTPUT);
                return rest;
            }
            seen.add(line);
            rest.add(line);
        }
    }

    private String poll(long deadline, Duration timeout) {
        try {
            String line = stdout.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new IllegalStateException(failure("no awaited line within " + timeout));
            }
            return line;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(failure("interrupted while waiting for the child"), e);
        }
    }

    /**
     * Waits for the child to exit by itself.
     *
     * @return its exit status
     * @throws IllegalStateException if it still runs after {@code timeout}
     */
    public int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new IllegalStateException(failure("the child did not exit within " + timeout));
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(failure("interrupted while waiting for the child to exit"), e);
        }
    }

    /**
     * Kills the child at once, like {@code kill -9}: no shutdown hooks, no flushing, no closing,
     * and waits until it is gone.
     *
     * @return its exit status
     */
    public int kill() {
        process.destroyForcibly();
        try {
            return process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(failure("interrupted while waiting for the killed child"), e);
        }
    }

    /**
     * Asks the child to stop, like {@code kill} (SIGTERM): its shutdown hooks run, and its standard
     * output stays readable for the lines they print. Returns at once; see {@link #awaitExit}.
     */
    public void terminate() {
        // ProcessHandle's destroy, unlike Process.destroy, leaves the output pipe open.
        process.toHandle().destroy();
    }

    /** The last lines the child wrote to standard error; empty when it goes to a file. */
    public List<String> stderrTail() {
        synchronized (stderr) {
            return List.copyOf(stderr);
        }
    }

    /** Forcibly stops the child if it still runs; a child that exited is left as it is. */
    @Override
    public void close() {
        if (!ended) {
            ended = true;
            if (process.isAlive()) {
                kill();
            }
            try {
                stdin.close();
            } catch (IOException ignored) {
                // The child is gone; its pipe may already be broken.
            }
        }
    }

    private String failure(String what) {
        StringBuilder message = new StringBuilder()
                .append("child JVM ").append(name).append(" (pid ").append(process.pid()).append("): ").append(what)
                .append(process.isAlive() ? "; still running" : "; exited with status " + process.exitValue());
        message.append("\n  stdout so far: ").append(seen);
        if (stderrFile != null) {
            message.append("\n  stderr: in ").append(stderrFile);
        }
        List<String> errors = stderrTail();
        if (!errors.isEmpty()) {
            message.append("\n  stderr (last lines):");
            errors.forEach(line -> message.append("\n    ").append(line));
        }
        return message.toString();
    }

    private void keepStderr(String line) {
        synchronized (stderr) {
            if (stderr.size() == STDERR_LINES_KEPT) {
                stderr.remove(0);
            }
            stderr.add(line);
        }
    }

    private void pump(InputStream stream, Consumer<String> sink, boolean markEnd) {
        Thread thread = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    sink.accept(line);
                }
            } catch (IOException ignored) {
                // The pipe broke because the child died; the end marker below says so to waiters.
            } finally {
                if (markEnd) {
                    sink.accept(END_OF_OUTPUT);
                }
            }
        }, "child-" + name + (markEnd ? "-stdout" : "-stderr"));
        // The pumps must never keep a finished parent alive.
        thread.setDaemon(true);
        thread.start();
    }
}
