// The C side of the table: bpf/include/driver_hooks.h, generated from the rows with a
// live hook (go generate ./internal/probe, `make generate`), so that a driver event's
// hook value and its classic-tracepoint program are stated once, here.

package eventdef

import (
	"fmt"
	"strings"
)

// CHeaderPath is where the generated header lives, from the repository root.
const CHeaderPath = "bpf/include/driver_hooks.h"

// CHeader is the text of bpf/include/driver_hooks.h: DRIVER_HOOKS, the enum hook values
// of the driver hooks (ghostdriver.h's enum hook), and DRIVER_RAW_COPIES, the classic
// tracepoint program of each (bpf/drivers.c).
func CHeader() string {
	var b strings.Builder
	b.WriteString(`/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Code generated from internal/eventdef/table.go by internal/eventdef/cheader
 * (make generate); DO NOT EDIT.
 *
 * The live hooks of drivers' own events: DRIVER_HOOKS are their enum hook values
 * (ghostdriver.h), DRIVER_RAW_COPIES their classic-tracepoint programs, which copy the
 * raw trace entry (drivers.c). Their tp_btf programs are written in drivers.c.
 */
#pragma once

#define DRIVER_HOOKS`)
	hooks := Hooks()
	for _, e := range hooks {
		fmt.Fprintf(&b, " \\\n\t%s = %d,", e.Hook.Enum(), e.Hook.Value)
	}
	b.WriteString("\n\n#define DRIVER_RAW_COPIES")
	for _, e := range hooks {
		fmt.Fprintf(&b, " \\\n\tRAW_TRACEPOINT_COPY(%s, %s, %s)", e.System, e.Hook.Event, e.Hook.Enum())
	}
	b.WriteString("\n")
	return b.String()
}
