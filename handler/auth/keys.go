package auth

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/jetrpc/jetrpc/handler"
)

// MinKeyLength is the shortest API key, in bytes, that LoadKeys accepts.
// Keys should be random: 16 bytes of crypto/rand, hex-encoded, make a
// 32-byte key.
const MinKeyLength = 16

// Refusals of Keys.Authorize, built once (no allocation when refusing).
var (
	errNoToken    = fmt.Errorf("%w: no bearer token", handler.ErrUnauthenticated)
	errUnknownKey = fmt.Errorf("%w: unknown API key", handler.ErrUnauthenticated)
)

// Keys is a set of API keys, each with its grants: a caller presenting
// one as its bearer token (see Token) is given the key's grants. Build
// it with NewKeys or LoadKeys; it is immutable from then on, and its
// methods are safe from any goroutine.
//
// A presented token is checked in constant time with respect to the
// keys: it is hashed with a seeded hash (hash/maphash, its seed random
// per Keys and never revealed), the keys of that hash — the right one,
// or none but for a collision — are compared in constant time (eight
// bytes at a time, no branch on their contents). The timing of a lookup tells an attacker
// only whether the token's seeded hash is a key's, which happens only
// for the key itself: nothing that helps guess a key byte by byte, as a
// plain string comparison or a map keyed by the keys would. (Hashing the
// token with SHA-256 would do as well, at ten times the cost per
// request.)
type Keys struct {
	seed   maphash.Seed          // immutable
	byHash map[uint64][]keyEntry // immutable; never nil
	n      int
}

// keyEntry is one key, its grants and its name (KeyName).
type keyEntry struct {
	key    string
	grants handler.Grants
	name   string
}

func newKeySet() *Keys {
	return &Keys{seed: maphash.MakeSeed(), byHash: make(map[uint64][]keyEntry)}
}

// add adds key with its grants; it reports false when key is already in
// k.
func (k *Keys) add(key string, g handler.Grants) bool {
	h := maphash.String(k.seed, key)
	for _, e := range k.byHash[h] {
		if e.key == key {
			return false
		}
	}
	k.byHash[h] = append(k.byHash[h], keyEntry{key: key, grants: g, name: KeyName(key)})
	k.n++
	return true
}

// NewKeys returns the set of the keys of keys, each with its grants (nil
// grants: the key authenticates but grants nothing). The keys are used
// as given: choose them long and random (see MinKeyLength). The grants
// are shared, not copied, and must not be modified afterwards; keys
// itself is not kept. An empty key is never matched, since Authorize
// refuses a request without a token. NewKeys(nil) refuses everyone.
func NewKeys(keys map[string]handler.Grants) *Keys {
	k := newKeySet()
	for key, g := range keys {
		if key != "" {
			k.add(key, g)
		}
	}
	return k
}

// Len returns the number of keys in k.
func (k *Keys) Len() int { return k.n }

// Authorize returns the grants of the API key that m's request presents
// as its bearer token (Token: the Authorization header, or on a
// WebSocket upgrade a subprotocol or the access_token query parameter;
// a token in the URL of another request is refused with
// handler.ErrTokenInURL), and sets
// m.Principal to the key's name (KeyName), so that rate limits count
// the key's calls together from every address; or it returns an error
// wrapping handler.ErrUnauthenticated, and leaves m alone, when the
// request presents no key or one that is not in k: handler.ErrNoCredentials
// when it presents nothing at all (no Authorization field, no token in
// its URL or subprotocols), which handler.HTTPPolicy.AuthOptional lets
// in anonymous. A stream connection, which has no request head, is
// always refused, with handler.ErrNoCredentials. The method value
// k.Authorize is a handler.Authorizer. A key found in the Authorization
// header holds for good (handler.Meta.AuthorizedUntil): the engine gives
// the same answer to the connection's next requests with the same
// header without asking again.
//
// It does not allocate when the key is in the Authorization header, so
// that it may run for every request on the engine's event loop. Safe
// from any goroutine.
func (k *Keys) Authorize(m *handler.Meta) (handler.Grants, error) {
	t := headerToken(m)
	inHeader := t != ""
	if !inHeader {
		t = Token(m)
	}
	if t == "" {
		switch {
		case TokenInURL(m):
			return nil, handler.ErrTokenInURL
		case presented(m):
			return nil, errNoToken
		}
		return nil, handler.ErrNoCredentials
	}
	// ConstantTimeCompare only reads its arguments: viewing the strings'
	// bytes saves the copies []byte(t) would make.
	for _, e := range k.byHash[maphash.String(k.seed, t)] {
		if constantTimeEqual(t, e.key) {
			m.Principal = e.name
			if inHeader {
				m.AuthorizedUntil = math.MaxInt64 // the same field, the same key: for good
			}
			return e.grants, nil
		}
	}
	return nil, errUnknownKey
}

// KeyName returns the name of an API key, which Keys.Authorize gives
// its callers as handler.Meta.Principal: "key:" and the first 16 hex
// digits of the key's SHA-256. It names the key in logs and rate limits
// without revealing it (for keys chosen at random, as they should be:
// the hash of a guessable key can be checked against guesses), and is
// the same from one start to the next, so an operator can find which
// key a name stands for.
func KeyName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "key:" + hex.EncodeToString(sum[:8])
}

// constantTimeEqual reports whether a equals b in time that depends on
// their lengths only, as crypto/subtle.ConstantTimeCompare, eight bytes
// at a time: no branch and no memory access depends on their contents.
func constantTimeEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var diff uint64
	i := 0
	for ; i+8 <= len(a); i += 8 {
		diff |= binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(a[i:]), 8)) ^
			binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(b[i:]), 8))
	}
	for ; i < len(a); i++ {
		diff |= uint64(a[i] ^ b[i])
	}
	return diff == 0 // one compare of the accumulated difference: it tells nothing of where a and b differ
}

// LoadKeys reads a keys file and returns its keys. The file holds one
// key per line, optionally followed by white space and the key's grants
// as a comma-separated list (white space around the commas is ignored):
//
//	# operators
//	4f1c0a3e5b2d49c8a6e7f0b1c2d3e4f5 admin,read
//	9a8b7c6d5e4f30211203948576afbecd read
//	0123456789abcdef0123456789abcdef
//
// A key without a list gets no grants (nil): it authenticates, but
// methods registered with handler.Require refuse it. Blank lines and
// lines whose first non-blank character is '#' are ignored, and a '#'
// after the key starts a comment. A key must be at least MinKeyLength
// bytes of printable ASCII and appear once; a violation, or an empty or
// blank grant in a list, is an error naming the file and line (never the
// key).
func LoadKeys(path string) (*Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jetrpc: reading keys file: %w", err)
	}
	return parseKeys(path, data)
}

// parseKeys parses the keys file text data, named name in errors.
func parseKeys(name string, data []byte) (*Keys, error) {
	k := newKeySet()
	firstLine := make(map[string]int)
	text := string(data)
	for n := 1; text != ""; n++ {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		key, grants, err := parseKeyLine(line)
		if err != nil {
			return nil, &KeysError{File: name, Line: n, Err: err}
		}
		if key == "" {
			continue
		}
		if first, dup := firstLine[key]; dup {
			return nil, &KeysError{File: name, Line: n, Err: fmt.Errorf("duplicate key (first on line %d)", first)}
		}
		firstLine[key] = n
		k.add(key, grants)
	}
	return k, nil
}

// parseKeyLine parses one line of a keys file: key "" for a blank line
// or a comment.
func parseKeyLine(line string) (key string, g handler.Grants, err error) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", nil, nil
	}
	key, rest := line, ""
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		key, rest = line[:i], line[i+1:]
	}
	if len(key) < MinKeyLength {
		return "", nil, fmt.Errorf("key shorter than %d bytes", MinKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] >= 0x7f {
			return "", nil, errors.New("key holds a byte that is not printable ASCII")
		}
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return key, nil, nil
	}
	for p := range strings.SplitSeq(rest, ",") {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
			return "", nil, errors.New("empty grant in list")
		case strings.ContainsAny(p, " \t"):
			return "", nil, fmt.Errorf("grant %s holds white space (separate grants with commas)", strconv.Quote(p))
		}
		g = append(g, p)
	}
	return key, g, nil
}

// KeysError is an error in a keys file (LoadKeys).
type KeysError struct {
	File string // the file's path
	Line int    // 1-based
	Err  error  // what is wrong
}

// Error returns "jetrpc: keys file FILE:LINE: ERR".
func (e *KeysError) Error() string {
	return "jetrpc: keys file " + e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *KeysError) Unwrap() error { return e.Err }
