package dibs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 43: what a server says reaches a log or a terminal escaped. A server (or a proxy in front
 * of one) that answers every command with an error holding an ESC sequence, a newline and a bidi
 * override: the exception Java gets says so in escapes (backslash-e, backslash-n,
 * backslash-u{202e}), never raw, so that logging it cannot clear an operator's screen or forge a
 * log line. The server is a real socket of this test's; the error text is the fault.
 */
class ForeignTextTest {
    private static final String FOREIGN = "ERR \u001b[2Jgone\nFORGED LINE \u202eevil";

    @Test
    void aServersErrorTextReachesJavaEscaped() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            Thread answering = new Thread(() -> answerEveryCommandWithTheError(server), "foreign-server");
            answering.setDaemon(true);
            answering.start();
            String uri = "redis://127.0.0.1:" + server.getLocalPort();
            DibsException thrown = assertThrows(
                    DibsException.class,
                    () -> Dibs.execute(Map.of("uri", uri, "durable", "off"), "foreign-p1", 10, 0, () -> {}));
            String message = thrown.getMessage();
            assertTrue(message.contains("\\e[2Jgone\\nFORGED LINE \\u{202e}evil"), message);
            for (String raw : new String[] {"\u001b", "\n", "\u202e"}) {
                assertFalse(message.contains(raw), message);
            }
        }
    }

    /** Reads whatever comes, and answers each read with the error. */
    private static void answerEveryCommandWithTheError(ServerSocket server) {
        byte[] reply = ("-" + FOREIGN + "\r\n").getBytes(StandardCharsets.UTF_8);
        while (!server.isClosed()) {
            try (Socket client = server.accept()) {
                InputStream in = client.getInputStream();
                OutputStream out = client.getOutputStream();
                byte[] buf = new byte[4096];
                while (in.read(buf) > 0) {
                    out.write(reply);
                    out.flush();
                }
            } catch (IOException e) {
                return;
            }
        }
    }
}
