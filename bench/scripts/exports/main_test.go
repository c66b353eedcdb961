package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// exported lists what go doc -all lists: top-level names (each of a
// group), methods of exported types, exported fields and interface
// methods, embedded ones by their type's name; not test files, not
// unexported receivers.
func TestExported_countsAsGoDocLists(t *testing.T) {
	dir := t.TempDir()
	src := `package p

const (
	A = 1
	b = 2
	C, D = 3, 4
)

var E, f int

type T struct {
	X, y int
	Z
	*W
}

type Z struct{}
type W struct{}
type t2 struct{ Q int }

type I interface {
	M()
	n()
}

func (T) Method()    {}
func (*T) method()   {}
func (t2) Exported() {}
func F()             {}
func g()             {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc Test() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exported(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A", "C", "D", "E", "F", "I", "I.M", "T", "T.Method", "T.W", "T.X", "T.Z", "W", "Z"}
	if !slices.Equal(got, want) {
		t.Errorf("exported = %q\nwant       %q", got, want)
	}
}
