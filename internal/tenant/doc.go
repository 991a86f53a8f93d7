// Package tenant attributes GPU jobs to tenants and carries the application's own context
// (docs/design.md "Tenancy" and "Linking to application traces"): for a submitting pid it resolves, once per process
// and off the per-event hot path,
//
//   - identity: pid, start time (pid-reuse guard), comm, executable;
//   - tenancy: cgroup line → container id and runtime → Kubernetes pod uid and QoS class,
//     or the systemd unit outside containers (ParseCgroupPath);
//   - resource: OTEP 4719 OTEL_CTX > OTEL_SERVICE_NAME/OTEL_RESOURCE_ATTRIBUTES > executable;
//   - trace context: TRACEPARENT from the environment (tier 3 of the linking ladder), and,
//     when the process context announces OTEP 4947, where its otel_thread_ctx_v1 TLS slot
//     is (Process.ThreadContextTLS: the recipe the BPF side needs for tier 1);
//   - DRM clients (fdinfo drm-client-id/-name/-pdev/-engine-*), NVIDIA MIG instance;
//   - devices (sysfs): PCI address, driver, SR-IOV VF, vendor.
//
// API:
//
//	r := tenant.NewResolver(tenant.DefaultConfig())
//	p, err := r.Process(pid)        // cached, LRU-bounded, refreshed after Config.Refresh
//	p.ResourceAttributes()          // the resource of this process's spans: the app's own
//	                                // resource + identity/tenancy (kernel wins on conflicts)
//	p.Attributes()                  // identity/tenancy only
//	c, ok := p.DRMClient(job.ClientID); c.Attributes()
//	d, ok := r.Device(job.Device);      d.Attributes()
//	r.Forget(pid)                   // on exit and on exec (exec keeps pid and start time)
//
// The per-thread keys thread.id (the OS TID, see KeyThreadID) and thread.name come from the
// Job itself; emit adds them with the keys defined here.
//
// Parsers usable on their own (all bounded, fuzzed, never panic): ParseCgroupFile,
// ParseCgroupPath, ParseFdinfo, ScanEnviron, ParseResourceAttributes, SanitizeComm,
// ParseStatStartTime, ParseMigMinors; and in appctx: ParseTraceParent,
// ParseThreadContext, ParseProcessContextHeader, DecodeProcessContext, InspectTLS.
//
// Privacy: of a process's environment only the four EnvKeys are ever copied out of a
// reused, zeroed buffer (environ.go). Process memory is read only at OTEL_CTX mappings (the
// named one, or on kernels < 5.17 the first 32 bytes of read-only two-page anonymous
// candidates, plus the payload a valid header announces) and at the GOT slots of the
// module that defines otel_thread_ctx_v1.
//
// Every procfs path is taken relative to Config.ProcRoot and sysfs to Config.SysRoot, so
// a collector in a container can read a host procfs mounted elsewhere, and tests use the
// fake trees under testdata/.
//
// Attribute names: attributes.go is the one table.
package tenant
