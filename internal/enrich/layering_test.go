package enrich

import (
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/ghostdriver/ghostdriver/"

// deps adds pkg (an import path) to seen and, recursively, the imports of the module's
// packages it reaches, read from their source (non-test files of this GOOS/GOARCH).
func deps(t *testing.T, pkg string, seen map[string]bool) {
	t.Helper()
	if seen[pkg] {
		return
	}
	seen[pkg] = true
	if !strings.HasPrefix(pkg, module) {
		return
	}
	p, err := build.ImportDir(filepath.Join("..", "..", strings.TrimPrefix(pkg, module)), 0)
	if err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	for _, imp := range p.Imports {
		deps(t, imp, seen)
	}
}

// The data flows source → decode → assemble → enrich → emit (docs/design.md): the
// assembler reaches nothing of tenant, enrich or emit and no pdata or BPF; the attribute
// and tier models below the stages reach no pdata; enrich does not import emit.
func TestStagesImportDownward(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"internal/assemble": {module + "internal/tenant", module + "internal/enrich", module + "internal/emit", "go.opentelemetry.io/collector/pdata", "github.com/cilium/ebpf"},
		"internal/attr":     {module + "internal/tenant", "go.opentelemetry.io/collector/pdata"},
		"internal/ctxtier":  {module + "internal/tenant", module + "internal/emit", "go.opentelemetry.io/collector/pdata"},
	} {
		seen := map[string]bool{}
		deps(t, module+pkg, seen)
		for dep := range seen {
			for _, b := range banned {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}

	// enrich's own files import no emit (the package is checked file by file so that a
	// platform-specific file counts too).
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range append(p.GoFiles, p.IgnoredGoFiles...) {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if imp == module+"internal/emit" || strings.HasPrefix(imp, module+"internal/emit/") {
				t.Errorf("internal/enrich/%s imports %s", name, imp)
			}
		}
	}
}
