package peers

// Validation of jetrpc's OpenRPC documents (package handler/openrpc,
// jetrpc openrpc) with the OpenRPC project's own tools: Node.js runs
// testdata/openrpc/validate.mjs, which checks a document with
// @open-rpc/schema-utils-js (the meta-schema, dereferencing) and ajv (the
// schemas compile, and fit sample calls), with the npm packages pinned in
// testdata/openrpc/package.json.
//
// The documents are made by go run in the jetrpc module's root (the
// generator testdata/openrpc/gen/main.go, and cmd/jetrpc), so that this
// module does not depend on the schema library.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

const openrpcDir = "testdata/openrpc"

// openrpcSummary is the line validate.mjs prints.
type openrpcSummary struct {
	OK           bool   `json:"ok"`
	Node         string `json:"node"`
	SchemaUtils  string `json:"schemaUtils"`
	Ajv          string `json:"ajv"`
	Methods      int    `json:"methods"`
	Dereferenced bool   `json:"dereferenced"`
	Calls        int    `json:"calls"`
	Errors       []struct {
		What   string `json:"what"`
		Detail string `json:"detail"`
	} `json:"errors"`
}

// openrpcValidator returns the node binary, after making sure that
// node_modules holds the packages package.json pins (npm ci otherwise).
// It skips the test when node or npm is missing.
func openrpcValidator(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("SKIPPED: the OpenRPC validation needs node on PATH: %v", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("SKIPPED: the OpenRPC validation needs npm on PATH: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(openrpcDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	installed := func() (missing string) {
		for name, want := range pkg.Dependencies {
			if want == "" || strings.ContainsAny(want, "^~<>=* ") {
				t.Fatalf("package.json must pin %s to an exact version, has %q", name, want)
			}
			b, err := os.ReadFile(filepath.Join(openrpcDir, "node_modules", name, "package.json"))
			var got struct {
				Version string `json:"version"`
			}
			if err != nil || json.Unmarshal(b, &got) != nil || got.Version != want {
				return name + "@" + want
			}
		}
		return ""
	}
	if missing := installed(); missing != "" {
		t.Logf("%s/node_modules lacks %s: running npm ci", openrpcDir, missing)
		out, errOut, err := runTool(t, 3*time.Minute, openrpcDir, npm, "ci", "--no-audit", "--no-fund")
		if err != nil {
			t.Fatalf("npm ci: %v\n%s%s", err, out, errOut)
		}
		if missing := installed(); missing != "" {
			t.Fatalf("after npm ci, node_modules lacks %s", missing)
		}
	}
	return node
}

// validateOpenRPC runs validate.mjs on the document doc (a file), with
// the sample calls of calls ("" for none).
func validateOpenRPC(t *testing.T, node, doc, calls string) (openrpcSummary, error) {
	t.Helper()
	args := []string{"validate.mjs", doc}
	if calls != "" {
		args = append(args, calls)
	}
	out, errOut, err := runTool(t, time.Minute, openrpcDir, node, args...)
	var s openrpcSummary
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &s); jerr != nil {
		t.Fatalf("validate.mjs %s: %v (%v)\nstdout: %s\nstderr: %s", doc, err, jerr, out, errOut)
	}
	if s.OK != (err == nil) {
		t.Fatalf("validate.mjs %s: ok %v but exit %v", doc, s.OK, err)
	}
	return s, err
}

// goRun runs go run with args in the jetrpc module's root.
func goRun(t *testing.T, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	return runTool(t, 5*time.Minute, root, goTool, append([]string{"run"}, args...)...)
}

// TestOpenRPC_documents: the document rpc.discover answers for the
// methods of handler/demo, and one of methods with every shape of type
// (recursive, embedded, pointers, maps, arrays, time.Time, Raw, a
// subscription, declared errors), are valid OpenRPC 1.3 documents, and
// their schemas take the calls the methods take and refuse the others.
func TestOpenRPC_documents(t *testing.T) {
	node := openrpcValidator(t)
	dir := t.TempDir()
	if out, errOut, err := goRun(t, "./bench/peers/testdata/openrpc/gen/main.go", dir); err != nil {
		t.Fatalf("gen: %v\n%s%s", err, out, errOut)
	}
	for _, c := range []struct {
		name         string
		methods      int
		dereferenced bool // false: recursive components, which the dereferencer does not take
	}{
		{"demo", 14, true}, // the demo methods, range and countdown among them
		{"shapes", 8, false},
	} {
		doc, calls := filepath.Join(dir, c.name+".json"), c.name+".calls.json"
		s, err := validateOpenRPC(t, node, doc, calls)
		if err != nil {
			t.Errorf("%s: invalid: %+v", c.name, s.Errors)
			continue
		}
		if s.Methods != c.methods || s.Dereferenced != c.dereferenced || s.Calls == 0 {
			t.Errorf("%s: %+v", c.name, s)
		}
		t.Logf("%s: node %s, schema-utils-js %s, ajv %s: %d methods, %d calls", c.name, s.Node, s.SchemaUtils, s.Ajv, s.Methods, s.Calls)
	}

	// The same document, broken, fails: validation has teeth.
	text, err := os.ReadFile(filepath.Join(dir, "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, breakIt := range map[string]func(m map[string]any){
		"no params":       func(m map[string]any) { delete(m, "params") },
		"paramStructure":  func(m map[string]any) { m["paramStructure"] = "sideways" },
		"unknown member":  func(m map[string]any) { m["returns"] = "int" },
		"schema a string": func(m map[string]any) { m["result"].(map[string]any)["schema"] = "integer" },
	} {
		var doc map[string]any
		if err := json.Unmarshal(text, &doc); err != nil {
			t.Fatal(err)
		}
		breakIt(doc["methods"].([]any)[0].(map[string]any))
		b, _ := json.Marshal(doc)
		path := filepath.Join(dir, "broken.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if s, err := validateOpenRPC(t, node, path, ""); err == nil || len(s.Errors) == 0 || s.Errors[0].What != "meta-schema" {
			t.Errorf("demo with %s: %v %+v", name, err, s)
		}
	}
}

// TestOpenRPC_bundledServer: jetrpc openrpc prints a valid document,
// whose schemas take the calls the bundled server takes.
func TestOpenRPC_bundledServer(t *testing.T) {
	node := openrpcValidator(t)
	out, errOut, err := goRun(t, "./cmd/jetrpc", "openrpc")
	if err != nil {
		if bytes.Contains(errOut, []byte(`unknown command "openrpc"`)) {
			t.Skip("SKIPPED: this jetrpc has no openrpc command yet (cmd/jetrpc/openrpc.go's runOpenRPC is not wired into main.go)")
		}
		t.Fatalf("jetrpc openrpc: %v\n%s", err, errOut)
	}
	doc := filepath.Join(t.TempDir(), "jetrpc.json")
	if err := os.WriteFile(doc, out, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := validateOpenRPC(t, node, doc, "bundled.calls.json")
	if err != nil {
		t.Fatalf("invalid: %+v", s.Errors)
	}
	if s.Methods != 18 || !s.Dereferenced || s.Calls == 0 {
		t.Errorf("%+v", s)
	}
}

// TestOpenRPC_brokenDocumentsFail: each document of testdata/openrpc/broken
// breaks one rule, and validate.mjs says which.
func TestOpenRPC_brokenDocumentsFail(t *testing.T) {
	node := openrpcValidator(t)
	want := map[string]string{
		"missing-params.json":          "meta-schema",
		"param-structure.json":         "meta-schema",
		"schema-not-a-schema.json":     "meta-schema",
		"dangling-ref.json":            "unresolved $ref",
		"required-after-optional.json": "required param after an optional one",
		"duplicate-error-code.json":    "duplicate error code",
		"duplicate-method.json":        "duplicate method",
	}
	files, err := filepath.Glob(filepath.Join(openrpcDir, "broken", "*.json"))
	if err != nil || len(files) != len(want) {
		t.Fatalf("broken documents %v (%v), want %d", files, err, len(want))
	}
	for _, f := range files {
		name := filepath.Base(f)
		s, err := validateOpenRPC(t, node, filepath.Join("broken", name), "")
		if err == nil || len(s.Errors) == 0 || s.Errors[0].What != want[name] {
			t.Errorf("%s: %v %+v, want %q", name, err, s, want[name])
		}
	}
}
