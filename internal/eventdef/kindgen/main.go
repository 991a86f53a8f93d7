// Command kindgen writes internal/event/kinds_drivers.go, the event.Kind constants of
// drivers' own events, from the event table: every row of internal/eventdef/table.go that
// names its kind (KindName) defines the constant its Kind field refers to, in table order.
// It reads the table's source (go/ast), not the compiled package, so a new row that
// refers to a constant not yet generated still generates it. `go generate ./internal/event`
// (make generate) runs it.

package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
)

// kind is one generated constant.
type kind struct {
	constant, name, driver string
	events                 []string // the row's event names
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: kindgen path/to/eventdef/table.go path/to/event/event.go path/to/event/kinds_drivers.go")
		os.Exit(2)
	}
	core, err := coreKinds(os.Args[2])
	if err == nil {
		var kinds []kind
		if kinds, err = tableKinds(os.Args[1], core); err == nil {
			err = os.WriteFile(os.Args[3], source(kinds), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kindgen:", err)
		os.Exit(1)
	}
}

// coreKinds are the constants event.go declares itself (the kinds of no driver's own).
func coreKinds(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					out[n.Name] = true
				}
			}
		}
	}
	return out, nil
}

// tableKinds reads the rows of `var events = []Event{...}` that define a kind.
func tableKinds(path string, core map[string]bool) ([]kind, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, err
	}
	var rows []ast.Expr
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok && len(v.Names) == 1 && v.Names[0].Name == "events" && len(v.Values) == 1 {
			if c, ok := v.Values[0].(*ast.CompositeLit); ok {
				rows = c.Elts
			}
		}
		return rows == nil
	})
	if rows == nil {
		return nil, fmt.Errorf("%s: no `var events = []Event{...}`", path)
	}
	var out []kind
	seen := map[string]int{}
	for _, r := range rows {
		c, ok := r.(*ast.CompositeLit)
		if !ok {
			continue // one(...), known(...), knownDriver(...): core kinds or none
		}
		var k kind
		for _, e := range c.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			switch key := kv.Key.(*ast.Ident).Name; key {
			case "Kind":
				if s, ok := kv.Value.(*ast.SelectorExpr); ok {
					k.constant = s.Sel.Name
				}
			case "KindName", "Driver":
				lit, ok := kv.Value.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return nil, fmt.Errorf("%s: %s must be a string literal", fset.Position(kv.Pos()), key)
				}
				v, _ := strconv.Unquote(lit.Value)
				if key == "KindName" {
					k.name = v
				} else {
					k.driver = v
				}
			case "Names":
				ast.Inspect(kv.Value, func(n ast.Node) bool {
					// A Name is {name, kernels}: its first string.
					if c, ok := n.(*ast.CompositeLit); ok && len(c.Elts) > 0 {
						first := c.Elts[0]
						if kv, ok := first.(*ast.KeyValueExpr); ok {
							first = kv.Value
						}
						if lit, ok := first.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							v, _ := strconv.Unquote(lit.Value)
							k.events = append(k.events, v)
							return false
						}
					}
					return true
				})
			}
		}
		pos := fset.Position(c.Pos())
		switch {
		case k.constant == "" || core[k.constant] && k.name == "":
			continue
		case core[k.constant]:
			return nil, fmt.Errorf("%s: KindName %q on event.%s, a kind internal/event/event.go declares itself", pos, k.name, k.constant)
		case k.name == "":
			return nil, fmt.Errorf("%s: event.%s is no kind of internal/event/event.go: give the row KindName, the kind's name in ghostdriver.event.kind (lower case, _-separated)", pos, k.constant)
		case !validName(k.name):
			return nil, fmt.Errorf("%s: KindName %q: lower case letters, digits and _", pos, k.name)
		}
		if i, dup := seen[k.constant]; dup {
			if out[i].name != k.name {
				return nil, fmt.Errorf("%s: event.%s named %q here and %q before", pos, k.constant, k.name, out[i].name)
			}
			continue
		}
		for _, o := range out {
			if o.name == k.name {
				return nil, fmt.Errorf("%s: KindName %q is event.%s's too", pos, k.name, o.constant)
			}
		}
		seen[k.constant] = len(out)
		out = append(out, k)
	}
	return out, nil
}

func validName(s string) bool {
	for _, c := range s {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

func source(kinds []kind) []byte {
	var b bytes.Buffer
	b.WriteString(`// Code generated from internal/eventdef/table.go by internal/eventdef/kindgen (go generate ./internal/event); DO NOT EDIT.

// The kinds of drivers' own events: one per event table row that names its kind
// (eventdef.Event.KindName), in table order, after the core's kinds (event.go).

package event

const (
`)
	for i, k := range kinds {
		fmt.Fprintf(&b, "\t%s", k.constant)
		if i == 0 {
			b.WriteString(" Kind = firstDriverKind + iota")
		}
		fmt.Fprintf(&b, " // %s: %s\n", k.driver, strings.Join(k.events, ", "))
	}
	b.WriteString("\n\tendDriverKinds // the core's kinds go on after the drivers' (event.go)\n)\n\n")
	b.WriteString("// driverKindNames are the drivers' kinds' names, from firstDriverKind on.\n")
	b.WriteString("var driverKindNames = [endDriverKinds - firstDriverKind]string{\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "\t%s - firstDriverKind: %q,\n", k.constant, k.name)
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return out
}
