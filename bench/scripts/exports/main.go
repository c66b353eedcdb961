// Command exports counts a package's exported identifiers as go doc -all
// lists them: top-level names (each constant and variable of a group),
// methods of exported types, and exported fields and interface methods of
// exported types. Test files are left out.
//
//	go run ./bench/scripts/exports [-v] DIR...
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "list the names")
	flag.Parse()
	for _, dir := range flag.Args() {
		names, err := exported(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%d\t%s\n", len(names), dir)
		if *verbose {
			for _, n := range names {
				fmt.Println("\t" + n)
			}
		}
	}
}

func exported(dir string) ([]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, pkg := range pkgs {
		if pkg.Name == "main" {
			continue
		}
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						names = append(names, d.Name.Name)
						continue
					}
					if r := recvName(d.Recv.List[0].Type); ast.IsExported(r) {
						names = append(names, r+"."+d.Name.Name)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									names = append(names, n.Name)
								}
							}
						case *ast.TypeSpec:
							if !s.Name.IsExported() {
								continue
							}
							names = append(names, s.Name.Name)
							names = append(names, members(s.Name.Name, s.Type)...)
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

func members(typ string, e ast.Expr) []string {
	var fields *ast.FieldList
	switch t := e.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range fields.List {
		for _, n := range f.Names {
			if n.IsExported() {
				out = append(out, typ+"."+n.Name)
			}
		}
		if len(f.Names) == 0 { // embedded
			if n := recvName(f.Type); ast.IsExported(n) {
				out = append(out, typ+"."+n)
			} else if se, ok := f.Type.(*ast.SelectorExpr); ok && se.Sel.IsExported() {
				out = append(out, typ+"."+se.Sel.Name)
			}
		}
	}
	return out
}
