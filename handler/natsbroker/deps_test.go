package natsbroker_test

// NOTE: the module's import graph, checked from the source: every
// non-test .go file of the module (all build tags and systems, not only
// this one's), parsed for its imports with go/parser. It lives here,
// beside TestDeps_engineAndHandlerDoNotLinkNATS, so that one grep for
// TestDeps_ finds every check on what links what.

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/jetrpc/jetrpc"

// mayImport lists, for each top-level folder of the module, the folders
// whose packages its packages may import. Data moves down parser ->
// handler -> engine, with pool beside parser (see the design notes);
// bench, a client, stands on parser and pool only, and is imported by
// cmd alone; cmd sits on top. A folder without a row holds no package.
var mayImport = map[string][]string{
	"parser":  {"parser"},
	"pool":    {"pool"},
	"handler": {"handler", "parser", "pool"},
	"engine":  {"engine", "handler", "parser", "pool"},
	"bench":   {"bench", "parser", "pool"},
	"cmd":     {"cmd", "bench", "engine", "handler", "parser", "pool"},
}

// topFolder is the top-level folder of a package of the module ("" for
// the module's root).
func topFolder(pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	top, _, _ := strings.Cut(rel, "/")
	return top
}

// upwardImports returns the imports of graph (package -> the module's
// packages it imports) that mayImport does not allow, as "from -> to"
// lines, sorted.
func upwardImports(graph map[string][]string) []string {
	var bad []string
	for from, imports := range graph {
		allowed, ok := mayImport[topFolder(from)]
		if !ok {
			bad = append(bad, from+": its top-level folder has no row in mayImport")
			continue
		}
		for _, to := range imports {
			if !slices.Contains(allowed, topFolder(to)) {
				bad = append(bad, from+" -> "+to)
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// moduleRoot returns the folder of the module's go.mod, found upward
// from the test's working folder.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module "+module+"\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the working folder", module)
		}
		dir = parent
	}
}

// moduleImports parses every non-test .go file under root, outside
// testdata, hidden folders and nested modules (bench/peers), and
// returns each package's imports of the module's packages.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); p != root && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		pkg := path.Join(module, filepath.ToSlash(rel))
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if (imp == module || strings.HasPrefix(imp, module+"/")) && !slices.Contains(graph[pkg], imp) {
				graph[pkg] = append(graph[pkg], imp)
			}
		}
		if _, ok := graph[pkg]; !ok {
			graph[pkg] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

// TestDeps_importsRunDown: no package of the module imports one above
// it or beside it (mayImport): handler, parser and pool import nothing
// under engine, bench or cmd; parser and pool import no handler; bench
// imports neither engine nor handler. Test files may import upward (a
// handler test may run through the engine); they are not checked.
func TestDeps_importsRunDown(t *testing.T) {
	graph := moduleImports(t, moduleRoot(t))
	seen := map[string]bool{}
	for pkg := range graph {
		seen[topFolder(pkg)] = true
	}
	for top := range mayImport {
		if !seen[top] {
			t.Errorf("no package found under %s/: is the walk looking at the module?", top)
		}
	}
	for _, e := range upwardImports(graph) {
		t.Errorf("import runs up or sideways: %s", e)
	}
}

// TestDeps_upwardImportsCaught: the check finds the imports that ran up
// before the wire helpers, the glue and the JSON quoting moved down
// (issue 23), and lets their replacements through.
func TestDeps_upwardImportsCaught(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	before := map[string][]string{
		m("handler"):      {m("engine/http1"), m("parser"), m("pool")},
		m("bench"):        {m("engine/fdlimit"), m("engine/gnetlog"), m("engine/http1"), m("handler"), m("parser")},
		m("parser/http1"): nil,
		m("pool"):         {m("handler")},
		module:            nil,
	}
	want := []string{
		m("bench") + " -> " + m("engine/fdlimit"),
		m("bench") + " -> " + m("engine/gnetlog"),
		m("bench") + " -> " + m("engine/http1"),
		m("bench") + " -> " + m("handler"),
		m("handler") + " -> " + m("engine/http1"),
		m("pool") + " -> " + m("handler"),
		module + ": its top-level folder has no row in mayImport",
	}
	if got := upwardImports(before); !slices.Equal(got, want) {
		t.Errorf("upwardImports(before)\ngot  %q\nwant %q", got, want)
	}
	after := map[string][]string{
		m("handler"): {m("parser/http1"), m("parser"), m("pool")},
		m("bench"):   {m("pool/fdlimit"), m("pool/gnetlog"), m("parser/http1"), m("parser")},
		m("engine"):  {m("pool/gnetlog"), m("parser/http1"), m("handler")},
		m("cmd/x"):   {m("bench"), m("engine")},
	}
	if got := upwardImports(after); len(got) != 0 {
		t.Errorf("upwardImports(after) = %q, want none", got)
	}
}

// handlerLeaves are the packages under handler/ that package handler
// imports: they may import nothing of handler/ but each other's internal
// helpers, or the import would run in a circle or up.
var handlerLeaves = []string{"handler/stats", "handler/httprules", "handler/ratelimit", "handler/internal/compact", "handler/internal/jsonfields"}

// TestDeps_handlerLeavesImportNoHandler: the leaves handler imports (the
// counters' snapshot types, the HTTP rules, the module-internal helpers)
// stand on parser and pool alone, and handler imports none of the
// packages built on it (topics, auth, openrpc, natsbroker, demo).
func TestDeps_handlerLeavesImportNoHandler(t *testing.T) {
	graph := moduleImports(t, moduleRoot(t))
	for _, leaf := range handlerLeaves {
		imports, ok := graph[module+"/"+leaf]
		if !ok {
			t.Errorf("%s: no such package", leaf)
			continue
		}
		for _, to := range imports {
			if topFolder(to) == "handler" && !strings.Contains(to, "/handler/internal/") {
				t.Errorf("%s imports %s", leaf, to)
			}
		}
	}
	for _, to := range graph[module+"/handler"] {
		if topFolder(to) == "handler" && !slices.Contains(handlerLeaves, strings.TrimPrefix(to, module+"/")) {
			t.Errorf("handler imports %s, which is not one of its leaves", to)
		}
	}
}

// TestDeps_engineAndHandlerDoNotLinkOpenTelemetry: importers of engine,
// handler, pool and parser do not link OpenTelemetry (issue 25): only
// handler/otel (and cmd/jetrpc, through it) does.
func TestDeps_engineAndHandlerDoNotLinkOpenTelemetry(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies")
	}
	out, err := exec.Command(goTool, "list", "-deps", module+"/engine", module+"/handler", module+"/pool", module+"/parser").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, l := range strings.Fields(string(out)) {
		if strings.HasPrefix(l, "go.opentelemetry.io/") || strings.HasSuffix(l, "/handler/otel") {
			t.Errorf("engine, handler, pool or parser links %s", l)
		}
	}
	out, err = exec.Command(goTool, "list", "-deps", module+"/handler/otel").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "go.opentelemetry.io/otel/trace\n") {
		t.Errorf("handler/otel should link go.opentelemetry.io/otel/trace:\n%s", out)
	}
}
