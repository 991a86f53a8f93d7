// cgroup → container id → Kubernetes pod, from the shapes container runtimes and the
// kubelet give cgroup paths (see cgroup_test.go for each shape and where it comes from).

package tenant

import (
	"strings"
)

// CgroupInfo is what a cgroup path says about the tenant.
type CgroupInfo struct {
	Line        string // the /proc/<pid>/cgroup line chosen ("0::/kubepods.slice/…")
	Path        string // its path part
	ContainerID string // 64 lowercase hex
	Runtime     string // docker, containerd, cri-o, podman; "" when the shape does not say
	PodUID      string // Kubernetes pod uid, dashed
	QoSClass    string // guaranteed, burstable, besteffort (only with a pod)
	Unit        string // innermost systemd *.service / *.scope, only outside containers
}

// ParseCgroupFile picks the most telling line of /proc/<pid>/cgroup and parses it: a line
// whose path names a container or pod wins, preferring cgroup v2 ("0::"), then v1
// "name=systemd", then any v1 controller; otherwise the v2 line, the name=systemd line or
// the first line.
func ParseCgroupFile(b []byte) CgroupInfo {
	type cand struct {
		line, path string
		rank       int // 0 v2, 1 name=systemd, 2 other v1
	}
	var cands []cand
	for i, line := range strings.Split(string(b), "\n") {
		if i == 64 { // there are ~13 v1 hierarchies; anything beyond is not procfs
			break
		}
		line = strings.TrimSpace(line)
		id, rest, ok1 := strings.Cut(line, ":")
		ctrl, p, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "..") {
			continue
		}
		rank := 2
		switch {
		case id == "0" && ctrl == "":
			rank = 0
		case ctrl == "name=systemd":
			rank = 1
		}
		cands = append(cands, cand{line, p, rank})
	}
	best, bestScore := CgroupInfo{}, -1
	for _, c := range cands {
		info := ParseCgroupPath(c.path)
		info.Line = c.line
		score := 2 - c.rank // 0..2
		if info.ContainerID != "" || info.PodUID != "" {
			score += 10
		}
		if score > bestScore {
			best, bestScore = info, score
		}
	}
	return best
}

// ParseCgroupPath reads a cgroup path (v1 or v2; relative "/../.." prefixes from a
// reader in another cgroup namespace are fine). The innermost container-shaped
// component is the container; a pod is recognised only under a kubepods hierarchy.
func ParseCgroupPath(p string) CgroupInfo {
	info := CgroupInfo{Path: p}
	if len(p) > 4096 {
		return info
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	underKubepods, underDocker := false, false
	for i, c := range parts {
		switch {
		case c == "kubepods" || strings.HasSuffix(c, "kubepods.slice"):
			underKubepods = true
		case underKubepods && info.PodUID == "":
			if uid, qos, ok := podComponent(c); ok {
				info.PodUID = uid
				if qos != "" {
					info.QoSClass = qos
				}
			} else if c == "burstable" || c == "besteffort" {
				info.QoSClass = c
			} else if q := systemdQoSSlice(c); q != "" {
				info.QoSClass = q
			}
		}
		if c == "docker" {
			underDocker = true
		}
		if id, rt, ok := containerComponent(c); ok {
			info.ContainerID, info.Runtime = id, rt
			if rt == "" && underDocker && i > 0 && parts[i-1] == "docker" {
				info.Runtime = "docker"
			}
		}
	}
	if info.PodUID != "" && info.QoSClass == "" {
		info.QoSClass = "guaranteed" // guaranteed pods sit directly under kubepods
	}
	if info.PodUID == "" {
		info.QoSClass = ""
	}
	if info.ContainerID == "" && info.PodUID == "" {
		for i := len(parts) - 1; i >= 0; i-- {
			if strings.HasSuffix(parts[i], ".service") || strings.HasSuffix(parts[i], ".scope") {
				info.Unit = parts[i]
				break
			}
		}
	}
	return info
}

// containerRuntimeShapes maps a component prefix to the runtime that names scopes that way.
var containerRuntimeShapes = []struct{ prefix, runtime string }{
	{"docker-", "docker"},             // docker, systemd cgroup driver
	{"cri-containerd-", "containerd"}, // containerd CRI plugin, systemd driver
	{"crio-", "cri-o"},                // CRI-O, both drivers ("crio-<id>.scope", "crio-<id>")
	{"libpod-", "podman"},             // podman
	{"nerdctl-", "containerd"},        // nerdctl, systemd driver
}

// containerComponent recognises one path component as a container.
func containerComponent(c string) (id, runtime string, ok bool) {
	if isContainerID(c) {
		return c, "", true
	}
	base := strings.TrimSuffix(c, ".scope")
	for _, s := range containerRuntimeShapes {
		if rest, found := strings.CutPrefix(base, s.prefix); found {
			// "crio-conmon-<id>" and "libpod-conmon-<id>" are the runtime's monitor, not the container.
			if isContainerID(rest) {
				return rest, s.runtime, true
			}
			return "", "", false
		}
	}
	return "", "", false
}

func isContainerID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

// podComponent recognises "pod<uid>" (cgroupfs driver) and
// "[kubelet-]kubepods[-<qos>]-pod<uid_with_underscores>.slice" (systemd driver).
func podComponent(c string) (uid, qos string, ok bool) {
	if rest, found := strings.CutPrefix(c, "pod"); found {
		uid = rest
	} else if strings.HasSuffix(c, ".slice") && strings.Contains(c, "kubepods") {
		i := strings.LastIndex(c, "-pod")
		if i < 0 {
			return "", "", false
		}
		uid = strings.ReplaceAll(strings.TrimSuffix(c[i+len("-pod"):], ".slice"), "_", "-")
		qos = systemdQoSSlice(c[:i] + ".slice")
	} else {
		return "", "", false
	}
	if !isPodUID(uid) {
		return "", "", false
	}
	return uid, qos, true
}

// systemdQoSSlice: "kubepods-burstable.slice" → burstable (also with a kubelet- prefix).
func systemdQoSSlice(c string) string {
	for _, q := range []string{"burstable", "besteffort"} {
		if strings.HasSuffix(c, "kubepods-"+q+".slice") {
			return q
		}
	}
	return ""
}

// isPodUID accepts an RFC 4122 UUID (8-4-4-4-12 lowercase hex) or the 32-hex config hash
// that static (mirror) pods use as their uid.
func isPodUID(s string) bool {
	switch len(s) {
	case 32:
		for i := 0; i < len(s); i++ {
			if !isLowerHex(s[i]) {
				return false
			}
		}
		return true
	case 36:
		for i := 0; i < len(s); i++ {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if s[i] != '-' {
					return false
				}
			} else if !isLowerHex(s[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }
