package ratelimit

// NOTE: the identity table of the limiter (limiter.go). An
// identity is named by an idKey, which keyOf builds for a call: its kind
// and, as the kind says, an address (an IPv4 address, the /64 prefix of
// an IPv6 one), a name (a principal, Limits.Identity's), or nothing
// (local, a shard's overflow).
//
// The identity table: shards, each a map guarded by its mutex and
// holding at most perShard identities. A shard that is full makes room
// by evicting an identity whose bucket is full again — its tat is swapped
// to evictedTAT, so that a Quota that cached it looks it up again — and,
// when the few it samples are all in use, gives the new identity the
// shard's shared overflow bucket instead.

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"net"
	"net/netip"
	"strings"
	"sync"
)

// Identity kinds (idKey.kind).
const (
	kindLocal     = iota // no principal, no IP address
	kindIPv4             // lo: the address
	kindIPv6             // hi: the /64 prefix
	kindPrincipal        // name: Caller.Principal
	kindCustom           // name: Limits.Identity's
	kindOverflow         // a shard's overflow bucket; never a call's
)

// idKey names an identity.
type idKey struct {
	kind   uint8
	hi, lo uint64
	name   string
}

// equal reports whether k and o are the same identity. Kept inlinable.
func (k *idKey) equal(o *idKey) bool {
	return k.lo == o.lo && k.hi == o.hi && k.kind == o.kind && k.name == o.name
}

// keyOf sets the zero *k to the identity of the call of ctx and c.
func (l *Limiter) keyOf(ctx context.Context, c *Caller, k *idKey) {
	if l.identity != nil {
		if s := l.identity(ctx); s != "" {
			k.kind, k.name = kindCustom, s
			return
		}
	}
	if c.Principal != "" {
		k.kind, k.name = kindPrincipal, c.Principal
		return
	}
	if c.Addr != nil {
		k.setAddr(c.Addr.ClientIP())
	}
}

// setAddr sets the zero *k to the identity of the IP address a: the
// address for IPv4, its /64 for IPv6; local for the zero Addr.
func (k *idKey) setAddr(a netip.Addr) {
	switch {
	case a.Is4():
		b := a.As4()
		k.kind, k.lo = kindIPv4, uint64(binary.BigEndian.Uint32(b[:]))
	case a.Is6():
		b := a.As16()
		k.kind, k.hi = kindIPv6, binary.BigEndian.Uint64(b[:8])
	}
}

// setIP sets the zero *k to the identity of the IP address ip: the
// address for IPv4 (mapped IPv6 included), its /64 for IPv6; local for
// no address.
func (k *idKey) setIP(ip net.IP) {
	switch len(ip) {
	case net.IPv4len:
		k.kind, k.lo = kindIPv4, uint64(binary.BigEndian.Uint32(ip))
	case net.IPv6len:
		hi, lo := binary.BigEndian.Uint64(ip[:8]), binary.BigEndian.Uint64(ip[8:])
		if hi == 0 && lo>>32 == 0xffff {
			k.kind, k.lo = kindIPv4, lo&0xffff_ffff
		} else {
			k.kind, k.hi = kindIPv6, hi
		}
	}
}

// ipKey returns the identity of the IP address ip (idKey.setIP).
func ipKey(ip net.IP) idKey {
	var k idKey
	k.setIP(ip)
	return k
}

// shard is one part of the identity table.
type shard struct {
	mu       sync.Mutex
	ids      map[idKey]*identity // guarded by mu; at most Limiter.perShard
	overflow identity            // shared by the new identities that found ids full
	_        [64]byte            // keeps the next shard's mutex off this cache line
}

// identity is a tracked client identity and its bucket.
type identity struct {
	key idKey // immutable; its name is the identity's own copy
	bucket
}

// shardOf returns the shard of the identity k.
func (l *Limiter) shardOf(k *idKey) *shard {
	var h uint64
	if k.name != "" {
		h = maphash.String(l.seed, k.name)
	} else {
		var b [17]byte
		b[0] = k.kind
		binary.LittleEndian.PutUint64(b[1:], k.hi)
		binary.LittleEndian.PutUint64(b[9:], k.lo)
		h = maphash.Bytes(l.seed, b[:])
	}
	return &l.shards[h&uint64(len(l.shards)-1)]
}

// lookup returns the identity k, tracked from now on if it was not and
// its shard has room (making room if it can), else its shard's overflow
// identity. It allocates only to track a new identity.
func (l *Limiter) lookup(k idKey, now int64) *identity {
	s := l.shardOf(&k)
	s.mu.Lock()
	id := s.ids[k]
	if id == nil {
		id = s.addLocked(k, now, l.perShard)
	}
	s.mu.Unlock()
	return id
}

// addLocked tracks the new identity k in s, which holds at most max
// identities, evicting one if it must; it returns the overflow identity
// if it cannot.
func (s *shard) addLocked(k idKey, now int64, max int) *identity {
	if len(s.ids) >= max && !s.evictLocked(now) {
		return &s.overflow
	}
	k.name = strings.Clone(k.name) // it may be a view of a request
	id := &identity{key: k}
	s.ids[k] = id
	return id
}

// evictLocked evicts one of the first evictSample identities of s (in
// the map's random order) whose bucket is full at now, and reports
// whether it found one.
func (s *shard) evictLocked(now int64) bool {
	n := 0
	for k, id := range s.ids {
		if tat := id.tat.Load(); tat <= now && id.tat.CompareAndSwap(tat, evictedTAT) {
			delete(s.ids, k)
			return true
		}
		if n++; n == evictSample {
			break
		}
	}
	return false
}

// size returns the number of identities tracked.
func (l *Limiter) size() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.ids)
		s.mu.Unlock()
	}
	return n
}
