package auth_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
)

const (
	keyAdmin  = "0123456789abcdef0123456789abcdef"
	keyReader = "fedcba9876543210"
	keyBare   = "aaaaaaaaaaaaaaaaaaaaaaaa"
)

// keysFile is a keys file with every feature; keysFile's keys and grants
// are keysFileWant.
const keysFile = "# jetrpc API keys\n" +
	"\n" +
	keyAdmin + " admin,read\n" +
	"   # indented comment\n" +
	"\t" + keyReader + "\t read , write # trailing comment\r\n" +
	keyBare + "\n" +
	keyBare + "x #only a comment\n" +
	"   \n" +
	keyBare + "y *"

var keysFileWant = map[string]handler.Grants{
	keyAdmin:      {"admin", "read"},
	keyReader:     {"read", "write"},
	keyBare:       nil,
	keyBare + "x": nil,
	keyBare + "y": {"*"},
}

func TestLoadKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(keysFile), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := auth.LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Authorize(httpMeta("/", "Authorization: Bearer "+keyBare+"z")); !errors.Is(err, handler.ErrUnauthenticated) {
		t.Errorf("unknown key: err = %v; want ErrUnauthenticated", err)
	}
	if k.Len() != 5 {
		t.Errorf("Len = %d; want 5", k.Len())
	}
	for key, want := range keysFileWant {
		g, err := k.Authorize(httpMeta("/", "Authorization: Bearer "+key))
		if err != nil {
			t.Errorf("key %s: %v", key, err)
			continue
		}
		if !slices.Equal(g, want) || (g == nil) != (want == nil) {
			t.Errorf("key %s: grants %q; want %q", key, g, want)
		}
	}
}

func TestLoadKeys_missingFile(t *testing.T) {
	_, err := auth.LoadKeys(filepath.Join(t.TempDir(), "none"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v; want os.ErrNotExist", err)
	}
}

func TestParseKeys_errors(t *testing.T) {
	for _, c := range []struct {
		at   string
		text string
		line int
		want string // in the message
	}{
		{at: here(), text: "short admin", line: 1, want: "shorter than 16 bytes"},
		{at: here(), text: "# c\n\n" + keyAdmin + "\n" + "123456789012345\n", line: 4, want: "shorter than 16 bytes"},
		{at: here(), text: keyAdmin + " a\n" + keyReader + "\n" + keyAdmin + " b\n", line: 3, want: "duplicate key (first on line 1)"},
		{at: here(), text: keyAdmin + " a,,b", line: 1, want: "empty grant"},
		{at: here(), text: keyAdmin + " a,", line: 1, want: "empty grant"},
		{at: here(), text: keyAdmin + " ,a", line: 1, want: "empty grant"},
		{at: here(), text: keyAdmin + " read write", line: 1, want: `grant "read write" holds white space`},
		{at: here(), text: "\n" + keyAdmin + "\x01 a", line: 2, want: "not printable ASCII"},
		{at: here(), text: "0123456789abcdéf0 a", line: 1, want: "not printable ASCII"},
	} {
		_, err := auth.ParseKeys("keys.txt", []byte(c.text))
		var ke *auth.KeysError
		if !errors.As(err, &ke) {
			t.Errorf("%s: err = %v; want a *KeysError", c.at, err)
			continue
		}
		if ke.Line != c.line || ke.File != "keys.txt" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v (line %d); want line %d, %q", c.at, err, ke.Line, c.line, c.want)
		}
		if errors.Unwrap(err) != ke.Err || ke.Err == nil {
			t.Errorf("%s: Unwrap = %v; want %v", c.at, errors.Unwrap(err), ke.Err)
		}
		if !strings.HasPrefix(err.Error(), "jetrpc: keys file keys.txt:") {
			t.Errorf("%s: err = %v; want the file:line prefix", c.at, err)
		}
		if strings.Contains(err.Error(), keyAdmin) {
			t.Errorf("%s: err = %v names the key", c.at, err)
		}
	}
}

func TestParseKeys_empty(t *testing.T) {
	for _, text := range []string{"", "\n\n", "# only\n  # comments\n"} {
		k, err := auth.ParseKeys("k", []byte(text))
		if err != nil || k.Len() != 0 {
			t.Errorf("%q: %d keys, %v; want 0, nil", text, k.Len(), err)
		}
	}
}

func TestKeys_Authorize(t *testing.T) {
	k := auth.NewKeys(map[string]handler.Grants{
		keyAdmin:  {"admin"},
		keyReader: nil,
		"":        {"*"}, // never matched
	})
	if k.Len() != 2 {
		t.Errorf("Len = %d; want 2", k.Len())
	}
	for _, c := range []struct {
		at     string
		m      *handler.Meta
		grants handler.Grants
		ok     bool
	}{
		{at: here(), m: httpMeta("/", "Authorization: Bearer "+keyAdmin), grants: handler.Grants{"admin"}, ok: true},
		{at: here(), m: wsMeta("/", "Sec-WebSocket-Protocol: jsonrpc, bearer."+keyAdmin), grants: handler.Grants{"admin"}, ok: true},
		{at: here(), m: wsMeta("/?access_token=" + keyAdmin), grants: handler.Grants{"admin"}, ok: true},
		// Off a WebSocket upgrade, a token in the URL or a subprotocol is refused.
		{at: here(), m: httpMeta("/?access_token=" + keyAdmin)},
		{at: here(), m: httpMeta("/", "Sec-WebSocket-Protocol: jsonrpc, bearer."+keyAdmin)},
		{at: here(), m: httpMeta("/", "Authorization: Bearer "+keyReader), ok: true},
		{at: here(), m: httpMeta("/", "Authorization: Bearer "+keyAdmin+"x")},
		{at: here(), m: httpMeta("/", "Authorization: Bearer "+keyAdmin[1:])},
		{at: here(), m: httpMeta("/", "Authorization: Bearer "+strings.ToUpper(keyAdmin))},
		{at: here(), m: httpMeta("/", "Authorization: Basic "+keyAdmin)},
		{at: here(), m: httpMeta("/", "Authorization: Bearer wrong")},
		{at: here(), m: httpMeta("/")},
		{at: here(), m: &handler.Meta{Transport: handler.TransportStream, Remote: tcp("127.0.0.1")}},
		{at: here(), m: &handler.Meta{}},
		// A wrong header token is not rescued by a right query token.
		{at: here(), m: wsMeta("/?access_token="+keyAdmin, "Authorization: Bearer wrong")},
	} {
		g, err := k.Authorize(c.m)
		if c.ok {
			if err != nil || !slices.Equal(g, c.grants) {
				t.Errorf("%s: Authorize = %q, %v; want %q, nil", c.at, g, err, c.grants)
			}
			continue
		}
		if g != nil || !errors.Is(err, handler.ErrUnauthenticated) || handler.AuthStatus(err) != 401 {
			t.Errorf("%s: Authorize = %q, %v; want nil, ErrUnauthenticated (401)", c.at, g, err)
		}
	}
}

func TestKeys_Authorize_nilKeys(t *testing.T) {
	k := auth.NewKeys(nil)
	if _, err := k.Authorize(httpMeta("/", "Authorization: Bearer "+keyAdmin)); !errors.Is(err, handler.ErrUnauthenticated) {
		t.Errorf("err = %v; want ErrUnauthenticated", err)
	}
}

func FuzzParseKeys(f *testing.F) {
	f.Add([]byte(keysFile))
	f.Add([]byte(keyAdmin + " a,,b"))
	f.Add([]byte(keyAdmin + " a\n" + keyAdmin))
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, text []byte) {
		k, err := auth.ParseKeys("k", text)
		if err != nil {
			var ke *auth.KeysError
			if !errors.As(err, &ke) || ke.Line < 1 {
				t.Fatalf("err = %v; want a *KeysError with a line", err)
			}
			return
		}
		// Every key parsed authorizes, with a header token.
		for line := range strings.Lines(string(text)) {
			f := strings.Fields(line)
			if len(f) == 0 || strings.HasPrefix(f[0], "#") {
				continue
			}
			if _, err := k.Authorize(httpMeta("/", "Authorization: Bearer "+f[0])); err != nil {
				t.Fatalf("key %q from the file refused: %v", f[0], err)
			}
		}
	})
}

// TestKeys_Authorize_answerHolds: a key from the Authorization header
// holds for good for the same header (AuthorizedUntil), so the engine
// keeps the answer; one from a subprotocol or the query does not, as the
// same header may come with another token there; a refusal says nothing.
func TestKeys_Authorize_answerHolds(t *testing.T) {
	k := auth.NewKeys(map[string]handler.Grants{keyAdmin: {"admin"}})
	for _, c := range []struct {
		at    string
		m     *handler.Meta
		until int64
	}{
		{at: here(), m: httpMeta("/", "Authorization: Bearer "+keyAdmin), until: math.MaxInt64},
		{at: here(), m: httpMeta("/", "Sec-WebSocket-Protocol: jsonrpc, bearer."+keyAdmin)},
		{at: here(), m: httpMeta("/?access_token=" + keyAdmin)},
		{at: here(), m: httpMeta("/?access_token="+keyAdmin, "Authorization: Basic x")},
		{at: here(), m: httpMeta("/", "Authorization: Bearer wrong")},
	} {
		_, _ = k.Authorize(c.m)
		if c.m.AuthorizedUntil != c.until {
			t.Errorf("%s: AuthorizedUntil = %d, want %d", c.at, c.m.AuthorizedUntil, c.until)
		}
	}
}

// TestAuthorize_noCredentials: Keys and JWT refuse a request that
// presents nothing at all with handler.ErrNoCredentials, which
// HTTPPolicy.AuthOptional lets in anonymous, and one that presents
// credentials they cannot take — another scheme, a token in a place
// they do not read — as wrong ones, 401 with or without AuthOptional.
func TestAuthorize_noCredentials(t *testing.T) {
	keys := auth.NewKeys(map[string]handler.Grants{keyAdmin: {"admin"}})
	for _, c := range []struct {
		at   string
		m    *handler.Meta
		none bool // ErrNoCredentials from both
	}{
		{at: here(), m: httpMeta("/"), none: true},
		{at: here(), m: httpMeta("/", "Content-Type: application/json", "Origin: https://app.example"), none: true},
		{at: here(), m: wsMeta("/"), none: true},
		{at: here(), m: &handler.Meta{Transport: handler.TransportStream, Remote: tcp("127.0.0.1")}, none: true},
		{at: here(), m: httpMeta("/", "Authorization: Basic dXNlcjpwYXNz")},
		{at: here(), m: httpMeta("/", "Authorization: Bearer")},
		{at: here(), m: httpMeta("/", "Authorization: Bearer "+keyAdmin+"x")},
		{at: here(), m: httpMeta("/?access_token=" + keyAdmin)},
		{at: here(), m: wsMeta("/?access_token=a%20b")},
		{at: here(), m: httpMeta("/", "Sec-WebSocket-Protocol: jsonrpc, bearer."+keyAdmin)},
	} {
		for name, a := range map[string]handler.Authorizer{"Keys": keys.Authorize, "JWT": newTestJWT().Authorize} {
			g, err := a(c.m)
			if g != nil || handler.AuthStatus(err) != 401 || errors.Is(err, handler.ErrNoCredentials) != c.none {
				t.Errorf("%s: %s.Authorize = %q, %v; want 401, ErrNoCredentials %v", c.at, name, g, err, c.none)
			}
		}
	}
}
