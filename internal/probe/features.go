//go:build linux

// Feature probes live here, each run once per process; the loader asks them and
// never re-probes.

package probe

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"
)

var (
	btfOnce sync.Once
	btfErr  error
)

// HaveKernelBTF reports whether the running kernel exposes its BTF (CO-RE, tp_btf,
// fentry all need it).
func HaveKernelBTF() error {
	btfOnce.Do(func() {
		if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
			btfErr = fmt.Errorf("no kernel BTF (/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF off)")
		}
	})
	return btfErr
}

var (
	fentryOnce sync.Once
	fentryErr  error
)

// HaveFentry reports whether fentry/fexit programs can be loaded (BPF trampolines).
// Measured: on Firecracker 6.18 guests the load fails with EPERM.
func HaveFentry() error {
	fentryOnce.Do(func() {
		if err := HaveKernelBTF(); err != nil {
			fentryErr = err
			return
		}
		err := features.HaveProgramType(ebpf.Tracing)
		switch {
		case err == nil:
		case errors.Is(err, unix.EPERM):
			fentryErr = errors.New("fentry/fexit refused by this kernel (EPERM at load: no BPF trampoline)")
		default:
			fentryErr = fmt.Errorf("fentry/fexit not supported: %v", err)
		}
	})
	return fentryErr
}

var (
	taskStorageOnce sync.Once
	taskStorageErr  error
)

// HaveTaskStorage reports whether BPF task-local storage maps exist (5.11+): the ioctl
// hooks keep a followed ioctl's arguments there, else in a hash keyed by tid.
func HaveTaskStorage() error {
	taskStorageOnce.Do(func() {
		if err := features.HaveMapType(ebpf.TaskStorage); err != nil {
			taskStorageErr = fmt.Errorf("no BPF task storage: %v", err)
		}
	})
	return taskStorageErr
}

// HaveTracefs reports whether tracefs is mounted (classic tracepoints need it to
// resolve event ids). Not cached: the loader mounts it (tracefs.go), others unmount it.
func HaveTracefs() error {
	for _, p := range []string{"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"} {
		if _, err := os.Stat(p); err == nil {
			return nil
		}
	}
	return errors.New("tracefs not mounted (mount -t tracefs nodev /sys/kernel/tracing)")
}

// Capability numbers (linux/capability.h).
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// checkPrivileges returns a single actionable error when this process cannot load
// tracing programs: CAP_BPF+CAP_PERFMON, or CAP_SYS_ADMIN, are needed.
func checkPrivileges() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	eff := uint64(data[0].Effective) | uint64(data[1].Effective)<<32
	unpriv, _ := os.ReadFile("/proc/sys/kernel/unprivileged_bpf_disabled")
	return privilegeError(eff, strings.TrimSpace(string(unpriv)))
}

// privilegeError decides from an effective capability set (pure, for tests).
func privilegeError(eff uint64, unprivilegedBPFDisabled string) error {
	has := func(c uint) bool { return eff&(1<<c) != 0 }
	if has(capSysAdmin) || (has(capBPF) && has(capPerfmon)) {
		return nil
	}
	var missing []string
	if !has(capBPF) {
		missing = append(missing, "CAP_BPF")
	}
	if !has(capPerfmon) {
		missing = append(missing, "CAP_PERFMON")
	}
	msg := fmt.Sprintf("not privileged: the live source needs %s (or CAP_SYS_ADMIN) to load tracing programs",
		strings.Join(missing, "+"))
	if unprivilegedBPFDisabled != "" && unprivilegedBPFDisabled != "0" {
		msg += fmt.Sprintf("; kernel.unprivileged_bpf_disabled=%s", unprivilegedBPFDisabled)
	}
	return errors.New(msg + "; run as root or grant the capabilities (e.g. setcap cap_bpf,cap_perfmon+ep)")
}
