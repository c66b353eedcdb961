package textlog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // the zones of the table, wherever the tests run

	"github.com/jetrpc/jetrpc/handler/textlog"
)

// here returns "file:line" of its caller.
func here() string { return caller(1) }

// caller returns "file:line" of the call skip frames above the line that
// calls caller: caller(0) is that line, caller(1) the line calling its
// function.
func caller(skip int) string {
	_, file, line, _ := runtime.Caller(skip + 1)
	return fmt.Sprintf("%s:%d", file[strings.LastIndexByte(file, '/')+1:], line)
}

// diffCase is a record given to both handlers, after derive (nil: none)
// has derived each from a handler with options opts.
type diffCase struct {
	at     string
	name   string
	opts   *slog.HandlerOptions
	derive func(slog.Handler) slog.Handler
	rec    slog.Record
	fast   bool // textlog formats it on the fast path
}

// rec returns a record at time t with attrs.
func rec(t time.Time, l slog.Level, msg string, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(t, l, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

// fastCase and slowCase are cases the fast path does and does not cover.
func fastCase(name string, r slog.Record) diffCase {
	return diffCase{at: caller(1), name: name, rec: r, fast: true}
}

func slowCase(name string, r slog.Record) diffCase {
	return diffCase{at: caller(1), name: name, rec: r}
}

// derived is a case of a record through derive of a handler with opts.
func derived(name string, opts *slog.HandlerOptions, derive func(slog.Handler) slog.Handler, r slog.Record, fast bool) diffCase {
	return diffCase{at: caller(1), name: name, opts: opts, derive: derive, rec: r, fast: fast}
}

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

var (
	t0       = time.Date(2024, 5, 17, 13, 4, 5, 123456789, time.UTC)
	newYork  = mustZone("America/New_York")
	kolkata  = mustZone("Asia/Kolkata")
	lordHowe = mustZone("Australia/Lord_Howe")
	oddZone  = time.FixedZone("ODD", -(3*3600 + 15*60 + 7)) // seconds in the offset
)

type textMarshaler struct{}

func (textMarshaler) MarshalText() ([]byte, error) { return []byte("marshaled text"), nil }

type logValuer struct{}

func (logValuer) LogValue() slog.Value { return slog.StringValue("resolved value") }

type panicker struct{}

func (*panicker) String() string { panic("boom") }

// quotingStrings are strings that need quoting, and some that do not.
var quotingStrings = []string{
	"", "plain", "two words", "a=b", `say "hi"`, `back\slash`, "tab\there", "nl\nhere",
	"\x00nul", "del\x7f", "bell\a", "invalid\xffutf8", "\xc3", "héllo", "日本語", "nbsp\u00a0x",
	"em\u2003space", "zwsp\u200b", "rtl\u202e", "emoji😀", "\U0010FFFF", "\ufffd", "'single'", "{}[]:,",
	"-", "+", "=", `"`, `\`, " ", "trailing ", " leading",
}

func diffCases() []diffCase {
	local := time.Date(2023, 11, 5, 1, 30, 0, 999_000_000, time.Local)
	pc := func() uintptr {
		var pcs [1]uintptr
		runtime.Callers(1, pcs[:])
		return pcs[0]
	}()
	withPC := slog.NewRecord(t0, slog.LevelInfo, "with pc", pc)
	withPC.AddAttrs(slog.Int("n", 1))

	cs := []diffCase{
		fastCase("no attrs", rec(t0, slog.LevelInfo, "hello")),
		fastCase("zero time omitted", rec(time.Time{}, slog.LevelInfo, "hello", slog.Int("n", 1))),
		fastCase("empty message", rec(t0, slog.LevelInfo, "")),
		fastCase("access log call", rec(t0, slog.LevelInfo, "jetrpc: call",
			slog.String("method", "add"), slog.String("id", "1"), slog.Int("code", 0),
			slog.Duration("duration", 35*time.Microsecond), slog.String("transport", "http"),
			slog.String("remote", "127.0.0.1:5555"))),
		fastCase("access log batch", rec(t0, slog.LevelWarn, "jetrpc: slow batch",
			slog.Int("elements", 10), slog.Int("errors", 2), slog.Duration("duration", 2*time.Second+5*time.Millisecond),
			slog.String("transport", "ws"), slog.String("remote", "[::1]:80"), slog.String("client", "10.0.0.1"))),
		fastCase("notification", rec(t0, slog.LevelInfo, "jetrpc: call", slog.String("method", "notify"), slog.Bool("notification", true))),
		fastCase("eight attrs", rec(t0, slog.LevelInfo, "m", slog.Int("a", 1), slog.Int("b", 2), slog.Int("c", 3),
			slog.Int("d", 4), slog.Int("e", 5), slog.Int("f", 6), slog.Int("g", 7), slog.Int("h", 8))),
		fastCase("ints", rec(t0, slog.LevelInfo, "m", slog.Int64("min", math.MinInt64), slog.Int64("max", math.MaxInt64),
			slog.Int("zero", 0), slog.Int("neg", -42), slog.Uint64("umax", math.MaxUint64), slog.Uint64("u0", 0))),
		fastCase("floats", rec(t0, slog.LevelInfo, "m", slog.Float64("nan", math.NaN()), slog.Float64("inf", math.Inf(1)),
			slog.Float64("-inf", math.Inf(-1)), slog.Float64("zero", 0), slog.Float64("negzero", math.Copysign(0, -1)),
			slog.Float64("pi", math.Pi), slog.Float64("big", 1e21), slog.Float64("small", 1e-7),
			slog.Float64("max", math.MaxFloat64), slog.Float64("tiny", math.SmallestNonzeroFloat64), slog.Float64("int", 3))),
		fastCase("bools", rec(t0, slog.LevelInfo, "m", slog.Bool("t", true), slog.Bool("f", false))),
		fastCase("empty attr elided", rec(t0, slog.LevelInfo, "m", slog.Int("a", 1), slog.Attr{}, slog.Int("b", 2))),
		fastCase("only empty attrs", rec(t0, slog.LevelInfo, "m", slog.Attr{}, slog.Attr{})),
		fastCase("empty key", rec(t0, slog.LevelInfo, "m", slog.Int("", 0), slog.String("", ""))),
		fastCase("very long value", rec(t0, slog.LevelInfo, strings.Repeat("m", 70_000),
			slog.String("long", strings.Repeat("x y", 50_000)), slog.String("longer", strings.Repeat("é", 40_000)))),
		fastCase("time values", rec(t0, slog.LevelInfo, "m", slog.Time("utc", t0), slog.Time("zero", time.Time{}),
			slog.Time("ny", t0.In(newYork)), slog.Time("kolkata", t0.In(kolkata)), slog.Time("odd", t0.In(oddZone)),
			slog.Time("local", local), slog.Time("now", time.Now()), slog.Time("year1", time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)),
			slog.Time("year9999", time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)),
			slog.Time("year10000", time.Date(10000, 1, 1, 0, 0, 0, 500_000_000, time.UTC)),
			slog.Time("year-5", time.Date(-5, 3, 1, 0, 0, 0, 0, time.UTC)),
			slog.Time("before1970", time.Unix(-1, 999_999_999).In(newYork)))),
		fastCase("time: monotonic", rec(time.Now(), slog.LevelInfo, "m")),
		slowCase("any: error", rec(t0, slog.LevelError, "m", slog.Any("err", errors.New("bad thing")))),
		slowCase("any: nil", rec(t0, slog.LevelInfo, "m", slog.Any("nil", nil))),
		slowCase("any: struct", rec(t0, slog.LevelInfo, "m", slog.Any("s", struct{ A, B int }{1, 2}))),
		slowCase("any: bytes", rec(t0, slog.LevelInfo, "m", slog.Any("b", []byte("a \"b\"")))),
		slowCase("any: text marshaler", rec(t0, slog.LevelInfo, "m", slog.Any("tm", textMarshaler{}))),
		slowCase("any: addr", rec(t0, slog.LevelInfo, "m", slog.Any("addr", netip.MustParseAddr("::1")))),
		slowCase("any: nil pointer stringer", rec(t0, slog.LevelInfo, "m", slog.Any("p", (*panicker)(nil)))),
		slowCase("any: panicking stringer", rec(t0, slog.LevelInfo, "m", slog.Any("p", &panicker{}))),
		slowCase("log valuer", rec(t0, slog.LevelInfo, "m", slog.Int("before", 1), slog.Any("lv", logValuer{}))),
		slowCase("group", rec(t0, slog.LevelInfo, "m", slog.Group("g", slog.Int("a", 1), slog.String("b", "x y")))),
		slowCase("group: empty key", rec(t0, slog.LevelInfo, "m", slog.Group("", slog.Int("a", 1)))),
		slowCase("last attr not flat", rec(t0, slog.LevelInfo, "m", slog.Int("a", 1), slog.Int("b", 2), slog.Int("c", 3),
			slog.Int("d", 4), slog.Int("e", 5), slog.Int("f", 6), slog.Any("err", io.EOF))),
		derived("AddSource, no pc", &slog.HandlerOptions{AddSource: true}, nil, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), false),
		derived("AddSource, pc", &slog.HandlerOptions{AddSource: true}, nil, withPC, false),
		derived("ReplaceAttr", &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			a.Key = strings.ToUpper(a.Key)
			return a
		}}, nil, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), false),
		derived("Level option", &slog.HandlerOptions{Level: slog.LevelDebug}, nil, rec(t0, slog.LevelDebug, "m", slog.Int("n", 1)), true),
		derived("WithAttrs", nil, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("service", "jet rpc"), slog.Int("pid", 42)})
		}, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), true),
		derived("WithAttrs, record without attrs", nil, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("service", "jetrpc")})
		}, rec(t0, slog.LevelInfo, "m"), true),
		derived("WithAttrs twice, every flat kind", nil, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("a b", "c=d"), slog.Int64("i", -1), slog.Uint64("u", 2)}).
				WithAttrs([]slog.Attr{slog.Float64("f", 0.5), slog.Bool("b", true), slog.Duration("d", time.Hour),
					slog.Time("t", t0.In(kolkata)), slog.Attr{}})
		}, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), true),
		derived("WithAttrs empty", nil, func(h slog.Handler) slog.Handler {
			return h.WithAttrs(nil).WithAttrs([]slog.Attr{slog.Attr{}})
		}, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), true),
		derived("WithAttrs: empty group", nil, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.Group("g")})
		}, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), false),
		derived("WithAttrs: error", nil, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.Int("a", 1), slog.Any("err", io.EOF)}).WithAttrs([]slog.Attr{slog.Int("b", 2)})
		}, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), false),
		derived("WithGroup", nil, func(h slog.Handler) slog.Handler {
			return h.WithGroup("g")
		}, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), false),
		derived("WithGroup, no attrs", nil, func(h slog.Handler) slog.Handler {
			return h.WithGroup("g")
		}, rec(t0, slog.LevelInfo, "m"), false),
		derived("WithGroup empty name", nil, func(h slog.Handler) slog.Handler {
			return h.WithGroup("")
		}, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), false),
		derived("WithAttrs then WithGroup then WithAttrs", nil, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.Int("a", 1)}).WithGroup("g h").WithAttrs([]slog.Attr{slog.Int("b", 2)}).WithGroup("i")
		}, rec(t0, slog.LevelInfo, "m", slog.Int("n", 1)), false),
		derived("WithGroup then ReplaceAttr", &slog.HandlerOptions{ReplaceAttr: func(gs []string, a slog.Attr) slog.Attr {
			a.Key = strings.Join(gs, "/") + ":" + a.Key
			return a
		}}, func(h slog.Handler) slog.Handler {
			return h.WithGroup("g").WithAttrs([]slog.Attr{slog.Int("a", 1)})
		}, rec(t0, slog.LevelInfo, "m", slog.Group("h", slog.Int("n", 1))), false),
	}
	for _, l := range []slog.Level{slog.LevelDebug - 3, slog.LevelDebug, slog.LevelDebug + 1, slog.LevelInfo - 1,
		slog.LevelInfo, slog.Level(2), slog.LevelWarn, slog.LevelWarn + 1, slog.LevelError, slog.LevelError + 100,
		slog.Level(math.MinInt), slog.Level(math.MaxInt)} {
		cs = append(cs, fastCase("level "+fmt.Sprint(int(l)), rec(t0, l, "m")))
	}
	for _, s := range quotingStrings {
		cs = append(cs, fastCase(fmt.Sprintf("quoting %q", s), rec(t0, slog.LevelInfo, s, slog.String(s, s), slog.Int(s, 1))))
	}
	for _, d := range []time.Duration{0, 1, 999, time.Microsecond, 1500, 999_999, time.Millisecond, 1_234_567, time.Second,
		time.Second + 1, 61 * time.Second, time.Hour + time.Second, 100 * time.Hour, -1, -time.Minute,
		math.MinInt64, math.MaxInt64} {
		cs = append(cs, fastCase("duration "+fmt.Sprint(int64(d)), rec(t0, slog.LevelInfo, "m", slog.Duration("d", d))))
	}
	for _, t := range []time.Time{t0, t0.In(time.Local), t0.In(newYork), t0.In(kolkata), t0.In(lordHowe), t0.In(oddZone),
		local, time.Date(2024, 3, 10, 1, 59, 59, 999_000_000, newYork), time.Date(2024, 3, 10, 3, 0, 0, 0, newYork),
		time.Date(2024, 4, 7, 1, 59, 59, 1_000_000, lordHowe), time.Date(2024, 4, 7, 1, 30, 0, 0, lordHowe),
		time.Unix(0, 0), time.Unix(-1, 1_000_000), time.Unix(0, -1), time.Unix(0, 999_999).In(newYork),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, newYork),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(292277026596, 12, 4, 15, 30, 7, 0, time.UTC)} {
		cs = append(cs, fastCase("time "+t.Format(time.RFC3339Nano), rec(t, slog.LevelInfo, "m")))
	}
	return cs
}

// handlers returns textlog's and slog's handlers for c, writing to tw and
// sw.
func (c diffCase) handlers(tw, sw io.Writer) (slog.Handler, slog.Handler) {
	var th slog.Handler = textlog.New(tw, c.opts)
	var sh slog.Handler = slog.NewTextHandler(sw, c.opts)
	if c.derive != nil {
		th, sh = c.derive(th), c.derive(sh)
	}
	return th, sh
}

func TestHandler_matchesTextHandler(t *testing.T) {
	var all, allSlog bytes.Buffer // every case through one pair of handlers: the time cache across records
	allT, allS := textlog.New(&all, nil), slog.NewTextHandler(&allSlog, nil)
	for _, c := range diffCases() {
		var got, want bytes.Buffer
		th, sh := c.handlers(&got, &want)
		if err := th.Handle(context.Background(), c.rec.Clone()); err != nil {
			t.Errorf("%s: %s: textlog: %v", c.at, c.name, err)
		}
		if err := sh.Handle(context.Background(), c.rec.Clone()); err != nil {
			t.Errorf("%s: %s: slog: %v", c.at, c.name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: %s:\n got %.300q\nwant %.300q", c.at, c.name, got.Bytes(), want.Bytes())
		}
		if fast := textlog.FastPath(th, c.rec.Clone()); fast != c.fast {
			t.Errorf("%s: %s: fast path %v, want %v", c.at, c.name, fast, c.fast)
		}
		if c.opts == nil && c.derive == nil {
			allT.Handle(context.Background(), c.rec.Clone())
			allS.Handle(context.Background(), c.rec.Clone())
		}
	}
	if !bytes.Equal(all.Bytes(), allSlog.Bytes()) {
		t.Errorf("the cases through one handler differ")
	}
}

// TestHandler_timeCache: records in one second but other milliseconds or
// zones, and in the seconds around a zone's change, through one handler.
func TestHandler_timeCache(t *testing.T) {
	var got, want bytes.Buffer
	th, sh := textlog.New(&got, nil), slog.NewTextHandler(&want, nil)
	base := time.Date(2024, 11, 3, 1, 59, 58, 0, newYork) // an hour before New York leaves DST
	for i := range 5000 {
		tm := base.Add(time.Duration(i) * 1_700 * time.Microsecond)
		for _, tt := range []time.Time{tm, tm.Add(time.Hour), tm.In(time.UTC), tm.In(kolkata), tm.Add(-time.Hour)} {
			r := rec(tt, slog.LevelInfo, "m", slog.Time("t", tt.Add(time.Hour)))
			th.Handle(context.Background(), r)
			sh.Handle(context.Background(), r)
		}
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		g, w := strings.Split(got.String(), "\n"), strings.Split(want.String(), "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("line %d:\n got %s\nwant %s", i, g[i], w[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(g), len(w))
	}
}

func TestHandler_Enabled(t *testing.T) {
	var lv slog.LevelVar
	for _, c := range []struct {
		at   string
		opts *slog.HandlerOptions
	}{
		{here(), nil},
		{here(), &slog.HandlerOptions{}},
		{here(), &slog.HandlerOptions{Level: slog.LevelWarn}},
		{here(), &slog.HandlerOptions{Level: &lv}},
	} {
		th, sh := textlog.New(io.Discard, c.opts), slog.NewTextHandler(io.Discard, c.opts)
		for _, set := range []slog.Level{slog.LevelDebug, slog.LevelError} {
			lv.Set(set)
			for l := slog.LevelDebug - 1; l <= slog.LevelError+1; l++ {
				if g, w := th.Enabled(context.Background(), l), sh.Enabled(context.Background(), l); g != w {
					t.Errorf("%s: Enabled(%v) = %v, want %v", c.at, l, g, w)
				}
			}
		}
	}
}

type failingWriter struct{}

var errWrite = errors.New("write failed")

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestHandler_returnsWriteError(t *testing.T) {
	h := textlog.New(failingWriter{}, nil)
	for _, r := range []slog.Record{rec(t0, slog.LevelInfo, "fast"), rec(t0, slog.LevelInfo, "slow", slog.Any("err", io.EOF))} {
		if err := h.Handle(context.Background(), r); !errors.Is(err, errWrite) {
			t.Errorf("%s: Handle = %v, want %v", r.Message, err, errWrite)
		}
	}
}

// chunkyWriter appends each Write in pieces, yielding between them, with
// no lock of its own: Writes that overlap would interleave (and race).
type chunkyWriter struct{ b []byte }

func (w *chunkyWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		c := min(len(p), 7)
		w.b = append(w.b, p[:c]...)
		p = p[c:]
		runtime.Gosched()
	}
	return n, nil
}

// TestHandler_linesWhole: many goroutines log through one handler and
// handlers derived from it, on the fast path and through the fallback;
// every line comes out whole.
func TestHandler_linesWhole(t *testing.T) {
	const goroutines, records = 16, 300
	var w chunkyWriter
	h := textlog.New(&w, nil)
	derived := h.WithAttrs([]slog.Attr{slog.String("with", "attrs")})
	grouped := h.WithGroup("g")
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range records {
				r := rec(time.Time{}, slog.LevelInfo, "line", slog.Int("g", g), slog.Int("i", i))
				var err error
				switch i % 4 {
				case 0:
					err = h.Handle(context.Background(), r)
				case 1:
					err = derived.Handle(context.Background(), r)
				case 2:
					err = grouped.Handle(context.Background(), r)
				case 3:
					r.AddAttrs(slog.Any("err", io.EOF))
					err = h.Handle(context.Background(), r)
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	line := regexp.MustCompile(`^level=INFO msg=line (with=attrs )?(g=\d+ i=\d+|g\.g=\d+ g\.i=\d+|g=\d+ i=\d+ err=EOF)$`)
	lines := strings.Split(strings.TrimSuffix(string(w.b), "\n"), "\n")
	if len(lines) != goroutines*records {
		t.Fatalf("%d lines, want %d", len(lines), goroutines*records)
	}
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Fatalf("line not whole: %q", l)
		}
	}
}
