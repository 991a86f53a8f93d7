// Fuzz targets for the procfs parsers (their input is written by other tenants: comm,
// environ, cgroup names, DRM client names). Seed corpora: testdata/fuzz/<target>/.
//
//	go test ./internal/tenant -run '^$' -fuzz FuzzParseFdinfo -fuzztime 60s
package tenant

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseFdinfo(f *testing.F) {
	f.Add([]byte("drm-driver:\tamdgpu\ndrm-client-id:\t42\ndrm-engine-gfx:\t100 ns\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, ok := ParseFdinfo(b)
		if ok && c.Driver == "" {
			t.Fatal("DRM client without a driver")
		}
		if len(c.Engines) > maxDRMEngines {
			t.Fatalf("%d engines", len(c.Engines))
		}
		for _, s := range []string{c.Driver, c.ClientName, c.PDev} {
			if !printable(s) {
				t.Fatalf("unsanitised %q", s)
			}
		}
	})
}

func FuzzParseCgroupPath(f *testing.F) {
	f.Add("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/cri-containerd-" + cid + ".scope")
	f.Fuzz(func(t *testing.T, p string) {
		checkCgroup(t, ParseCgroupPath(p))
	})
}

func FuzzParseCgroupFile(f *testing.F) {
	f.Add([]byte("12:pids:/docker/" + cid + "\n1:name=systemd:/docker/" + cid + "\n0::/\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info := ParseCgroupFile(b)
		checkCgroup(t, info)
		if info.Line != "" && !bytes.Contains(b, []byte(info.Line)) {
			t.Fatalf("line %q is not from the input", info.Line)
		}
	})
}

func checkCgroup(t *testing.T, info CgroupInfo) {
	t.Helper()
	if info.ContainerID != "" && !isContainerID(info.ContainerID) {
		t.Fatalf("container id %q", info.ContainerID)
	}
	if info.PodUID != "" && !isPodUID(info.PodUID) {
		t.Fatalf("pod uid %q", info.PodUID)
	}
	if (info.QoSClass != "") != (info.PodUID != "") {
		t.Fatalf("QoS %q without pod, or pod without QoS: %+v", info.QoSClass, info)
	}
}

func FuzzSanitizeComm(f *testing.F) {
	f.Add([]byte("vllm\tworker\xfe\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s := SanitizeComm(b); !printable(s) {
			t.Fatalf("SanitizeComm(%q) = %q", b, s)
		}
		ParseStatStartTime(b)
	})
}

// FuzzScanEnviron compares the streaming scanner with the obvious implementation.
func FuzzScanEnviron(f *testing.F) {
	f.Add([]byte("PATH=/bin\x00TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\x00OTEL_SERVICE_NAME=x\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ScanEnviron(bytes.NewReader(b), DefaultEnvironLimit)
		if err != nil {
			t.Fatal(err)
		}
		var want Environ
		seen := map[string]bool{}
		for _, e := range strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00") {
			k, v, ok := strings.Cut(e, "=")
			if !ok || seen[k] {
				continue
			}
			seen[k] = true
			if len(v) > MaxEnvValue {
				want.Truncated = true
				continue
			}
			switch k {
			case "TRACEPARENT":
				want.TraceParent = v
			case "TRACESTATE":
				want.TraceState = v
			case "OTEL_SERVICE_NAME":
				want.ServiceName = v
			case "OTEL_RESOURCE_ATTRIBUTES":
				want.ResourceAttributes = v
			}
		}
		got.Truncated, want.Truncated = false, false
		if got != want {
			t.Fatalf("ScanEnviron(%q)\n got %+v\nwant %+v", b, got, want)
		}
	})
}

func FuzzParseResourceAttributes(f *testing.F) {
	f.Add("deployment.environment.name=prod,team=ml%20platform")
	f.Fuzz(func(t *testing.T, s string) {
		attrs, err := ParseResourceAttributes(s)
		if err == nil && len(attrs) > MaxResourceAttributes {
			t.Fatalf("%d attributes", len(attrs))
		}
		for _, a := range attrs {
			if !utf8.ValidString(a.Value.Str) {
				t.Fatalf("invalid UTF-8 %q", a.Value.Str)
			}
		}
	})
}

func FuzzParseMigMinors(f *testing.F) {
	f.Add([]byte("config 1\nmonitor 2\ngpu0/gi0/access 3\ngpu0/gi0/ci0/access 4\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for minor, m := range ParseMigMinors(b) {
			if m.GI < 0 || m.CI < -1 || m.GPUMinor < 0 {
				t.Fatalf("minor %d → %+v", minor, m)
			}
		}
		migFromCapLinks(strings.Split(string(b), "\n"), ParseMigMinors(b))
	})
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}
