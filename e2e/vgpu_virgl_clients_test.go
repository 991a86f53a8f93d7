// The virgl rig's own readings of what the kernel says about the client's DRM files and of
// the receiver's refusals, for TestVirglRigGroundTruth: drm-clients.txt (the guest script's
// read of /proc/<pid>/fdinfo and DRM debugfs while each client runs, testdata/vgpu/virgl/init
// drm_clients) and records-jobs.txt (`live --records jobs` in the guest, which must refuse
// virtio_gpu).

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// virglClients is what the kernel said of one client process's DRM files.
type virglClients struct {
	fdinfo  []uint64 // drm-client-id of each /dev/dri fd (fdinfo), where the driver prints one
	debugfs []uint64 // the id column of DRM debugfs's clients table for the process, where printed
	files   int      // /dev/dri fds the process had open
}

var (
	virglClientsPid   = regexp.MustCompile(`^== pid (\d+) `)
	virglFdinfoID     = regexp.MustCompile(`^drm-client-id:\s+(\d+)$`)
	virglClientsTable = regexp.MustCompile(`^-- /sys/kernel/debug/dri/[^/]+/clients$`)
)

// readVirglClients reads drm-clients.txt: pid → what fdinfo and debugfs said.
func readVirglClients(t *testing.T, path string) map[int]*virglClients {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]*virglClients{}
	var cur *virglClients
	pid := 0
	idCol, tgidCol := -1, -1 // columns of the clients table being read (-1: not in one)
	for _, line := range strings.Split(string(b), "\n") {
		if m := virglClientsPid.FindStringSubmatch(line); m != nil {
			pid, _ = strconv.Atoi(m[1])
			cur = &virglClients{}
			out[pid] = cur
			idCol, tgidCol = -1, -1
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case strings.HasPrefix(line, "-- fd "):
			cur.files++
			idCol, tgidCol = -1, -1
		case virglClientsTable.MatchString(line):
			idCol, tgidCol = -2, -2 // the header comes next
		case strings.HasPrefix(line, "-- "):
			idCol, tgidCol = -1, -1
		case idCol == -2:
			// "command tgid dev master a uid magic [name id]" (6.1 prints pid, no id)
			idCol, tgidCol = -1, -1
			for i, f := range strings.Fields(line) {
				switch f {
				case "id":
					idCol = i
				case "tgid", "pid":
					tgidCol = i
				}
			}
		case tgidCol >= 0:
			f := strings.Fields(line)
			if len(f) > tgidCol && f[tgidCol] == strconv.Itoa(pid) && idCol >= 0 && len(f) > idCol {
				id, err := strconv.ParseUint(f[idCol], 10, 64)
				if err != nil {
					t.Errorf("%s: pid %d: clients row %q: %v", path, pid, line, err)
				}
				cur.debugfs = append(cur.debugfs, id)
			}
		default:
			if m := virglFdinfoID.FindStringSubmatch(line); m != nil {
				id, _ := strconv.ParseUint(m[1], 10, 64)
				cur.fdinfo = append(cur.fdinfo, id)
			}
		}
	}
	return out
}

// virglClientIDs is, per client process of the frame log, the DRM client id the kernel
// gave its one DRM file (0: the kernel names none: no drm-client-id in fdinfo, no id in
// debugfs). Every client must have been read, with one /dev/dri file; fdinfo and debugfs
// must agree where both print an id; and a kernel of 6.5 or later (drm_file.client_id)
// must have printed one, so that an oracle reading nothing cannot pass.
func virglClientIDs(t *testing.T, dir string, tr virglTruth) map[int]uint64 {
	t.Helper()
	cl := readVirglClients(t, filepath.Join(dir, "drm-clients.txt"))
	kver := virglHostValue(t, dir, "kver")
	major, minor := 0, 0
	if f := strings.SplitN(kver, ".", 3); len(f) >= 2 {
		major, _ = strconv.Atoi(f[0])
		minor, _ = strconv.Atoi(f[1])
	}
	hasClientID := major > 6 || major == 6 && minor >= 5
	out := map[int]uint64{}
	for _, fr := range tr.frames {
		if _, done := out[fr.pid]; done {
			continue
		}
		c := cl[fr.pid]
		if c == nil {
			t.Errorf("drm-clients.txt: no reading of client pid %d", fr.pid)
			out[fr.pid] = 0
			continue
		}
		if c.files != 1 {
			t.Errorf("drm-clients.txt: pid %d has %d /dev/dri files, want 1", fr.pid, c.files)
		}
		ids := append(append([]uint64(nil), c.fdinfo...), c.debugfs...)
		var id uint64
		for _, x := range ids {
			if id != 0 && x != id {
				t.Errorf("drm-clients.txt: pid %d: the kernel gave ids %v (fdinfo %v, debugfs %v)", fr.pid, ids, c.fdinfo, c.debugfs)
			}
			id = x
		}
		if hasClientID && id == 0 {
			t.Errorf("drm-clients.txt: kernel %s has drm_file.client_id, but neither fdinfo nor debugfs named pid %d's client", kver, fr.pid)
		}
		t.Logf("client pid %d: DRM client id %d (fdinfo %v, debugfs %v; kernel %s)", fr.pid, id, c.fdinfo, c.debugfs, kver)
		out[fr.pid] = id
	}
	return out
}

// virglHostValue is key's value in dir/host.txt (the rig's host-side facts).
func virglHostValue(t *testing.T, dir, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "host.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return v
		}
	}
	t.Fatalf("%s/host.txt: no %s=", dir, key)
	return ""
}

// checkVirglRecordsJobs: `live --records jobs` in the guest refused virtio_gpu (exit 1,
// before any client ran) and said why, instead of running without the jobs' fences (the
// guest stops a receiver that does not exit within 20 s: rc 124).
func checkVirglRecordsJobs(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "records-jobs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	if !strings.HasSuffix(s, "\nrc=1") {
		t.Errorf("records-jobs.txt: `live --records jobs` did not exit 1: %q", s[max(0, len(s)-300):])
	}
	want := `ghostdriver live: records "jobs" aggregates scheduler jobs in the kernel, and virtio_gpu has no scheduler`
	if !strings.Contains(s, want) {
		t.Errorf("records-jobs.txt lacks %q", want)
	}
}
