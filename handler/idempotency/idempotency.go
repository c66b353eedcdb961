package idempotency

// NOTE: the interceptor (Store.Intercept) and its store. A call with a
// key is looked up by (scope, key) in a map guarded by mu; its entry is
// in flight until the first call's outcome is known (done closed), then
// holds that outcome until it expires. Entries are also linked in order
// of creation (head oldest), which, all sharing one TTL, is the order in
// which they expire: expiry and the bound in count both drop from the
// head, skipping entries still in flight, which are never dropped.

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/parser"
)

// Defaults of Options.
const (
	// DefaultMaxBytes bounds the bytes a Store keeps: results, keys and
	// scopes, and an entry's overhead (Options.MaxBytes).
	DefaultMaxBytes = 64 << 20
	// DefaultMaxEntries is the most keys a Store keeps (Options.MaxEntries).
	DefaultMaxEntries = 100_000
	// DefaultTTL is how long a key is kept after its first call began
	// (Options.TTL): a day, as Stripe does.
	DefaultTTL = 24 * time.Hour
	// DefaultWait is how long a concurrent duplicate waits for the first
	// call's outcome (Options.Wait).
	DefaultWait = 10 * time.Second
	// MaxKeyLength is the longest key accepted, in bytes, as Stripe's.
	MaxKeyLength = 255
	// DefaultHeader is the header field of the default key
	// (Options.Key).
	DefaultHeader = "Idempotency-Key"
)

// The application error codes of this package (outside the range
// JSON-RPC reserves, -32768 to -32000).
const (
	// CodeKeyReused answers a key used again for a different request: a
	// different method or params, or a notification where the first was
	// a request (or the reverse), within the same scope.
	CodeKeyReused parser.Code = -31001
	// CodeInProgress answers a duplicate of a call still running, when
	// it may not wait (Options.Wait < 0, or an inline call) or waited
	// Options.Wait in vain. The caller retries later with the same key.
	CodeInProgress parser.Code = -31002
)

// The errors this package answers with; errors.Is matches them by code.
var (
	ErrKeyReused  = &handler.Error{Code: CodeKeyReused, Message: "Idempotency key reused with a different request"}
	ErrInProgress = &handler.Error{Code: CodeInProgress, Message: "A request with this idempotency key is in progress"}
	// ErrKeyTooLong answers a key longer than MaxKeyLength, with
	// parser.CodeInvalidRequest.
	ErrKeyTooLong = &handler.Error{Code: parser.CodeInvalidRequest, Message: "Invalid Request: idempotency key longer than 255 bytes"}
	// ErrFull answers a new key when every entry of a full Store is in
	// flight, with parser.CodeServerBusy: the call does not run
	// unprotected.
	ErrFull = &handler.Error{Code: parser.CodeServerBusy, Message: "Server busy: too many requests in progress"}
)

// Options configure a Store. The zero Options are the documented
// defaults.
type Options struct {
	// Key returns the call's idempotency key, or ok false for a call
	// without one, which runs as if there were no Store. The key may be
	// a view of the call's buffers: the Store copies it. Default:
	// HeaderKey(DefaultHeader), the Idempotency-Key header of the HTTP
	// request (a WebSocket's upgrade request: use ParamKey there).
	Key func(ctx context.Context, call *handler.Call) (key string, ok bool)
	// Scope returns the scope the key belongs to: keys of different
	// scopes never meet. ok false runs the call as if it had no key.
	// Default: DefaultScope — the caller's principal, else its IP address.
	Scope func(ctx context.Context) (scope string, ok bool)
	// MaxEntries bounds the keys kept; DefaultMaxEntries when ≤ 0. When
	// full, the oldest completed entries make room for new ones.
	MaxEntries int
	// MaxBytes bounds the bytes kept — each complete entry's result,
	// key, scope and entryOverhead — DefaultMaxBytes when ≤ 0: keeping
	// an outcome that takes the total past it drops the oldest complete
	// entries first, and an outcome larger than MaxBytes alone is not
	// kept (its retries run again, as a call without a key would).
	MaxBytes int
	// TTL is how long a key is kept after its first call began;
	// DefaultTTL when ≤ 0. A key that expired is new again.
	TTL time.Duration
	// Wait is how long a duplicate of a call still running waits for its
	// outcome (and then answers with it), within its own context's
	// deadline; DefaultWait when 0. A negative Wait refuses such a
	// duplicate at once with ErrInProgress, as is every inline call's
	// (handler.Call.Inline: it runs on an event loop and must not block).
	Wait time.Duration
	// CacheError decides whether a call that failed with err (code its
	// code) keeps its key, so that retries get the same error; nil keeps
	// none: a retry after an error runs the method again, as does a
	// duplicate waiting for it. Successes are always kept.
	CacheError func(code parser.Code, err error) bool
}

// Store is the idempotency interceptor and the outcomes it keeps. Its
// methods are safe from any goroutine.
type Store struct {
	key        func(context.Context, *handler.Call) (string, bool) // immutable; never nil
	scope      func(context.Context) (string, bool)                // immutable; never nil
	max        int                                                 // immutable
	maxBytes   int                                                 // immutable
	ttl        time.Duration                                       // immutable
	wait       time.Duration                                       // immutable
	cacheError func(parser.Code, error) bool                       // immutable

	mu         sync.Mutex
	entries    map[entryKey]*entry // guarded by mu
	bytes      int                 // the sizes of the complete entries; guarded by mu
	head, tail *entry              // the entries in order of creation; guarded by mu
}

// entryKey names an entry: a key within its scope.
type entryKey struct{ scope, key string }

// entry is one key's record.
type entry struct {
	k          entryKey      // immutable; copies, not views
	hash       uint64        // the request's fingerprint (fingerprint); immutable
	created    time.Time     // immutable
	done       chan struct{} // closed once the outcome is known (or the entry dropped)
	complete   bool          // the outcome is kept; guarded by mu
	result     []byte        // the result, once complete and a success; immutable then
	err        error         // the error, once complete and a failure; immutable then
	prev, next *entry        // guarded by mu
	linked     bool          // in the map and the list; guarded by mu
	size       int           // the bytes it keeps once complete (entryOverhead and up); guarded by mu
}

// entryOverhead is what an entry costs besides its result, key and
// scope, as MaxBytes counts it: the entry, its map slot, its channel.
const entryOverhead = 256

// New returns a Store with opts, defaulted.
func New(opts Options) *Store {
	s := &Store{
		key: opts.Key, scope: opts.Scope, max: opts.MaxEntries, maxBytes: opts.MaxBytes, ttl: opts.TTL,
		wait: opts.Wait, cacheError: opts.CacheError,
		entries: make(map[entryKey]*entry),
	}
	if s.key == nil {
		s.key = HeaderKey(DefaultHeader)
	}
	if s.scope == nil {
		s.scope = DefaultScope
	}
	if s.max <= 0 {
		s.max = DefaultMaxEntries
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultMaxBytes
	}
	if s.ttl <= 0 {
		s.ttl = DefaultTTL
	}
	if s.wait == 0 {
		s.wait = DefaultWait
	}
	return s
}

// Len returns the number of keys kept, in flight or complete.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Intercept is the interceptor (handler.Table.Use). A call without a key
// runs as usual, with no allocation beyond the Key and Scope funcs'.
// The first call of a key runs, and its outcome is kept; a later call
// with the same key and request is answered that outcome without
// running, or, while the first still runs, waits for it (Options.Wait);
// one with the same key and another request is answered ErrKeyReused.
func (s *Store) Intercept(ctx context.Context, call *handler.Call) error {
	if call.Fault() != 0 {
		return nil
	}
	key, ok := s.key(ctx, call)
	if !ok {
		return nil
	}
	if len(key) > MaxKeyLength {
		return ErrKeyTooLong
	}
	scope, ok := s.scope(ctx)
	if !ok {
		return nil
	}
	h := fingerprint(call.Method(), call.Notification(), call.Params())
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		now := time.Now()
		s.mu.Lock()
		e := s.entries[entryKey{scope, key}]
		if e != nil && e.complete && now.Sub(e.created) >= s.ttl {
			s.unlinkLocked(e)
			e = nil
		}
		if e == nil {
			e, err := s.addLocked(entryKey{strings.Clone(scope), strings.Clone(key)}, h, now)
			s.mu.Unlock()
			if err != nil {
				return err
			}
			s.run(ctx, call, e)
			return nil
		}
		complete, result, err := e.complete, e.result, e.err
		s.mu.Unlock()
		switch {
		case e.hash != h:
			return ErrKeyReused
		case complete && err != nil:
			return err
		case complete:
			call.Answer(result) // nil for a notification's, which has no reply
			return nil
		case s.wait < 0 || call.Inline():
			return ErrInProgress
		}
		if timer == nil {
			timer = time.NewTimer(s.wait)
		}
		select {
		case <-e.done: // kept or dropped: look again
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return ErrInProgress
		}
	}
}

// run runs the first call of e's key and settles e with its outcome:
// kept, or dropped (an error not cached, a panic inside).
func (s *Store) run(ctx context.Context, call *handler.Call, e *entry) {
	var (
		keep   bool
		result []byte
		err    error
	)
	defer func() { // also when an interceptor inside panics: the key is not left in flight
		s.mu.Lock()
		if size := entryOverhead + len(result) + len(e.k.key) + len(e.k.scope); keep && size <= s.maxBytes && e.linked {
			e.complete, e.result, e.err, e.size = true, result, err, size
			s.bytes += size
			for old := s.head; s.bytes > s.maxBytes && old != nil; { // the oldest complete ones make room
				next := old.next
				if old.complete && old != e {
					s.unlinkLocked(old)
				}
				old = next
			}
		} else {
			s.unlinkLocked(e)
		}
		s.mu.Unlock()
		close(e.done)
	}()
	call.Next(ctx)
	if code := call.Code(); code != 0 {
		if s.cacheError != nil && s.cacheError(code, call.Err()) {
			err, keep = call.Err(), true
		}
		return
	}
	if r := call.Result(); r != nil {
		result = append(make([]byte, 0, len(r)), r...)
	}
	keep = true
}

// addLocked adds a new entry in flight for k, making room if the store
// is full; ErrFull when every entry is in flight.
func (s *Store) addLocked(k entryKey, h uint64, now time.Time) (*entry, error) {
	for e := s.head; e != nil && (len(s.entries) >= s.max || now.Sub(e.created) >= s.ttl); {
		next := e.next
		if e.complete {
			s.unlinkLocked(e)
		}
		e = next
	}
	if len(s.entries) >= s.max {
		return nil, ErrFull
	}
	e := &entry{k: k, hash: h, created: now, done: make(chan struct{}), linked: true, prev: s.tail}
	if s.tail != nil {
		s.tail.next = e
	} else {
		s.head = e
	}
	s.tail = e
	s.entries[k] = e
	return e, nil
}

// unlinkLocked drops e from the map and the list.
func (s *Store) unlinkLocked(e *entry) {
	if !e.linked {
		return
	}
	e.linked = false
	s.bytes -= e.size
	if s.entries[e.k] == e {
		delete(s.entries, e.k)
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		s.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// fingerprint hashes what makes two calls the same request: the method,
// whether it is a notification, and the params with the white space
// outside strings left out (FNV-1a, 64 bits). A collision could only
// make a caller's own different request look like its retry.
func fingerprint(method string, notification bool, params []byte) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < len(method); i++ {
		h = (h ^ uint64(method[i])) * prime
	}
	h = (h ^ 0) * prime
	if notification {
		h = (h ^ 1) * prime
	}
	inString, escaped := false, false
	for _, c := range params {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c == '"':
			inString = true
		}
		h = (h ^ uint64(c)) * prime
	}
	return h
}
