import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.platform.console.ConsoleLauncher;

/**
 * Grading test runner for Java in ONE JVM: javac (the JDK's compiler, in process) over the
 * sources listed in a file, then the JUnit Platform console launcher on the compiled classes.
 * Two JVM start-ups (javac, then the launcher) were most of a small exercise's test time.
 *
 * Arguments: CLASSES_DIR SOURCES_FILE LIBRARY_CLASSPATH XML_DIR HIDDEN_DIR. Exits with javac's
 * code on a compile error, else with the launcher's (non-zero on a failed test or when none
 * ran). The libraries come first on the tests' class path: a compiled class never shadows one
 * of theirs.
 *
 * Between javac and the launcher (the first moment solution code runs) HIDDEN_DIR (the hidden
 * tests, src/test) is deleted. XML_DIR is a private directory the calling script copies into
 * the report directory after this JVM ended. The JVM ends with Runtime.halt once the launcher
 * returned: no shutdown hook (code under test may register one) runs after the XML exists.
 */
public final class PolyglotJavaTest {
    private PolyglotJavaTest() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: PolyglotJavaTest CLASSES_DIR SOURCES_FILE LIBRARY_CLASSPATH XML_DIR HIDDEN_DIR");
            System.exit(2);
        }
        String classes = args[0];
        String sources = args[1];
        String libraries = args[2];
        String reports = args[3];
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int compiled = javac.run(null, System.out, System.err,
                "-encoding", "UTF-8", "-nowarn", "-d", classes, "-cp", libraries, "@" + sources);
        System.out.flush();
        System.err.flush();
        if (compiled != 0) {
            System.exit(compiled);
        }
        Files.deleteIfExists(Path.of(sources));
        deleteTree(Path.of(args[4]));
        PrintWriter out = new PrintWriter(System.out);
        PrintWriter err = new PrintWriter(System.err);
        int code = ConsoleLauncher.run(out, err, "execute", "--class-path", libraries + classes,
                "--scan-class-path", classes, "--reports-dir", reports, "--fail-if-no-tests", "--disable-banner",
                "--details=tree", "--disable-ansi-colors").getExitCode();
        out.flush();
        err.flush();
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(code);
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
