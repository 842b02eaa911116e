import java.nio.file.Files;
import java.nio.file.Path;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.platform.console.ConsoleLauncher;

/**
 * Grading test runner for Java in ONE JVM: javac (the JDK's compiler, in process) over the
 * sources listed in a file, then the JUnit Platform console launcher on the compiled classes.
 * Two JVM start-ups (javac, then the launcher) were most of a small exercise's test time.
 *
 * Arguments: CLASSES_DIR SOURCES_FILE LIBRARY_CLASSPATH REPORT_DIR. Exits with javac's code on
 * a compile error, else with the launcher's (non-zero on a failed test or when none ran). The
 * libraries come first on the tests' class path: a compiled class never shadows one of theirs.
 */
public final class PolyglotJavaTest {
    private PolyglotJavaTest() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: PolyglotJavaTest CLASSES_DIR SOURCES_FILE LIBRARY_CLASSPATH REPORT_DIR");
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
        ConsoleLauncher.main("execute", "--class-path", libraries + classes, "--scan-class-path", classes,
                "--reports-dir", reports, "--fail-if-no-tests", "--disable-banner", "--details=tree",
                "--disable-ansi-colors");
    }
}
