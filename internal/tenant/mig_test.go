// MIG attribution from the capability files a CUDA process holds open.
package tenant

import (
	"os"
	"reflect"
	"testing"
)

func TestParseMigMinors(t *testing.T) {
	b, err := os.ReadFile("testdata/proc/driver/nvidia-caps/mig-minors")
	if err != nil {
		t.Fatal(err)
	}
	m := ParseMigMinors(b)
	for minor, want := range map[int]MIGInstance{
		3:   {GPUMinor: 0, GI: 0, CI: -1},
		4:   {GPUMinor: 0, GI: 0, CI: 0},
		21:  {GPUMinor: 0, GI: 2, CI: -1},
		22:  {GPUMinor: 0, GI: 2, CI: 0},
		138: {GPUMinor: 1, GI: 0, CI: -1},
	} {
		if m[minor] != want {
			t.Errorf("minor %d = %+v, want %+v", minor, m[minor], want)
		}
	}
	if _, ok := m[1]; ok {
		t.Error("config capability taken for a MIG instance")
	}
}

func TestMIGFromCapLinks(t *testing.T) {
	minors := map[int]MIGInstance{21: {0, 2, -1, ""}, 22: {0, 2, 0, ""}, 30: {0, 3, -1, ""}}
	cases := []struct {
		links []string
		want  []string
	}{
		// devfs mode: GI + CI access held: the CI is the instance.
		{[]string{"/dev/nvidia-caps/nvidia-cap21", "/dev/nvidia-caps/nvidia-cap22"}, []string{"gpu0/gi2/ci0"}},
		// only the GI.
		{[]string{"/dev/nvidia-caps/nvidia-cap30"}, []string{"gpu0/gi3"}},
		// procfs mode: the capability path itself names the instance.
		{[]string{"/proc/driver/nvidia/capabilities/gpu1/mig/gi4/access", "/proc/driver/nvidia/capabilities/gpu1/mig/gi4/ci1/access"}, []string{"gpu1/gi4/ci1"}},
		// config/monitor capabilities and unknown minors say nothing.
		{[]string{"/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-caps/nvidia-cap999", "/proc/driver/nvidia/capabilities/mig/config"}, nil},
	}
	for _, c := range cases {
		var got []string
		for _, m := range migFromCapLinks(c.links, minors) {
			got = append(got, m.String())
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v → %v, want %v", c.links, got, c.want)
		}
	}
}
