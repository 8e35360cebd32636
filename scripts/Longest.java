import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MethodTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Where the weight of the Java code is: the longest main source files (lines) and the longest
 * methods (lines from the method's first line, annotations and comment excluded, to its closing
 * brace), parsed with the JDK's own compiler API (no type checking). Generated sources under
 * {@code target/} are not counted.
 *
 * <p>Run by {@code scripts/longest.sh [N]} (default N = 10); docs/architecture.md, "Where the
 * weight is", quotes its output.
 */
public final class Longest {
  record Entry(String where, long lines) {}

  public static void main(String[] args) throws IOException {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    Path root = Path.of(args.length > 1 ? args[1] : ".").toAbsolutePath().normalize();
    List<Path> sources;
    try (Stream<Path> s = Files.walk(root)) {
      sources = s.filter(p -> p.toString().endsWith(".java"))
          .filter(p -> p.toString().contains("/src/main/java/"))
          .filter(p -> !p.toString().contains("/target/"))
          .sorted()
          .toList();
    }
    List<Entry> files = new ArrayList<>();
    List<Entry> methods = new ArrayList<>();
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    try (StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null)) {
      JavacTask task = (JavacTask) javac.getTask(null, fm, d -> { }, List.of("-proc:none"), null,
          fm.getJavaFileObjectsFromPaths(sources));
      Trees trees = Trees.instance(task);
      SourcePositions pos = trees.getSourcePositions();
      for (CompilationUnitTree unit : task.parse()) {
        String file = root.relativize(Path.of(unit.getSourceFile().toUri())).toString();
        LineMap lines = unit.getLineMap();
        files.add(new Entry(file, Files.readAllLines(Path.of(unit.getSourceFile().toUri())).size()));
        new TreePathScanner<Void, String>() {
          @Override
          public Void visitClass(ClassTree c, String outer) {
            return super.visitClass(c, outer == null ? c.getSimpleName().toString() : outer + "." + c.getSimpleName());
          }

          @Override
          public Void visitMethod(MethodTree m, String cls) {
            long end = pos.getEndPosition(unit, m);
            if (m.getBody() != null && end > 0) {
              long start = m.getModifiers().getAnnotations().isEmpty()
                  ? pos.getStartPosition(unit, m)
                  : pos.getEndPosition(unit, m.getModifiers());
              long first = lines.getLineNumber(Math.max(start, pos.getStartPosition(unit, m)));
              long last = lines.getLineNumber(end);
              String name = m.getName().contentEquals("<init>") ? "<init>" : m.getName().toString();
              methods.add(new Entry(file + ":" + first + " " + cls + "." + name, last - first + 1));
            }
            return super.visitMethod(m, cls);
          }
        }.scan(unit, null);
      }
    }
    print("longest files (lines)", files, n);
    print("longest methods (lines)", methods, n);
  }

  static void print(String title, List<Entry> entries, int n) {
    System.out.println(title + ":");
    entries.stream().sorted(Comparator.comparingLong(Entry::lines).reversed()).limit(n)
        .forEach(e -> System.out.printf("  %5d  %s%n", e.lines(), e.where()));
  }
}
