package dev.iggo.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.iggy.client.async.tcp.AsyncIggyTcpClient;
import org.apache.iggy.client.async.tcp.AsyncIggyTcpClientBuilder;
import org.apache.iggy.client.blocking.tcp.IggyTcpClient;
import org.apache.iggy.client.blocking.tcp.IggyTcpClientBuilder;
import org.apache.iggy.exception.IggyServerException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.ThrowingSupplier;

/**
 * The Java SDK 0.8.0 frames requests in the pre-0.11 format ([length][code][payload], answers
 * [status][length][payload]); iggo server speaks protocol 0.11.0 (256-byte headers). These checks
 * pin what such a client must get from iggo: its first request (login, PAT login or ping, plain TCP
 * or TLS, blocking or async client) fails within {@link #FAST} with the server error 14003
 * (IncompatibleProtocolVersion) and a message telling the user to upgrade the SDK, instead of
 * waiting for the server's frame read timeout (30 s).
 *
 * <p>Environment (set by compat/java/run.sh): IGGO_ADDR (host:port of a plain server),
 * IGGO_TLS_ADDR (host:port of a TLS server) and IGGO_TLS_CA (PEM file of the CA that signed the TLS
 * server's certificate).
 */
@ExtendWith(StepReporter.class)
class LegacySdkTest {
    /** Bound on a refusal: far below the server's 30 s frame read timeout. */
    static final Duration FAST = Duration.ofSeconds(5);
    /**
     * Bound on calls that also shut the SDK's Netty event loop down (buildAndLogin closes the client
     * when login fails; a graceful shutdown waits a 2 s quiet period).
     */
    static final Duration WITH_CLOSE = Duration.ofSeconds(10);
    /** Bound on closing a client, which is not part of any check. */
    static final Duration CLOSE = Duration.ofSeconds(20);
    /** IggyError IncompatibleProtocolVersion (../shared/protocol/errors.md). */
    static final int INCOMPATIBLE_PROTOCOL_VERSION = 14003;

    static final String USER = "iggy";
    static final String PASSWORD = "iggy";

    private static String env(String name) {
        String v = System.getenv(name);
        assertNotNull(v, name + " is not set (run through compat/java/run.sh)");
        return v;
    }

    private static String host(String addr) {
        return addr.substring(0, addr.lastIndexOf(':'));
    }

    private static int port(String addr) {
        return Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
    }

    private static IggyTcpClientBuilder blocking(String addr) {
        return IggyTcpClient.builder().host(host(addr)).port(port(addr)).connectionTimeout(FAST).requestTimeout(FAST);
    }

    private static AsyncIggyTcpClientBuilder async(String addr) {
        return AsyncIggyTcpClient.builder().host(host(addr)).port(port(addr)).connectionTimeout(FAST).requestTimeout(FAST);
    }

    /**
     * Runs call, which must fail within bound with an IggyServerException of code 14003 somewhere in
     * its cause chain whose message asks to upgrade the SDK; returns that exception.
     */
    private static IggyServerException expectRefused(Duration bound, ThrowingSupplier<?> call) {
        long start = System.nanoTime();
        Throwable thrown = failure(bound, call);
        long millis = (System.nanoTime() - start) / 1_000_000;
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t instanceof IggyServerException e) {
                assertEquals(INCOMPATIBLE_PROTOCOL_VERSION, e.getRawErrorCode(), "server error code; message: " + e.getMessage());
                assertTrue(e.getMessage().contains("upgrade the SDK"), "message names the fix: " + e.getMessage());
                System.out.printf("  after %d ms the SDK raised %s: %s%n", millis, e.getClass().getSimpleName(), e.getMessage());
                return e;
            }
        }
        return fail("want IggyServerException " + INCOMPATIBLE_PROTOCOL_VERSION + ", got " + thrown, thrown);
    }

    /** Runs call, which must throw within bound; returns what it threw. */
    private static Throwable failure(Duration bound, ThrowingSupplier<?> call) {
        return assertTimeoutPreemptively(bound, () -> {
            try {
                Object result = call.get();
                return fail("the call succeeded with " + result + ", want an error");
            } catch (Throwable t) {
                return t;
            }
        }, "no answer within " + bound + " (a hang: the server did not refuse the legacy client)");
    }

    private static void close(IggyTcpClient c) {
        assertTimeoutPreemptively(CLOSE, c::close, "closing the blocking client");
    }

    private static void close(AsyncIggyTcpClient c) {
        assertTimeoutPreemptively(CLOSE, () -> c.close().get(CLOSE.toMillis(), TimeUnit.MILLISECONDS), "closing the async client");
    }

    private static <T> T await(java.util.concurrent.CompletableFuture<T> f) throws Exception {
        return f.get(FAST.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    @DisplayName("blocking client: password login gets 14003 at once")
    void blockingPasswordLogin() {
        IggyTcpClient c = blocking(env("IGGO_ADDR")).build();
        try {
            c.connect();
            expectRefused(FAST, () -> c.users().login(USER, PASSWORD));
        } finally {
            close(c);
        }
    }

    @Test
    @DisplayName("blocking client: buildAndLogin fails with 14003 (after the SDK closes itself)")
    void blockingBuildAndLogin() {
        expectRefused(WITH_CLOSE, () -> {
            IggyTcpClient c = blocking(env("IGGO_ADDR")).credentials(USER, PASSWORD).buildAndLogin();
            close(c);
            return c;
        });
    }

    @Test
    @DisplayName("blocking client: login with a personal access token gets 14003 at once")
    void blockingPatLogin() {
        IggyTcpClient c = blocking(env("IGGO_ADDR")).build();
        try {
            c.connect();
            expectRefused(FAST, () -> c.personalAccessTokens().loginWithPersonalAccessToken("some-token"));
        } finally {
            close(c);
        }
    }

    @Test
    @DisplayName("blocking client: ping before login gets 14003 at once")
    void blockingPing() {
        IggyTcpClient c = blocking(env("IGGO_ADDR")).build();
        try {
            c.connect();
            expectRefused(FAST, () -> c.system().ping());
        } finally {
            close(c);
        }
    }

    @Test
    @DisplayName("async client: password login gets 14003 at once")
    void asyncPasswordLogin() throws Exception {
        AsyncIggyTcpClient c = async(env("IGGO_ADDR")).build();
        try {
            await(c.connect());
            expectRefused(FAST, () -> await(c.users().login(USER, PASSWORD)));
        } finally {
            close(c);
        }
    }

    @Test
    @DisplayName("async client: buildAndLogin fails with 14003 (after the SDK closes itself)")
    void asyncBuildAndLogin() {
        expectRefused(WITH_CLOSE, () -> {
            AsyncIggyTcpClient c = async(env("IGGO_ADDR")).credentials(USER, PASSWORD).buildAndLogin()
                    .get(WITH_CLOSE.toMillis(), TimeUnit.MILLISECONDS);
            close(c);
            return c;
        });
    }

    @Test
    @DisplayName("async client: login with a personal access token gets 14003 at once")
    void asyncPatLogin() throws Exception {
        AsyncIggyTcpClient c = async(env("IGGO_ADDR")).build();
        try {
            await(c.connect());
            expectRefused(FAST, () -> await(c.personalAccessTokens().loginWithPersonalAccessToken("some-token")));
        } finally {
            close(c);
        }
    }

    @Test
    @DisplayName("TLS, blocking client verifying the server certificate: login gets 14003 at once")
    void tlsBlockingLogin() {
        File ca = new File(env("IGGO_TLS_CA"));
        IggyTcpClient c = blocking(env("IGGO_TLS_ADDR")).enableTls().tlsCertificate(ca).build();
        try {
            c.connect();
            expectRefused(FAST, () -> c.users().login(USER, PASSWORD));
        } finally {
            close(c);
        }
    }

    @Test
    @DisplayName("TLS, async client verifying the server certificate: login gets 14003 at once")
    void tlsAsyncLogin() throws Exception {
        File ca = new File(env("IGGO_TLS_CA"));
        AsyncIggyTcpClient c = async(env("IGGO_TLS_ADDR")).enableTls().tlsCertificate(ca).build();
        try {
            await(c.connect());
            expectRefused(FAST, () -> await(c.users().login(USER, PASSWORD)));
        } finally {
            close(c);
        }
    }

    @Test
    @DisplayName("TLS without the CA: the SDK rejects the server certificate (no 14003)")
    void tlsUntrustedCertificate() {
        IggyTcpClient c = blocking(env("IGGO_TLS_ADDR")).enableTls().build();
        try {
            c.connect();
            Throwable thrown = failure(FAST, () -> c.users().login(USER, PASSWORD));
            boolean certificateError = false;
            for (Throwable t = thrown; t != null; t = t.getCause()) {
                assertFalse(t instanceof IggyServerException, "reached the server without verifying its certificate: " + t);
                certificateError |= t instanceof javax.net.ssl.SSLException
                        || String.valueOf(t.getMessage()).toLowerCase().contains("certif");
            }
            assertTrue(certificateError, "want a certificate error, got " + thrown);
            System.out.println("  the SDK raised " + thrown);
        } finally {
            close(c);
        }
    }
}
