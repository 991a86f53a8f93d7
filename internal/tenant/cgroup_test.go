// Cgroup paths as runtimes and the kubelet write them; the comment on each row says where
// the shape comes from.
package tenant

import "testing"

const (
	cid  = "3f5e1a7c9b2d4e6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f"
	cid2 = "b7d2f4e6a8c0e2f4a6c8e0f2a4c6e8f0a2c4e6f8a0c2e4f6a8c0e2f4a6c8e0f2"
	uid  = "7f3a9a4e-0f2b-4c5e-9d3a-1b2c3d4e5f60"
	uidU = "7f3a9a4e_0f2b_4c5e_9d3a_1b2c3d4e5f60" // systemd escapes '-' (its slice separator) as '_'
)

func TestParseCgroupPath(t *testing.T) {
	cases := []struct {
		from string // who writes this shape
		path string
		want CgroupInfo
	}{
		{"kubelet, systemd cgroup driver, burstable pod, containerd CRI (cri-containerd-<id>.scope)",
			"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/cri-containerd-" + cid + ".scope",
			CgroupInfo{ContainerID: cid, Runtime: "containerd", PodUID: uid, QoSClass: "burstable"}},
		{"kubelet, systemd driver, besteffort pod, CRI-O (crio-<id>.scope)",
			"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uidU + ".slice/crio-" + cid + ".scope",
			CgroupInfo{ContainerID: cid, Runtime: "cri-o", PodUID: uid, QoSClass: "besteffort"}},
		{"kubelet, systemd driver, guaranteed pod: directly under kubepods.slice",
			"/kubepods.slice/kubepods-pod" + uidU + ".slice/cri-containerd-" + cid + ".scope",
			CgroupInfo{ContainerID: cid, Runtime: "containerd", PodUID: uid, QoSClass: "guaranteed"}},
		{"CRI-O's conmon monitor scope: the pod, but not a container",
			"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uidU + ".slice/crio-conmon-" + cid + ".scope",
			CgroupInfo{PodUID: uid, QoSClass: "besteffort"}},
		{"kind nodes: kubelet cgroup root /kubelet, systemd driver",
			"/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" + uidU + ".slice/cri-containerd-" + cid + ".scope",
			CgroupInfo{ContainerID: cid, Runtime: "containerd", PodUID: uid, QoSClass: "besteffort"}},
		{"kubelet, cgroupfs driver (GKE COS, k3s), burstable: /kubepods/burstable/pod<uid>/<id>",
			"/kubepods/burstable/pod" + uid + "/" + cid,
			CgroupInfo{ContainerID: cid, PodUID: uid, QoSClass: "burstable"}},
		{"kubelet, cgroupfs driver, besteffort",
			"/kubepods/besteffort/pod" + uid + "/" + cid,
			CgroupInfo{ContainerID: cid, PodUID: uid, QoSClass: "besteffort"}},
		{"kubelet, cgroupfs driver, guaranteed: /kubepods/pod<uid>/<id>",
			"/kubepods/pod" + uid + "/" + cid,
			CgroupInfo{ContainerID: cid, PodUID: uid, QoSClass: "guaranteed"}},
		{"kubelet, cgroupfs driver, CRI-O: crio-<id> without .scope",
			"/kubepods/burstable/pod" + uid + "/crio-" + cid,
			CgroupInfo{ContainerID: cid, Runtime: "cri-o", PodUID: uid, QoSClass: "burstable"}},
		{"static (mirror) pod: uid is the 32-hex config hash",
			"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3d5b0a0e7c9d4c43a7b5f5e0a5c9a1b2.slice/cri-containerd-" + cid + ".scope",
			CgroupInfo{ContainerID: cid, Runtime: "containerd", PodUID: "3d5b0a0e7c9d4c43a7b5f5e0a5c9a1b2", QoSClass: "burstable"}},
		{"pod sandbox seen from a collector in its own cgroup namespace (relative path)",
			"/../../kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/cri-containerd-" + cid + ".scope",
			CgroupInfo{ContainerID: cid, Runtime: "containerd", PodUID: uid, QoSClass: "burstable"}},
		{"docker, systemd cgroup driver (default on cgroup v2): docker-<id>.scope",
			"/system.slice/docker-" + cid + ".scope",
			CgroupInfo{ContainerID: cid, Runtime: "docker"}},
		{"docker, cgroupfs driver: /docker/<id>",
			"/docker/" + cid,
			CgroupInfo{ContainerID: cid, Runtime: "docker"}},
		{"docker in docker: the innermost container",
			"/docker/" + cid2 + "/docker/" + cid,
			CgroupInfo{ContainerID: cid, Runtime: "docker"}},
		{"podman rootful: machine.slice/libpod-<id>.scope",
			"/machine.slice/libpod-" + cid + ".scope",
			CgroupInfo{ContainerID: cid, Runtime: "podman"}},
		{"podman rootless, with the container's own sub-cgroup (cgroupns, systemd inside)",
			"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + cid + ".scope/container",
			CgroupInfo{ContainerID: cid, Runtime: "podman"}},
		{"podman's conmon: not the container",
			"/machine.slice/libpod-conmon-" + cid + ".scope",
			CgroupInfo{Unit: "libpod-conmon-" + cid + ".scope"}},
		{"nerdctl (containerd without Kubernetes), systemd driver",
			"/system.slice/nerdctl-" + cid + ".scope",
			CgroupInfo{ContainerID: cid, Runtime: "containerd"}},
		{"containerd namespace 'default', cgroupfs driver (ctr run)",
			"/default/" + cid,
			CgroupInfo{ContainerID: cid}},
		{"Amazon ECS on EC2: /ecs/<task id>/<container id>",
			"/ecs/5a0d5e5a1c2b4d3e8f9a0b1c2d3e4f5a/" + cid,
			CgroupInfo{ContainerID: cid}},
		{"plain systemd service",
			"/system.slice/ollama.service",
			CgroupInfo{Unit: "ollama.service"}},
		{"login session",
			"/user.slice/user-1000.slice/session-3.scope",
			CgroupInfo{Unit: "session-3.scope"}},
		{"user service started from a desktop session (semconv example)",
			"/user.slice/user-1000.slice/user@1000.service/tmux-spawn-0267755b-4639-4a27-90ed-f19f88e53748.scope",
			CgroupInfo{Unit: "tmux-spawn-0267755b-4639-4a27-90ed-f19f88e53748.scope"}},
		{"root cgroup: kernel threads, or a private cgroup namespace",
			"/", CgroupInfo{}},
		{"pod-looking component outside kubepods is not a pod",
			"/system.slice/pod" + uid + ".service",
			CgroupInfo{Unit: "pod" + uid + ".service"}},
		{"63 hex digits is not a container id",
			"/docker/" + cid[:63], CgroupInfo{}},
		{"uppercase hex is not a container id",
			"/docker/3F5E1A7C9B2D4E6F8A0B1C2D3E4F5A6B7C8D9E0F1A2B3C4D5E6F7A8B9C0D1E2F", CgroupInfo{}},
	}
	for _, c := range cases {
		got := ParseCgroupPath(c.path)
		c.want.Path = c.path
		if got != c.want {
			t.Errorf("%s:\n  %s\n  got  %+v\n  want %+v", c.from, c.path, got, c.want)
		}
	}
}

func TestParseCgroupFile(t *testing.T) {
	v1 := "12:pids:/docker/" + cid + "\n4:cpuset:/docker/" + cid + "\n1:name=systemd:/docker/" + cid + "\n0::/system.slice/containerd.service\n"
	cases := []struct {
		from     string
		file     string
		wantLine string
		wantCID  string
	}{
		{"cgroup v2 only", "0::/system.slice/docker-" + cid + ".scope\n", "0::/system.slice/docker-" + cid + ".scope", cid},
		{"hybrid v1+v2, docker cgroupfs: the v1 line that names the container, name=systemd first",
			v1, "1:name=systemd:/docker/" + cid, cid},
		{"v1 without containers: name=systemd over controllers",
			"3:cpu,cpuacct:/user.slice\n1:name=systemd:/user.slice/user-1000.slice/session-3.scope\n",
			"1:name=systemd:/user.slice/user-1000.slice/session-3.scope", ""},
		{"hybrid without containers: the v2 line", "1:name=systemd:/init.scope\n0::/init.scope\n", "0::/init.scope", ""},
		{"garbage lines ignored", "hello\n0::relative\n0::/a.service\n", "0::/a.service", ""},
	}
	for _, c := range cases {
		got := ParseCgroupFile([]byte(c.file))
		if got.Line != c.wantLine || got.ContainerID != c.wantCID {
			t.Errorf("%s: line %q cid %q; want %q %q", c.from, got.Line, got.ContainerID, c.wantLine, c.wantCID)
		}
	}
}
