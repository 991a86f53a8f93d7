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
	KeyK8sPodQoSClass      = "ghostdriver.k8s.pod.qos_class" // guaranteed, burstable, besteffort (from the cgroup path)
	KeySystemdUnit         = "ghostdriver.systemd.unit"      // innermost service/scope of a process outside containers
	KeyResourceSource      = "ghostdriver.resource.source"   // otel_ctx, env, executable: where service.name came from
	KeyDRMClientID         = "ghostdriver.drm.client_id"     // fdinfo drm-client-id / 6.17+ scheduler events
	KeyDRMClientName       = "ghostdriver.drm.client_name"   // fdinfo drm-client-name (set by DRM_IOCTL_SET_CLIENT_NAME)
	KeyDevicePCIAddress    = "ghostdriver.device.pci_address"
	KeyDeviceName          = "ghostdriver.device.name" // dev_name when the device is not PCI (platform GPUs)
	KeyDeviceDriver        = "ghostdriver.device.driver"
	KeyDeviceSRIOVVF       = "ghostdriver.device.sriov_vf"     // true when the GPU is an SR-IOV virtual function
	KeyNvidiaMIGInstance   = "ghostdriver.nvidia.mig_instance" // "gpu<minor>/gi<id>/ci<id>", NVIDIA's capability name
	KeyThreadContextSource = "ghostdriver.context.source"      // which tier of the linking ladder parented the span
)

// KeyDoc describes one key for documentation and tests.
type KeyDoc struct {
	Key     string
	Type    string // string, int, bool
	SemConv bool
	Where   string // span (per job), resource (per process) or device
	Source  string
}

// Keys is the table of every attribute tenant attribution can emit.
var Keys = []KeyDoc{
	{KeyProcessPID, "int", true, "span", "thread-group id of the submitter"},
	{KeyProcessExecutableName, "string", true, "span", "basename of /proc/<pid>/exe (comm for kernel threads)"},
	{KeyProcessExecutablePath, "string", true, "span", "/proc/<pid>/exe, \" (deleted)\" removed"},
	{KeyProcessLinuxCgroup, "string", true, "span", "the cgroup v2 line (or the v1 line that names the container)"},
	{KeyThreadID, "int", true, "span", "OS thread id (kernel task id), not a managed thread id"},
	{KeyThreadName, "string", true, "span", "comm of the submitting thread"},
	{KeyContainerID, "string", true, "span", "64-hex id from the cgroup path"},
	{KeyContainerRuntimeName, "string", true, "span", "runtime named by the cgroup path shape"},
	{KeyK8sPodUID, "string", true, "span", "kubepods cgroup path, systemd underscores turned back into dashes"},
	{KeyServiceName, "string", true, "resource", "OTEL_CTX resource > OTEL_SERVICE_NAME/OTEL_RESOURCE_ATTRIBUTES > executable name"},
	{KeyHWType, "string", true, "device", "always \"gpu\""},
	{KeyHWVendor, "string", true, "device", "PCI vendor id of the GPU's function"},
	{KeyK8sPodQoSClass, "string", false, "span", "kubepods QoS level in the cgroup path"},
	{KeySystemdUnit, "string", false, "span", "innermost *.service / *.scope when not in a container"},
	{KeyResourceSource, "string", false, "resource", "otel_ctx, env or executable"},
	{KeyDRMClientID, "int", false, "span", "drm-client-id (fdinfo) or the scheduler event's client id"},
	{KeyDRMClientName, "string", false, "span", "drm-client-name (fdinfo, 6.15+)"},
	{KeyDevicePCIAddress, "string", false, "device", "sysfs /sys/class/drm/<node>/device, or drm-pdev"},
	{KeyDeviceName, "string", false, "device", "dev_name of a non-PCI GPU"},
	{KeyDeviceDriver, "string", false, "device", "basename of the device's driver link"},
	{KeyDeviceSRIOVVF, "bool", false, "device", "the PCI function has a physfn link"},
	{KeyNvidiaMIGInstance, "string", false, "span", "MIG capability the process holds open (best effort)"},
	{KeyThreadContextSource, "string", false, "span", "otep4947, obi, traceparent or none"},
}
