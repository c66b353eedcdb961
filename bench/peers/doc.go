// Package peers holds what compares jetrpc with other JSON-RPC software:
// interoperability tests with real third-party clients, and (later) the
// peer servers of the side-by-side benchmark. It is a module of its own so
// that their dependencies (go-ethereum and others) stay out of jetrpc's.
package peers
