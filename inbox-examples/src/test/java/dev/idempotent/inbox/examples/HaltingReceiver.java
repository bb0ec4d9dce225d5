package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.examples.crash.CrashReceiver;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * The HTTP warehouse in a JVM of its own that halts itself ({@link Runtime#halt}, no shutdown
 * hooks, status {@link CrashReceiver#HALT_STATUS}) when one shipment reaches one {@link Phase}:
 * the receiver crash of the model's counterexamples, at exactly the step they name.
 *
 * <p>Arguments: {@code DB PHASE ID}. Prints {@code READY <uri>} once it answers, {@code HALTING
 * <phase> <id>} just before the halt, and serves until its standard input ends.
 */
public final class HaltingReceiver {

    static final String READY = "READY";
    static final String HALTING = "HALTING";

    private HaltingReceiver() {}

    public static void main(String[] args) throws IOException {
        Path db = Path.of(args[0]);
        Phase haltAt = Phase.valueOf(args[1]);
        String haltId = args[2];
        PrintStream out = System.out;
        InboxListener halting = new InboxListener() {
            @Override
            public void onPhase(String inbox, String id, Phase phase) {
                if (phase == haltAt && id.equals(haltId)) {
                    out.println(HALTING + " " + phase + " " + id);
                    out.flush();
                    Runtime.getRuntime().halt(CrashReceiver.HALT_STATUS);
                }
            }
        };
        try (Warehouse warehouse = Warehouse.open(db, builder -> builder.listener(halting));
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback())) {
            out.println(READY + " " + server.uri());
            out.flush();
            // Serves until the parent closes standard input (or the halt ends the JVM first).
            while (System.in.read() != -1) {
                // Nothing is read from the parent; its end of input is the signal to stop.
            }
        }
    }
}
