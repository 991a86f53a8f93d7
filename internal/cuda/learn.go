//go:build linux

// Entry-point learning: a cuGetProcAddress return names a function pointer the runtime
// will call instead of the exported symbol; the hook worker checks it against the
// process's maps and the driver file's function starts, then hooks it.

package cuda

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/cilium/ebpf/link"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// maxLearntHooks bounds the entry points learned per driver library file. Each is a
// uprobe pair on a file every process of the node may map, placed at an address a
// process handed us; the real driver needs a handful (5 of 96 hooked functions on the
// H200, doc.go), the API table has fewer than 256 rows.
const maxLearntHooks = 256

// learnEntryPoint handles a cuGetProcAddress return: when the symbol is a hooked API and
// the returned address is the start of a function of a hooked driver library (libcuda)
// that is not already hooked there, attach there. The process chose the address: one
// anywhere else (its own files, anonymous memory, the middle of an instruction of a
// library every tenant maps) is refused and counted, as is any beyond the library's
// maxLearntHooks.
func (s *Source) learnEntryPoint(pid uint32, symbol string, addr uint64) {
	id, ok := procAddressTarget(symbol)
	if !ok || addr == 0 || s.cfg.IgnoreEntryPoints {
		return
	}
	refuse := func(why string, fields ...zap.Field) {
		s.mu.Lock()
		s.stats.EntryPointsRefused++
		s.mu.Unlock()
		s.log.Debug("entry point refused", append(fields, zap.String("symbol", symbol),
			zap.Uint32("pid", pid), zap.String("address", fmt.Sprintf("%#x", addr)), zap.String("why", why))...)
	}
	mapped, off, err := fileOffset(s.cfg.ProcRoot, int(pid), addr, defaultMapsBounds)
	switch {
	case errors.Is(err, errMapsTruncated):
		s.mu.Lock()
		s.stats.MapsTruncated++
		s.mu.Unlock()
		refuse("maps cut at its read bounds before the address", zap.Error(err))
		return
	case errors.Is(err, errNotMapped):
		refuse("not in a file mapping")
		return
	case err != nil:
		s.log.Debug("entry point of a process gone", zap.String("symbol", symbol), zap.Error(err))
		return
	}
	f, err := procfs.OpenRegular(filepath.Join(s.cfg.ProcRoot, strconv.Itoa(int(pid)), "root", mapped))
	if err != nil {
		refuse("mapped file not openable as a regular file", zap.Error(err))
		return
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		refuse("fstat", zap.Error(err))
		return
	}
	s.mu.Lock()
	h, ok := s.libs[[2]uint64{st.Dev, st.Ino}]
	if ok && h.funcs != nil {
		if _, done := h.offsets[off]; done {
			if h.exports[apis[id].Name] == off || h.offsets[off] == id {
				s.stats.EntryPointAtExport++
			}
			s.mu.Unlock()
			return
		}
	}
	var why string
	switch {
	case !ok || h.Layer != Driver || h.funcs == nil:
		why = "not in a hooked driver library"
	case !h.funcs[off]:
		why = "not the start of a function symbol"
	case h.learnt >= maxLearntHooks:
		why = fmt.Sprintf("the library has %d learnt entry points already", maxLearntHooks)
		if !h.capReported {
			h.capReported = true
			s.report.Add("entry_point", h.Mapped, capability.StatusUnavailable,
				fmt.Sprintf("more than %d learnt entry points: the rest are refused", maxLearntHooks))
		}
	}
	if why != "" {
		s.mu.Unlock()
		refuse(why, zap.String("file", mapped), zap.String("offset", fmt.Sprintf("%#x", off)))
		return
	}
	h.offsets[off] = id
	h.learnt++
	s.mu.Unlock()

	ex, err := link.OpenExecutable(fdPath(f))
	if err == nil {
		err = s.attachPair(ex, "", off, s.cfg.cookieOf(id)|cookieEntryPoint)
	}
	hook := fmt.Sprintf("%s+%#x (cuGetProcAddress %q)", mapped, off, symbol)
	if err != nil {
		s.addReport("entry_point", hook, capability.StatusUnavailable, firstLine(err.Error()))
		return
	}
	s.mu.Lock()
	s.stats.EntryPointHooks++
	s.mu.Unlock()
	s.addReport("entry_point", hook, capability.StatusAttached, "")
	s.log.Debug("hooked a driver entry point", zap.String("hook", hook))
	s.hooked()
}
