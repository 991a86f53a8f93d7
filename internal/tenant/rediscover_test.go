// SearchThreadContext: a re-search opens nothing while a process's mapped modules are the
// set its last search saw, searches again when they changed, and says when the process is
// gone. Fake procfs; the mapped "modules" are plain files (not ELF: they define nothing).
package tenant

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// fakeMaps gives pid a maps file mapping each of files executable, and a root that is
// this host's.
func fakeMaps(t *testing.T, root string, pid int, files ...string) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(pid))
	var maps string
	for i, f := range files {
		maps += fmt.Sprintf("7f00%08x-7f00%08x r-xp 00000000 fd:01 %d    %s\n", i<<16, (i+1)<<16, 1000+i, f)
	}
	if err := os.WriteFile(filepath.Join(dir, "maps"), []byte(maps), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "root")); err != nil {
		if err := os.Symlink("/", filepath.Join(dir, "root")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSearchThreadContextOnlyWhenModulesChange(t *testing.T) {
	root, mods := t.TempDir(), t.TempDir()
	a, b := filepath.Join(mods, "liba.so"), filepath.Join(mods, "libb.so")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte("not an ELF file"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fakePid(t, root, 700, 100, "trainer")
	fakeMaps(t, root, 700, a)
	cfg := DefaultConfig()
	cfg.ProcRoot, cfg.SysRoot = root, root
	r := NewResolver(cfg)
	p, err := r.Process(700)
	if err != nil || p.ThreadContextTLS != nil || p.Modules == 0 {
		t.Fatalf("first read: %+v, %v; want no recipe and a module fingerprint", p, err)
	}

	// Same modules: nothing is searched.
	if _, err := r.SearchThreadContext(p); !errors.Is(err, ErrModulesUnchanged) {
		t.Fatalf("unchanged modules: err %v", err)
	}
	// A library mapped since: searched (it defines nothing either), a new fingerprint,
	// and the cache serves the new snapshot.
	fakeMaps(t, root, 700, a, b)
	n, err := r.SearchThreadContext(p)
	if !errors.Is(err, appctx.ErrNoTLSSymbol) || n.Modules == p.Modules || n == p {
		t.Fatalf("changed modules: %v, fingerprint %x (was %x)", err, n.Modules, p.Modules)
	}
	if c, _ := r.Process(700); c != n {
		t.Error("the cache still serves the old snapshot")
	}
	if _, err := r.SearchThreadContext(n); !errors.Is(err, ErrModulesUnchanged) {
		t.Errorf("searched again without a change: %v", err)
	}
	// Gone.
	if err := os.RemoveAll(filepath.Join(root, "700")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SearchThreadContext(n); !errors.Is(err, ErrNoProcess) {
		t.Errorf("exited process: err %v", err)
	}
}
