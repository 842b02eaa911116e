import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.platform.console.ConsoleLauncher;

/**
 * Grading test runner for Java in ONE JVM: javac (the JDK's compiler, in process) twice, then
 * the JUnit Platform console launcher. Two JVM start-ups were most of a small exercise's time.
 *
 * Arguments: WORK_DIR LIBRARY_CLASSPATH XML_DIR HIDDEN_DIR. WORK_DIR holds main-sources.txt and
 * test-sources.txt (the files to compile), main/ (the solution's resources, copied there by the
 * calling script) and test-resources/. LIBRARY_CLASSPATH ends with the path separator.
 *
 * The solution builds and loads without the tests (issue 31):
 * 1. The solution alone is compiled into WORK_DIR/main, with the libraries on the class path and
 *    nothing of the tests reachable. When that fails, its diagnostics go to XML_DIR/solo_build.log
 *    and the build is tried WITH the tests (into a scratch directory, never run); when that one
 *    passes, XML_DIR/solution_needs_tests is written. Exit 1: no class is ever loaded.
 * 2. The tests are compiled against the solution's classes (not recompiled with them).
 * 3. The compiled test classes are read into memory and their files deleted, with HIDDEN_DIR
 *    (src/test) and the sources lists; then every test class is defined at once from memory
 *    (no class file of a test is a resource there: GradingLoader), and the bytes
 *    are dropped. Only then does the launcher run, the first moment solution code runs.
 * javac runs with -proc:none (an annotation processor on the class path would be solution code
 * running inside the test build) and an empty source path (no source is found implicitly).
 *
 * XML_DIR is a private directory the calling script copies into the report directory after this
 * JVM ended. The JVM ends with Runtime.halt once the launcher returned: no shutdown hook (code
 * under test may register one) runs after the XML exists.
 */
public final class PolyglotJavaTest {
    /** The console launcher's default class-name filter when it scans (what used to select tests). */
    private static final Pattern TEST_CLASS_NAME = Pattern.compile("^(Test.*|.+[.$]Test.*|.*Tests?)$");

    private PolyglotJavaTest() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: PolyglotJavaTest WORK_DIR LIBRARY_CLASSPATH XML_DIR HIDDEN_DIR");
            System.exit(2);
        }
        Path work = Path.of(args[0]);
        String libraries = args[1];
        Path reports = Path.of(args[2]);
        Path main = work.resolve("main");
        Path tests = work.resolve("test");
        Path noSources = Files.createDirectories(work.resolve("no-sources"));
        if (compile(main, libraries, noSources, work.resolve("main-sources.txt")) != 0) {
            soloBuildFailed(work, libraries, noSources, reports);
        }
        int compiled = compile(tests, libraries + main, noSources, work.resolve("test-sources.txt"));
        if (compiled != 0) {
            System.exit(compiled);
        }
        TreeSet<String> shared = new TreeSet<>(classNames(tests).keySet());
        shared.retainAll(classNames(main).keySet());
        if (!shared.isEmpty()) {
            System.err.println("error: the solution defines classes of the hidden tests: " + shared);
            System.exit(1);
        }
        Map<String, byte[]> testClasses = readClasses(tests);
        deleteTree(tests);
        deleteTree(noSources);
        Files.deleteIfExists(work.resolve("main-sources.txt"));
        Files.deleteIfExists(work.resolve("test-sources.txt"));
        deleteTree(Path.of(args[3]));
        List<String> selected = selection(testClasses.keySet(), classNames(main).keySet());
        ClassLoader libraryLoader = new URLClassLoader(urls(libraries), ClassLoader.getSystemClassLoader());
        GradingLoader loader = new GradingLoader(testClasses, main, work.resolve("test-resources"), libraryLoader);
        loader.defineAll();
        Thread.currentThread().setContextClassLoader(loader);
        Runtime.getRuntime().halt(launch(reports, selected));
    }

    /** javac over the sources listed in SOURCES into OUTPUT; its diagnostics echoed to stderr. */
    private static int compile(Path output, String classpath, Path noSources, Path sources) throws IOException {
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int code = javac(output, classpath, noSources, sources, diagnostics);
        System.err.print(diagnostics.toString(StandardCharsets.UTF_8));
        System.err.flush();
        if (code != 0) {
            Files.writeString(output.resolveSibling(output.getFileName() + ".log"),
                    diagnostics.toString(StandardCharsets.UTF_8));
        }
        return code;
    }

    private static int javac(Path output, String classpath, Path noSources, Path sources, ByteArrayOutputStream into)
            throws IOException {
        Files.createDirectories(output);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        try (PrintStream stream = new PrintStream(into, true, StandardCharsets.UTF_8)) {
            return javac.run(null, stream, stream, "-encoding", "UTF-8", "-nowarn", "-proc:none",
                    "-implicit:none", "-sourcepath", noSources.toString(), "-d", output.toString(),
                    "-cp", classpath, "@" + sources);
        }
    }

    /**
     * The solution does not build alone: its log is the report; the build with the tests
     * (main and test sources in one javac, as before the solo build) says whether it needed them.
     * Nothing is loaded, nothing runs.
     */
    private static void soloBuildFailed(Path work, String libraries, Path noSources, Path reports)
            throws IOException {
        Files.copy(work.resolve("main.log"), reports.resolve("solo_build.log"));
        Path both = work.resolve("all-sources.txt");
        Files.writeString(both, Files.readString(work.resolve("main-sources.txt"))
                + Files.readString(work.resolve("test-sources.txt")));
        int withTests = javac(work.resolve("with-tests"), libraries, noSources, both, new ByteArrayOutputStream());
        if (withTests == 0) {
            System.err.println("the solution compiles only together with the hidden tests");
            Files.createFile(reports.resolve("solution_needs_tests"));
        }
        System.exit(1);
    }

    /** Binary class name -> class file, for every class file under ROOT. */
    private static Map<String, Path> classNames(Path root) throws IOException {
        Map<String, Path> names = new TreeMap<>();
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.filter(p -> p.toString().endsWith(".class")).toList()) {
                String relative = root.relativize(path).toString();
                names.put(relative.substring(0, relative.length() - ".class".length()).replace('/', '.'), path);
            }
        }
        return names;
    }

    private static Map<String, byte[]> readClasses(Path root) throws IOException {
        Map<String, byte[]> classes = new TreeMap<>();
        for (Map.Entry<String, Path> entry : classNames(root).entrySet()) {
            classes.put(entry.getKey(), Files.readAllBytes(entry.getValue()));
        }
        return classes;
    }

    /** What scanning both class directories with the launcher's default filter selected. */
    private static List<String> selection(Iterable<String> testClasses, Iterable<String> mainClasses) {
        List<String> selected = new ArrayList<>();
        for (Iterable<String> names : List.of(testClasses, mainClasses)) {
            for (String name : names) {
                if (TEST_CLASS_NAME.matcher(name).matches()) {
                    selected.add(name);
                }
            }
        }
        return selected;
    }

    private static int launch(Path reports, List<String> selected) {
        List<String> arguments = new ArrayList<>(List.of("execute", "--reports-dir", reports.toString(),
                "--fail-if-no-tests", "--disable-banner", "--details=tree", "--disable-ansi-colors"));
        for (String name : selected) {
            arguments.add("--select-class");
            arguments.add(name);
        }
        if (selected.isEmpty()) {
            System.err.println("no test class");
            return 2;
        }
        PrintWriter out = new PrintWriter(System.out);
        PrintWriter err = new PrintWriter(System.err);
        int code = ConsoleLauncher.run(out, err, arguments.toArray(String[]::new)).getExitCode();
        out.flush();
        err.flush();
        System.out.flush();
        System.err.flush();
        return code;
    }

    private static URL[] urls(String classpath) throws IOException {
        List<URL> urls = new ArrayList<>();
        for (String entry : classpath.split(java.io.File.pathSeparator)) {
            if (!entry.isEmpty()) {
                urls.add(Path.of(entry).toUri().toURL());
            }
        }
        return urls.toArray(URL[]::new);
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

    /**
     * The solution's classes (from their directory) and the hidden test classes (from memory) in
     * ONE loader: the tests reach package-private members of the solution, which Java allows
     * only within one runtime package (one package name AND one defining loader), so a test
     * loader below the solution's would fail every stub-shaped exercise (IllegalAccessError).
     * What the solution cannot get is a test's bytes: no class file of a test is a resource here
     * (the resources are the solution's directory and the tests' own resources directory), their
     * files are deleted before this loader exists, and the bytes are dropped once every test
     * class is defined. The libraries come first (parent-first delegation).
     */
    static final class GradingLoader extends URLClassLoader {
        private Map<String, byte[]> testClasses;

        GradingLoader(Map<String, byte[]> testClasses, Path solution, Path testResources, ClassLoader libraries)
                throws IOException {
            super(new URL[] {solution.toUri().toURL(), testResources.toUri().toURL()}, libraries);
            this.testClasses = new TreeMap<>(testClasses);
        }

        /** Defines every test class now (nothing is initialised, so no code runs), then forgets the bytes. */
        void defineAll() throws ClassNotFoundException {
            for (String name : List.copyOf(testClasses.keySet())) {
                loadClass(name);
            }
            testClasses = Map.of();
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            byte[] bytes = testClasses.get(name);
            if (bytes == null) {
                return super.findClass(name);
            }
            return defineClass(name, bytes, 0, bytes.length);
        }
    }
}
