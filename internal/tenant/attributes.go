// The attribute keys tenant attribution emits: semantic-convention names where they exist,
// ghostdriver.* for the rest. This file is the single table (metadata.yaml and the README
// document the same list).

package tenant

// Attribute keys.
const (
	// Semantic conventions (https://opentelemetry.io/docs/specs/semconv/registry/attributes/).
	KeyProcessPID            = "process.pid"
	KeyProcessExecutableName = "process.executable.name" // basename of /proc/<pid>/exe
	KeyProcessExecutablePath = "process.executable.path"
	KeyProcessLinuxCgroup    = "process.linux.cgroup" // the /proc/<pid>/cgroup line used
	// KeyThreadID carries the OS thread id (kernel task id) of the submitting thread.
	// Semantic conventions define thread.id as the runtime's *managed* thread id; a kernel
	// observer has no such id, and the TID is what matches the application's own logs
	// (gettid) and profilers. Documented deviation.
	KeyThreadID             = "thread.id"
	KeyThreadName           = "thread.name" // comm of the submitting thread
	KeyContainerID          = "container.id"
	KeyContainerRuntimeName = "container.runtime.name" // docker, containerd, cri-o, podman
	KeyK8sPodUID            = "k8s.pod.uid"
	KeyServiceName          = "service.name"
	KeyHWType               = "hw.type"   // "gpu" on device attributes
	KeyHWVendor             = "hw.vendor" // from the PCI vendor id, when known

	// ghostdriver namespace: no convention exists.
	KeyK8sPodQoSClass = "ghostdriver.k8s.pod.qos_class" // guaranteed, burstable, besteffort (from the cgroup path)
	KeySystemdUnit    = "ghostdriver.systemd.unit"      // innermost service/scope of a process outside containers
	KeyResourceSource = "ghostdriver.resource.source"   // otel_ctx, env, executable: where service.name came from
	// The job span's own keys (emit, telemetry-extra.yaml) that tenant attribution also fills:
	// ghostdriver.device is the dev_name kernel events carry and ghostdriver.client_id the
	// DRM client id. Being attributes, neither may also be a namespace (OTel naming rule),
	// so the device's details live under ghostdriver.gpu.*.
	KeyClientID          = "ghostdriver.client_id"       // 6.17+ scheduler events / the ioctl's drm_file / fdinfo drm-client-id
	KeyDevice            = "ghostdriver.device"          // dev_name of the DRM device's parent (PCI address, "virtio1", "fd00000.gpu")
	KeyDRMClientName     = "ghostdriver.drm.client_name" // fdinfo drm-client-name (set by DRM_IOCTL_SET_CLIENT_NAME)
	KeyGPUPCIAddress     = "ghostdriver.gpu.pci_address"
	KeyGPUDriver         = "ghostdriver.gpu.driver"
	KeyGPUSRIOVVF        = "ghostdriver.gpu.sriov_vf"        // true when the GPU is an SR-IOV virtual function
	KeyNvidiaMIGInstance = "ghostdriver.nvidia.mig_instance" // "gpu<minor>/gi<id>/ci<id>", NVIDIA's capability name
	KeyContextTier       = "ghostdriver.context.tier"        // which tier of the linking ladder parented the span (emit)
)

// KeyDoc describes one key for documentation and tests.
type KeyDoc struct {
	Key     string
	Type    string // string, int, bool
	SemConv bool
	// Where: "resource" (per process: emit keeps one resource per submitting process),
	// "span" (per job) or "device" (per job, from the job's device).
	Where  string
	Source string
}

// Keys is the table of every attribute tenant attribution can emit.
var Keys = []KeyDoc{
	{KeyServiceName, "string", true, "resource", "OTEL_CTX resource > OTEL_SERVICE_NAME/OTEL_RESOURCE_ATTRIBUTES > executable name"},
	{KeyProcessPID, "int", true, "resource", "thread-group id of the submitter, in the host's pid namespace"},
	{KeyProcessExecutableName, "string", true, "resource", "basename of /proc/<pid>/exe (comm for kernel threads)"},
	{KeyProcessExecutablePath, "string", true, "resource", "/proc/<pid>/exe, \" (deleted)\" removed"},
	{KeyProcessLinuxCgroup, "string", true, "resource", "the cgroup v2 line (or the v1 line that names the container)"},
	{KeyContainerID, "string", true, "resource", "64-hex id from the cgroup path"},
	{KeyContainerRuntimeName, "string", true, "resource", "runtime named by the cgroup path shape"},
	{KeyK8sPodUID, "string", true, "resource", "kubepods cgroup path, systemd underscores turned back into dashes"},
	{KeyK8sPodQoSClass, "string", false, "resource", "kubepods QoS level in the cgroup path"},
	{KeySystemdUnit, "string", false, "resource", "innermost *.service / *.scope when not in a container"},
	{KeyNvidiaMIGInstance, "string", false, "resource", "the one MIG instance the process holds open (best effort)"},
	{KeyResourceSource, "string", false, "resource", "otel_ctx, env or executable"},
	{KeyThreadID, "int", true, "span", "OS thread id (kernel task id), not a managed thread id"},
	{KeyThreadName, "string", true, "span", "comm of the submitting thread"},
	{KeyContextTier, "string", false, "span", "otep4947, obi, traceparent, none"},
	{KeyClientID, "int", false, "span", "the scheduler event's client id, else the submit ioctl's DRM file (drm_file.client_id: live, fentry drm_ioctl, 6.5+), else drm-client-id (fdinfo) when the process has one DRM client"},
	{KeyDRMClientName, "string", false, "span", "drm-client-name (fdinfo, 6.15+)"},
	{KeyHWType, "string", true, "device", "always \"gpu\""},
	{KeyHWVendor, "string", true, "device", "PCI vendor id of the GPU's function"},
	{KeyDevice, "string", false, "device", "dev_name of the DRM device's parent: what kernel events carry"},
	{KeyGPUPCIAddress, "string", false, "device", "the PCI function (for virtio-gpu: the virtio device's PCI parent)"},
	{KeyGPUDriver, "string", false, "device", "basename of the device's driver link"},
	{KeyGPUSRIOVVF, "bool", false, "device", "the PCI function has a physfn link"},
}
