package dev.iggo.compat;

import java.util.Optional;
import org.junit.jupiter.api.extension.BeforeTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/** Prints one PASS or FAIL line per test, named by its display name, with its duration. */
public final class StepReporter implements BeforeTestExecutionCallback, TestWatcher {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(StepReporter.class);

    @Override
    public void beforeTestExecution(ExtensionContext context) {
        context.getStore(NS).put("start", System.nanoTime());
    }

    @Override
    public void testSuccessful(ExtensionContext context) {
        System.out.printf("PASS %s (%d ms)%n", context.getDisplayName(), elapsedMillis(context));
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        System.out.printf("FAIL %s (%d ms): %s%n", context.getDisplayName(), elapsedMillis(context), cause);
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
        System.out.printf("FAIL %s: aborted: %s%n", context.getDisplayName(), cause);
    }

    @Override
    public void testDisabled(ExtensionContext context, Optional<String> reason) {
        System.out.printf("FAIL %s: disabled%n", context.getDisplayName());
    }

    private static long elapsedMillis(ExtensionContext context) {
        Long start = context.getStore(NS).get("start", Long.class);
        return start == null ? -1 : (System.nanoTime() - start) / 1_000_000;
    }
}
