package handler

// RateLimit limits how fast clients may call, in cost units: every call
// and every notification — each element of a batch alone — spends its
// method's cost (Cost; 1 by default) from token buckets. The zero value
// limits nothing.
type RateLimit struct {
	// Rate is the cost units per second each client identity may spend,
	// and Burst how many it may spend at once (the bucket's size). A
	// client is identified by Meta.Principal when its transport's
	// Authorizer named one, else by its remote IP address (see Identity).
	// Rate 0 means no per-identity limit.
	Rate  float64
	Burst int
	// ConnRate and ConnBurst are the same for each connection alone
	// (for transports that keep a Quota per connection). ConnRate 0 means
	// no per-connection limit.
	ConnRate  float64
	ConnBurst int
	// MaxIdentities bounds the identities tracked at once; 0 means
	// DefaultMaxIdentities.
	MaxIdentities int
	// Identity, when set, names the client of a call instead of the
	// principal or the remote IP (a header set by a trusted proxy, say).
	// It runs for every call and must not block; "" means the default.
	Identity func(m *Meta) string
}
