// fdinfo of DRM files as drivers print them (Documentation/gpu/drm-usage-stats.rst).
package tenant

import (
	"reflect"
	"testing"
)

func TestParseFdinfo(t *testing.T) {
	cases := []struct {
		from string
		in   string
		want DRMClient
		ok   bool
	}{
		{"amdgpu (Linux 6.x)", "pos:\t0\nflags:\t02100002\nmnt_id:\t1519\nino:\t647\ndrm-driver:\tamdgpu\ndrm-client-id:\t42\ndrm-pdev:\t0000:03:00.0\npasid:\t32775\n" +
			"drm-total-vram:\t3164 MiB\ndrm-memory-gtt: \t2048 KiB\ndrm-engine-gfx:\t2146513926 ns\ndrm-engine-compute:\t7213312 ns\n",
			DRMClient{Driver: "amdgpu", ClientID: 42, HasID: true, PDev: "0000:03:00.0",
				Engines: []DRMEngine{{"gfx", 2146513926, 1}, {"compute", 7213312, 1}}}, true},
		{"i915 with engine capacity", "drm-driver:\ti915\ndrm-pdev:\t0000:00:02.0\ndrm-client-id:\t157\n" +
			"drm-engine-render:\t9288864723 ns\ndrm-engine-copy:\t2035071108 ns\ndrm-engine-video:\t0 ns\ndrm-engine-capacity-video:\t2\ndrm-engine-video-enhance:\t0 ns\n",
			DRMClient{Driver: "i915", ClientID: 157, HasID: true, PDev: "0000:00:02.0",
				Engines: []DRMEngine{{"render", 9288864723, 1}, {"copy", 2035071108, 1}, {"video", 0, 2}, {"video-enhance", 0, 1}}}, true},
		{"xe with a client name (6.15+ DRM_IOCTL_SET_CLIENT_NAME), cycles not ns",
			"drm-driver:\txe\ndrm-client-id:\t7\ndrm-pdev:\t0000:00:02.1\ndrm-client-name:\tollama-runner\ndrm-cycles-rcs:\t28257900\ndrm-total-cycles-rcs:\t7655183225\n",
			DRMClient{Driver: "xe", ClientID: 7, HasID: true, PDev: "0000:00:02.1", ClientName: "ollama-runner"}, true},
		{"msm (platform device, no PCI)", "drm-driver:\tmsm\ndrm-client-id:\t3\ndrm-engine-gpu:\t123 ns\ndrm-cycles-gpu:\t456\ndrm-maxfreq-gpu:\t700000000 Hz\n",
			DRMClient{Driver: "msm", ClientID: 3, HasID: true, Engines: []DRMEngine{{"gpu", 123, 1}}}, true},
		{"a client name with control characters", "drm-driver:\tvirtio_gpu\ndrm-client-name:\tevil\x1bname\n",
			DRMClient{Driver: "virtio_gpu", ClientName: "evil?name"}, true},
		{"not a DRM file (eventfd)", "pos:\t0\nflags:\t02004002\nmnt_id:\t15\nino:\t1051\neventfd-count:                0\n", DRMClient{}, false},
		{"drm keys without drm-driver", "drm-client-id:\t5\n", DRMClient{ClientID: 5, HasID: true}, false},
	}
	for _, c := range cases {
		got, ok := ParseFdinfo([]byte(c.in))
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v %v\nwant %+v %v", c.from, got, ok, c.want, c.ok)
		}
	}
}
