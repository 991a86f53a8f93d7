// Re-discovery's bounds on a fake procfs: a process without a thread context that keeps
// submitting is checked at most once per Config.Rediscover, and its changed modules are
// searched at most maxRediscoveries times; everything else is counted as rate limited.
package enrich

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
)

// mapFiles gives pid a maps file mapping n plain files (no ELF: they define nothing) and
// this host's root.
func mapFiles(t *testing.T, fs procfs, pid uint32, n int) {
	t.Helper()
	dir := filepath.Join(fs.root, fmt.Sprint(pid))
	var maps string
	for i := 0; i < n; i++ {
		f := filepath.Join(fs.root, fmt.Sprintf("lib%d.so", i))
		if err := os.WriteFile(f, []byte("not ELF"), 0o644); err != nil {
			t.Fatal(err)
		}
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

func (e *Enricher) waitRediscoveryIdle(t *testing.T, pid uint32) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		e.mu.Lock()
		busy := e.procs[pid].rediscovery
		e.mu.Unlock()
		if !busy {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("re-discovery never finished")
}

func TestRediscoveryBounds(t *testing.T) {
	const pid, every = 52001, 100 * time.Millisecond
	fs := procfs{t: t, root: t.TempDir()}
	tc := tenant.DefaultConfig()
	tc.ProcRoot, tc.SysRoot = fs.root, fs.root
	e := New(Config{Rediscover: every}, tenant.NewResolver(tc), &fakeKernel{}, nil)
	t.Cleanup(e.Close)
	fs.run(pid, 100, "trainer")
	mapFiles(t, fs, pid, 1)
	firstSight(e, pid)
	waitLoaded(t, e, pid)

	// Unchanged modules, a submit every 5 ms for 400 ms.
	start := time.Now()
	triggers := 0
	for time.Since(start) < 4*every {
		e.Observe([]event.Event{ioctl(pid, 0)})
		triggers++
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	e.waitRediscoveryIdle(t, pid)
	st := e.Stats()
	checks := st.Rediscovery[RediscoveryNotFound]
	if limit := uint64(elapsed/every) + 1; checks == 0 || checks > limit {
		t.Errorf("%d checks in %v, want 1..%d (one per %v)", checks, elapsed, limit, every)
	}
	if st.Rediscovery[RediscoveryFound] != 0 || checks+st.Rediscovery[RediscoveryRateLimited] != uint64(triggers) {
		t.Errorf("outcomes %v for %d triggers: every trigger counted once", st.Rediscovery, triggers)
	}
	e.mu.Lock()
	searched := e.procs[pid].rediscovered
	e.mu.Unlock()
	if searched != 0 {
		t.Errorf("%d module searches with unchanged maps", searched)
	}

	// Modules change before every check: at most maxRediscoveries searches.
	for i := 0; i < maxRediscoveries+4; i++ {
		mapFiles(t, fs, pid, i+2)
		time.Sleep(every + 10*time.Millisecond)
		e.Observe([]event.Event{ioctl(pid, 0)})
		e.waitRediscoveryIdle(t, pid)
	}
	e.mu.Lock()
	searched = e.procs[pid].rediscovered
	e.mu.Unlock()
	if searched != maxRediscoveries {
		t.Errorf("%d searches of changed modules, bound %d", searched, maxRediscoveries)
	}
}
