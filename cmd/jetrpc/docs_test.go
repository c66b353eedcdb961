package main

// NOTE: these tests hold the docs to the code. The docs are the
// markdown files of docFiles; a doc is read into its fenced code blocks
// (each with the heading it sits under) and its prose, and a shell block
// is split into pipelines by shellPipelines, a small reader of the shell
// the docs write (quotes, $(...), line continuations, pipes, &&, ;, &,
// redirections, comments). The checks:
//
//   - TestDocs_commandsParse: every jetrpc command of a shell block (go
//     run ./cmd/jetrpc SUB ... or jetrpc SUB ..., and "$ jetrpc ..." lines
//     of output blocks) parses with SUB's own flag set, its arguments in
//     their place; TestDocs_proseFlagsExist: every flag the prose names in
//     code (`--max-pending`, `jetrpc serve --loops 1`) is one.
//   - TestDocs_linksResolve: every relative link names a file that exists
//     from its doc's folder, every #anchor a heading of its file, and every
//     repository path in code (`bench/scripts/fanout.sh`, ./cmd/jetrpc)
//     exists.
//   - TestDocs_testCommandIsCIs: the README's test command is one that
//     .ci/run runs, word for word.
//   - TestDocs_quickStartRuns (docs_quickstart_test.go): blocks of the
//     docs run for real against jetrpc serve in-process, their outputs
//     compared with the ones the doc prints.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/jetrpc/jetrpc/bench"
)

// repoRoot is the repository root, found from this package's folder
// before any test changes the working directory.
var repoRoot = func() string {
	p, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return p
}()

// docFiles are the docs checked, relative to the repository root.
var docFiles = []string{"README.md", "cmd/jetrpc/README.md", "bench/README.md", "bench/RESULTS.md"}

// codeBlock is a fenced code block of a doc.
type codeBlock struct {
	lang    string // the fence's info string: "sh", "go", "" ...
	line    int    // the line of its first content line, 1-based
	text    string
	heading string // the text of the last heading above it
}

// mdDoc is a markdown doc split into code blocks and prose.
type mdDoc struct {
	path     string // relative to the repository root
	blocks   []codeBlock
	prose    []string        // its lines with those of code blocks blanked, so that line numbers hold
	anchors  map[string]bool // GitHub's anchors of its headings
	headings []string
}

// loadDoc reads the doc at rel (relative to the repository root).
func loadDoc(t *testing.T, rel string) *mdDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	d := &mdDoc{path: rel, anchors: map[string]bool{}}
	lines := strings.Split(string(b), "\n")
	heading := ""
	var cur *codeBlock
	var text []string
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			if cur == nil {
				cur = &codeBlock{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), line: i + 2, heading: heading}
				text = text[:0]
			} else {
				cur.text = strings.Join(text, "\n")
				d.blocks = append(d.blocks, *cur)
				cur = nil
			}
			d.prose = append(d.prose, "")
			continue
		}
		if cur != nil {
			text = append(text, l)
			d.prose = append(d.prose, "")
			continue
		}
		d.prose = append(d.prose, l)
		if h, ok := strings.CutPrefix(l, "#"); ok && (strings.HasPrefix(h, " ") || strings.HasPrefix(h, "#")) {
			heading = strings.TrimSpace(strings.TrimLeft(h, "#"))
			d.headings = append(d.headings, heading)
		}
	}
	if cur != nil {
		t.Fatalf("%s: a code block from line %d is not closed", rel, cur.line-1)
	}
	seen := map[string]int{}
	for _, h := range d.headings {
		a := anchorOf(h)
		if n := seen[a]; n > 0 {
			d.anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			d.anchors[a] = true
		}
		seen[a]++
	}
	return d
}

// anchorOf is GitHub's anchor of a heading: lower case, letters,
// digits, "-" and "_" kept, spaces turned into "-", the rest dropped.
func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// shellStage is one command of a pipeline.
type shellStage struct {
	words  []string // quotes removed; $(...) and $VAR kept as written
	stdout string   // the file of a > or >> redirection, or ""
}

// shellPipeline is one pipeline of a shell block.
type shellPipeline struct {
	line       int // the line of its first word in its block, 1-based
	stages     []shellStage
	background bool   // ended by &
	comment    string // the comment that ends its line, without "#"
}

// shellComment is a comment on a line of its own.
type shellComment struct {
	line int
	text string // without "#" and one space
}

// shellPipelines reads the shell source src into pipelines and the
// comments on lines of their own. Lines that are a WebSocket client's
// session ("> sent", "< received") are not shell: the caller drops them.
func shellPipelines(src string) ([]shellPipeline, []shellComment, error) {
	var (
		pipes    []shellPipeline
		comments []shellComment
		cur      shellPipeline
		stage    shellStage
		word     strings.Builder
		inWord   bool
		redirect bool // the next word is the target of a stdout redirection
		drop     bool // the next word is another redirection's target, dropped
		line     = 1
	)
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		switch {
		case redirect:
			stage.stdout, redirect = w, false
		case drop:
			drop = false
		default:
			if len(cur.stages) == 0 && len(stage.words) == 0 {
				cur.line = line
			}
			stage.words = append(stage.words, w)
		}
	}
	endStage := func() {
		endWord()
		if len(stage.words) > 0 {
			cur.stages = append(cur.stages, stage)
		}
		stage = shellStage{}
	}
	endPipeline := func() {
		endStage()
		if len(cur.stages) > 0 {
			pipes = append(pipes, cur)
		}
		cur = shellPipeline{}
	}
	// balanced reads $( ... ) from src[i:], src[i] being '(': its end.
	balanced := func(i int) (int, error) {
		depth := 0
		for j := i; j < len(src); j++ {
			switch src[j] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return j, nil
				}
			case '\'':
				k := strings.IndexByte(src[j+1:], '\'')
				if k < 0 {
					return 0, fmt.Errorf("line %d: unclosed ' in $(", line)
				}
				j += k + 1
			}
		}
		return 0, fmt.Errorf("line %d: unclosed $(", line)
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			endWord()
			i++
			line++
		case c == '\\' && i+1 < len(src):
			word.WriteByte(src[i+1])
			inWord = true
			i++
		case c == '\n':
			endPipeline()
			line++
		case c == ' ' || c == '\t' || c == '(' || c == ')':
			endWord()
		case c == '#' && !inWord:
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			text := strings.TrimPrefix(src[i+1:i+end], " ")
			if len(cur.stages) == 0 && len(stage.words) == 0 {
				comments = append(comments, shellComment{line, text})
			} else {
				cur.comment = text
			}
			i += end - 1
		case c == '\'':
			end := strings.IndexByte(src[i+1:], '\'')
			if end < 0 {
				return nil, nil, fmt.Errorf("line %d: unclosed '", line)
			}
			s := src[i+1 : i+1+end]
			word.WriteString(s)
			line += strings.Count(s, "\n")
			inWord = true
			i += end + 1
		case c == '"':
			inWord = true
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				switch {
				case src[j] == '\\' && j+1 < len(src) && strings.IndexByte("\"\\$`", src[j+1]) >= 0:
					word.WriteByte(src[j+1])
					j++
				case src[j] == '$' && j+1 < len(src) && src[j+1] == '(':
					end, err := balanced(j + 1)
					if err != nil {
						return nil, nil, err
					}
					word.WriteString(src[j : end+1])
					j = end
				default:
					if src[j] == '\n' {
						line++
					}
					word.WriteByte(src[j])
				}
			}
			if j == len(src) {
				return nil, nil, fmt.Errorf("line %d: unclosed \"", line)
			}
			i = j
		case c == '$' && i+1 < len(src) && src[i+1] == '(':
			end, err := balanced(i + 1)
			if err != nil {
				return nil, nil, err
			}
			word.WriteString(src[i : end+1])
			inWord = true
			i = end
		case c == '|':
			if i+1 < len(src) && src[i+1] == '|' {
				endPipeline()
				i++
			} else {
				endStage()
			}
		case c == '&':
			if i+1 < len(src) && src[i+1] == '&' {
				endPipeline()
				i++
			} else {
				cur.background = true
				endPipeline()
			}
		case c == ';':
			endPipeline()
		case c == '>' || c == '<':
			fd := inWord && (word.String() == "1" || word.String() == "2")
			if fd {
				word.Reset()
				inWord = false
			}
			endWord()
			if i+1 < len(src) && src[i+1] == '>' {
				i++
			}
			if i+1 < len(src) && src[i+1] == '&' { // 2>&1
				i += 2
				continue
			}
			if c == '>' && !fd {
				redirect = true
			} else {
				drop = true // an input file, or stderr's
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endPipeline()
	return pipes, comments, nil
}

// sessionLine reports whether a line of a shell block is a WebSocket
// client's session: "> " a message sent, "< " one received.
func sessionLine(l string) bool { return strings.HasPrefix(l, "> ") || strings.HasPrefix(l, "< ") }

// shellSource is the shell source of a block: a sh block without its
// session lines, or the "$ " lines of an output block.
func shellSource(b codeBlock) string {
	var lines []string
	for _, l := range strings.Split(b.text, "\n") {
		switch {
		case b.lang == "sh" && sessionLine(l):
			lines = append(lines, "")
		case b.lang == "sh":
			lines = append(lines, l)
		case strings.HasPrefix(l, "$ "):
			lines = append(lines, strings.TrimPrefix(l, "$ "))
		default:
			lines = append(lines, "")
		}
	}
	return strings.Join(lines, "\n")
}

// jetrpcCall finds the jetrpc command of a stage: go run ./cmd/jetrpc SUB
// ARGS or jetrpc SUB ARGS, after prefixes such as taskset -c 0.
func jetrpcCall(words []string) (sub string, args []string, ok bool) {
	for i, w := range words {
		if (w == "jetrpc" || w == "./cmd/jetrpc" && i >= 2 && words[i-2] == "go" && words[i-1] == "run") && i+1 < len(words) {
			return words[i+1], words[i+2:], true
		}
	}
	return "", nil, false
}

// isTarget reports whether s is a jetrpc bench target.
func isTarget(s string) bool {
	for _, p := range []string{"http://", "https://", "ws://", "wss://", "tcp://", "unix://"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// checkCommand parses args as jetrpc sub would, without running it: the
// flags with sub's own flag set, then the arguments left over where sub
// takes them. An unknown flag or a misplaced argument is an error.
func checkCommand(sub string, args []string) error {
	parse := func(fs *flag.FlagSet) error {
		fs.SetOutput(io.Discard)
		if err := fs.Parse(args); err != nil && !errors.Is(err, flag.ErrHelp) {
			return err
		}
		return nil
	}
	switch sub {
	case "serve":
		fs, _ := newServeFlags()
		if err := parse(fs); err != nil {
			return err
		}
		if fs.NArg() > 0 && !(fs.NArg() == 1 && fs.Arg(0) == "help") {
			return fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
	case "bench":
		if len(args) > 0 && args[0] == "compare" {
			// Its files are read after its flags: a missing one is not a usage error.
			if err := runCompare(args[1:], io.Discard, io.Discard); errors.As(err, new(errUsage)) {
				return err
			}
			return nil
		}
		if len(args) > 0 && args[0] == "help" {
			return benchHelp(args[1:], io.Discard, io.Discard)
		}
		var mode *benchMode
		if len(args) > 0 {
			if mode = benchModeNamed(args[0]); mode != nil {
				args = args[1:]
			}
		}
		var cfg bench.Config
		fs, b := newBenchFlags(&cfg)
		if err := parse(fs); err != nil {
			return err
		}
		if mode == nil {
			mode = legacyMode(b)
		}
		var refused error
		fs.Visit(func(f *flag.Flag) {
			if refused == nil && !mode.takes(f.Name) {
				refused = fmt.Errorf("-%s: not a flag of bench %s", f.Name, mode.name)
			}
		})
		if refused != nil {
			return refused
		}
		if err := checkBenchFlags(fs, &cfg); err != nil {
			return err
		}
		switch {
		case mode == fanoutMode:
		case len(b.targets) > 0 && fs.NArg() > 0:
			return fmt.Errorf("--target names the targets, and %q is given too", fs.Args())
		case fs.NArg() > 1:
			return fmt.Errorf("one target at most, not %q", fs.Args())
		}
		for _, a := range fs.Args() {
			if !isTarget(a) {
				return fmt.Errorf("%q is not a target (a flag after the target is not parsed)", a)
			}
		}
		if err := checkAuthFlags(&cfg, fs.Arg(0)); err != nil {
			return err
		}
	case "openrpc":
		fs, _ := newOpenRPCFlags()
		if err := parse(fs); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
	case "help":
		if err := run(context.Background(), append([]string{"help"}, args...), io.Discard, io.Discard); err != nil {
			return err
		}
	default:
		return fmt.Errorf("no command %q", sub)
	}
	return nil
}

// writeJWTSecret writes a jwt.hex, as openssl rand -hex 32 does, in dir:
// -jwt-secret reads its file as the flag is parsed.
func writeJWTSecret(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "jwt.hex"), []byte(randomHex(t, 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// randomHex is openssl rand -hex n.
func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestDocs_commandsParse: every jetrpc command the docs show parses with
// its subcommand's flags, its arguments where the subcommand takes them,
// so that a renamed or removed flag fails here, not in a reader's shell.
func TestDocs_commandsParse(t *testing.T) {
	dir := t.TempDir()
	writeJWTSecret(t, dir)
	t.Chdir(dir) // where the docs' jwt.hex is
	n := 0
	for _, rel := range docFiles {
		d := loadDoc(t, rel)
		for _, b := range d.blocks {
			pipes, _, err := shellPipelines(shellSource(b))
			if err != nil {
				t.Errorf("%s:%d: %v", rel, b.line, err)
				continue
			}
			for _, p := range pipes {
				for _, s := range p.stages {
					sub, args, ok := jetrpcCall(s.words)
					if !ok {
						continue
					}
					n++
					if err := checkCommand(sub, args); err != nil {
						t.Errorf("%s:%d: jetrpc %s %s: %v", rel, b.line+p.line-1, sub, strings.Join(args, " "), err)
					}
				}
			}
		}
	}
	if n < 30 {
		t.Errorf("found %d jetrpc commands in the docs; the reader of their shell blocks misses some", n)
	}
}

// TestDocs_testCommandIsCIs: the test command of the README's first
// block — what a newcomer types — is a line of .ci/run, as it is
// written there, so that the two cannot drift apart.
func TestDocs_testCommandIsCIs(t *testing.T) {
	d := loadDoc(t, "README.md")
	if len(d.blocks) == 0 || d.blocks[0].lang != "sh" {
		t.Fatal("README.md does not open with a sh block of its commands")
	}
	pipes, _, err := shellPipelines(d.blocks[0].text)
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	ciLines := strings.Split(string(ci), "\n")
	found := false
	for _, p := range pipes {
		w := p.stages[0].words
		if len(w) < 2 || w[0] != "go" || w[1] != "test" {
			continue
		}
		found = true
		if cmd := strings.Join(w, " "); !slices.Contains(ciLines, cmd) {
			t.Errorf("README.md's test command %q is no line of .ci/run", cmd)
		}
	}
	if !found {
		t.Error("README.md's first block has no go test command")
	}
}

// codeSpanRE matches an inline code span of markdown prose.
var codeSpanRE = regexp.MustCompile("`([^`]+)`")

// otherFlags are flags the prose names in code that belong to other
// tools than jetrpc.
var otherFlags = map[string]string{
	"race":    "go test -race",
	"H":       "curl -H",
	"compare": "bench/scripts/perfguard.sh --compare",
	"update":  "bench/scripts/perfguard.sh --update",
	"o":       "bench/peers/cmd/compare -o",
}

// flagsOf returns the flag names of jetrpc sub.
func flagsOf(sub string) map[string]bool {
	names := map[string]bool{"h": true, "help": true}
	var fs *flag.FlagSet
	switch sub {
	case "serve":
		fs, _ = newServeFlags()
	case "bench":
		fs, _ = newBenchFlags(new(bench.Config))
	case "openrpc":
		fs, _ = newOpenRPCFlags()
	}
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}

// TestDocs_proseFlagsExist: a flag the prose names in code — alone
// (`--max-pending`, `-warmup 0`) or in a command (`jetrpc serve --loops 1`,
// `serve --broker`) — is one of jetrpc's (of that subcommand's, in a
// command), or one of otherFlags.
func TestDocs_proseFlagsExist(t *testing.T) {
	subs := map[string]map[string]bool{"serve": flagsOf("serve"), "bench": flagsOf("bench"), "openrpc": flagsOf("openrpc")}
	any := map[string]bool{}
	for _, fl := range subs {
		for f := range fl {
			any[f] = true
		}
	}
	name := func(w string) (string, bool) {
		if !strings.HasPrefix(w, "-") {
			return "", false
		}
		n, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if n == "" || !unicode.IsLetter(rune(n[0])) { // -32000, a code
			return "", false
		}
		return n, true
	}
	n := 0
	for _, rel := range docFiles {
		d := loadDoc(t, rel)
		prose := strings.Join(d.prose, "\n")
		for _, m := range codeSpanRE.FindAllStringSubmatchIndex(prose, -1) {
			span := strings.Fields(prose[m[2]:m[3]])
			line := strings.Count(prose[:m[0]], "\n") + 1
			if len(span) == 0 {
				continue
			}
			known, words, of := any, span[:1], "jetrpc"
			if span[0] == "jetrpc" && len(span) > 1 {
				span = span[1:]
			}
			if fl, ok := subs[span[0]]; ok {
				of = "jetrpc " + span[0]
				if span[0] == "bench" && len(span) > 1 && span[1] == "compare" {
					fl = map[string]bool{"json": true, "h": true}
				}
				known, words = fl, span[1:]
			}
			for _, w := range words {
				f, ok := name(w)
				if !ok {
					continue
				}
				n++
				if !known[f] && otherFlags[f] == "" {
					t.Errorf("%s:%d: `%s` names -%s, which is no flag of %s", rel, line, prose[m[2]:m[3]], f, of)
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("found %d flags named in the prose; the reader misses some", n)
	}
}

// linkRE matches a markdown link or image; its text may span lines.
var linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// repoPathRE matches a path of the repository written in code: under
// one of its top folders, or starting with ./.
var repoPathRE = regexp.MustCompile(`^(\./[A-Za-z0-9_./-]+|(parser|handler|engine|pool|bench|cmd|testdata|\.ci)(/[A-Za-z0-9_.-]+)+/?)$`)

// TestDocs_linksResolve: every relative link of the docs names a file
// that exists from the doc's folder, every #anchor a heading of the file
// it names, and every repository path the docs write in code — in prose
// from the repository root, in a shell block from where its cd went —
// exists.
func TestDocs_linksResolve(t *testing.T) {
	docs := map[string]*mdDoc{}
	for _, rel := range docFiles {
		docs[rel] = loadDoc(t, rel)
	}
	exists := func(p string) bool { _, err := os.Stat(filepath.Join(repoRoot, p)); return err == nil }
	links := 0
	for _, rel := range docFiles {
		d := docs[rel]
		// Code spans hide their text from links ([T]() in handler.Notifies[T]()).
		prose := codeSpanRE.ReplaceAllStringFunc(strings.Join(d.prose, "\n"), func(s string) string {
			return "`" + strings.Repeat("\n", strings.Count(s, "\n")) + "`"
		})
		for _, m := range linkRE.FindAllStringSubmatchIndex(prose, -1) {
			target := prose[m[2]:m[3]]
			line := strings.Count(prose[:m[0]], "\n") + 1
			if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, anchor, _ := strings.Cut(target, "#")
			to := rel
			if file != "" {
				to = path.Join(path.Dir(rel), file)
				if !exists(to) {
					t.Errorf("%s:%d: link %q: no %s", rel, line, target, to)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			td := docs[to]
			if td == nil {
				if !strings.HasSuffix(to, ".md") {
					t.Errorf("%s:%d: link %q: an anchor in %s, which is not markdown", rel, line, target, to)
					continue
				}
				td = loadDoc(t, to)
				docs[to] = td
			}
			if !td.anchors[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading #%s", rel, line, target, to, anchor)
			}
		}
		for _, m := range codeSpanRE.FindAllStringSubmatchIndex(strings.Join(d.prose, "\n"), -1) {
			p := strings.Join(d.prose, "\n")[m[2]:m[3]]
			if repoPathRE.MatchString(p) && !strings.Contains(p, "...") && !exists(p) {
				t.Errorf("%s:%d: `%s`: no such file or folder", rel, strings.Count(strings.Join(d.prose, "\n")[:m[0]], "\n")+1, p)
			}
		}
		for _, b := range d.blocks {
			pipes, _, err := shellPipelines(shellSource(b))
			if err != nil {
				continue // TestDocs_commandsParse says so
			}
			cwd := "."
			for _, pl := range pipes {
				for _, s := range pl.stages {
					if s.words[0] == "cd" && len(s.words) == 2 {
						cwd = path.Join(cwd, s.words[1])
						continue
					}
					for _, w := range s.words[1:] {
						if repoPathRE.MatchString(w) && !strings.Contains(w, "...") && !exists(path.Join(cwd, w)) {
							t.Errorf("%s:%d: %s: no such file or folder (from %s)", rel, b.line+pl.line-1, w, cwd)
						}
					}
				}
			}
		}
	}
	if links < 30 {
		t.Errorf("found %d links in the docs; the reader misses some", links)
	}
}
