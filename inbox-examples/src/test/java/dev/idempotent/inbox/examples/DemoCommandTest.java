package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.crash.ChildJvm;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class DemoCommandTest {

    @TempDir
    Path dir;

    @Test
    void demoTellsTheSeedsStoryOverHttp() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream original = System.out;
        int exit;
        try (PrintStream capture = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            System.setOut(capture);
            exit = new CommandLine(new Main()).execute("demo", "--dir", dir.toString());
        } finally {
            System.setOut(original);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        System.out.println(out);
        assertEquals(0, exit);
        assertTrue(out.contains("no response: the warehouse committed, then the connection closed (the lost ACK)"), out);
        assertTrue(out.contains("  first  snack-7 / 7   no response  UNCERTAIN  1           7      yes"), out);
        assertTrue(out.contains("  again  snack-7 / 7   200          ACKED      1           7      no"), out);
        assertTrue(out.contains("  again  snack-7 / 8   409          REJECTED   1           7      -"), out);
        assertTrue(out.contains("  other  snack-8 / 7   200          ACKED      2           14     yes"), out);
        assertTrue(out.contains("4 requests reached the warehouse; 2 applied an effect."), out);
    }
    @Test
    void demoWithoutDirDeletesItsTemporaryDirectory() throws Exception {
        Path tmp = Files.createDirectory(dir.resolve("tmp"));
        List<String> jvmOptions = new ArrayList<>(ChildJvm.FAST_START);
        jvmOptions.add("-Djava.io.tmpdir=" + tmp);
        String files;
        try (ChildJvm demo = ChildJvm.start("demo", jvmOptions, Main.class.getName(), List.of("demo"))) {
            files = demo.awaitLine(line -> line.startsWith("  files "), Duration.ofSeconds(60));
            assertEquals(0, demo.awaitExit(Duration.ofSeconds(60)));
        }
        assertTrue(files.contains(tmp.toString()), files);
        try (Stream<Path> left = Files.list(tmp)) {
            List<String> names = left.map(path -> path.getFileName().toString()).toList();
            assertFalse(names.stream().anyMatch(name -> name.startsWith("inbox-demo")), "left behind: " + names);
        }
    }
}
