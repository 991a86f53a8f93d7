// Package procfs reads what the kernel publishes about a process (/proc/<pid>/maps) and
// opens the files a tenant controls without trusting them (regular files only, never
// blocking): the helpers the tenant enricher (internal/tenant, internal/tenant/appctx)
// and the CUDA source (internal/cuda) share.
package procfs

import "errors"

// ErrNotRegular: a path a tenant controls names something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")
