package testreq

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		env  string
		want bool
	}{{"", false}, {"gcc", false}, {"root", true}, {"gcc, root", true}, {"all", true}, {"rooted", false}} {
		t.Setenv(Env, c.env)
		if got := Required(Root); got != c.want {
			t.Errorf("%s=%q: Required(root) = %v", Env, c.env, got)
		}
	}
	// all is the machine, not the artifacts other targets build: go test ./... under
	// .ci/run's all must still skip the e2e tests that need the collector.
	t.Setenv(Env, "all")
	if Required(Dist) || Required(ARM64) || !Required(GCC) {
		t.Error("all must cover the machine prerequisites and no artifact")
	}
	// all is CI's machine: its kernel features and the absences its expectations are written
	// for, not the rig's output (the DRM device is the rig's).
	if !Required(BTF) || !Required(Tracefs) || !Required(NoFentry) || !Required(NoDRM) || Required(VGPU) {
		t.Error("all must cover the kernel features and absences of CI's machine, not the rig")
	}
	t.Setenv(Env, "root,dist")
	if !Required(Dist) || Required(Jaeger) {
		t.Error("an artifact is required by name")
	}
}

// Skip run in a child process: it skips (exit 0, SKIP) when root is not required and fails
// (exit 1, the reason) when it is.
func TestSkipFailsWhenRequired(t *testing.T) {
	if os.Getenv("TESTREQ_CHILD") == "1" {
		Skip(t, Root, "the reason")
		return
	}
	for _, c := range []struct {
		env, want string
		fails     bool
	}{{"", "--- SKIP", false}, {"root", "requires root, but: the reason", true}, {"all", "requires root", true}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSkipFailsWhenRequired$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTREQ_CHILD=1", Env+"="+c.env)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fails || !strings.Contains(string(out), c.want) {
			t.Errorf("%s=%q: err %v, output:\n%s", Env, c.env, err, out)
		}
	}
}
