// The end-of-input check: a capture in which no GPU event was recognised is an error that
// says what was expected and how to record it, not a replay of "0 jobs".

package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
)

// ErrNoGPUEvents is wrapped by Run's error when the input ended without one GPU event.
var ErrNoGPUEvents = errors.New("no GPU event recognised")

// notGPU are the kinds a capture can hold without telling anything about GPU jobs.
var notGPU = map[event.Kind]bool{
	event.Marker: true, event.IRQEntry: true, event.IRQExit: true, event.IoctlEnter: true,
	event.IoctlExit: true, event.ProcessExec: true, event.ProcessExit: true, event.EventsLost: true,
}

// howToRecord is what the error says a capture must hold and how to make one.
const howToRecord = "ghostdriver replays ftrace text (tracefs `trace`/`trace_pipe`, or `trace-cmd report` output) " +
	"holding GPU scheduler and fence events: gpu_scheduler:* and dma_fence:*, with the driver's own " +
	"(amdgpu:*, i915:*, xe:*, msm:*, v3d:*). Record them with `ghostdriver record --duration 10s --output capture.txt` " +
	"(as root, on the machine with the GPU), or with " +
	"`trace-cmd record -e gpu_scheduler -e dma_fence -e amdgpu` (the driver's system in place of amdgpu) and " +
	"convert with `trace-cmd report > capture.txt`, or enable them under /sys/kernel/tracing/events/ " +
	"(echo 1 > …/gpu_scheduler/enable, …/dma_fence/enable) and save /sys/kernel/tracing/trace; " +
	"a binary trace.dat must go through `trace-cmd report` first"

// checkRecognised returns nil when the capture held a GPU event, else the error.
func (s *Source) checkRecognised(lines int) error {
	st := s.Stats()
	var other []string
	for _, k := range event.Kinds() {
		if n := st.EventsOf(k); n > 0 {
			if !notGPU[k] {
				return nil
			}
			other = append(other, fmt.Sprintf("%s=%d", k, n))
		}
	}
	var what strings.Builder
	fmt.Fprintf(&what, "%d lines", lines)
	if len(other) > 0 {
		fmt.Fprintf(&what, ", decoded only %s", strings.Join(other, " "))
	}
	if len(st.Unknown) > 0 {
		names := make([]string, 0, len(st.Unknown))
		for n := range st.Unknown {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			return st.Unknown[names[i]] > st.Unknown[names[j]] || st.Unknown[names[i]] == st.Unknown[names[j]] && names[i] < names[j]
		})
		if len(names) > 5 {
			names = names[:5]
		}
		for i, n := range names {
			names[i] = fmt.Sprintf("%s=%d", n, st.Unknown[n])
		}
		fmt.Fprintf(&what, ", other events %s", strings.Join(names, " "))
	}
	if st.Malformed > 0 {
		fmt.Fprintf(&what, ", %d lines not ftrace text", st.Malformed)
	}
	looks := s.looksLike()
	if looks != "" {
		looks = " (" + looks + ")"
	}
	return fmt.Errorf("replay: capture %s: %w in %s%s. %s%s", s.cfg.Path, ErrNoGPUEvents, what.String(), looks,
		driverHints(st.Unknown), howToRecord)
}

// driverHints names, for each GPU driver whose events the capture holds without one that
// bounds a job, the events that would and how to record them.
func driverHints(unknown map[string]uint64) string {
	byDriver := map[string][]string{}
	for n := range unknown {
		if d, ok := eventdef.DriverOf(n); ok {
			byDriver[d] = append(byDriver[d], n)
		}
	}
	drivers := make([]string, 0, len(byDriver))
	for d := range byDriver {
		drivers = append(drivers, d)
	}
	sort.Strings(drivers)
	var b strings.Builder
	for _, d := range drivers {
		names := byDriver[d]
		sort.Strings(names)
		if len(names) > 5 {
			names = append(names[:5], "…")
		}
		fmt.Fprintf(&b, "The capture has %s's events (%s) but none that bounds a job: %s. ", d, strings.Join(names, ", "), eventdef.RecordHint(d))
	}
	return b.String()
}

// traceDatMagic starts a trace-cmd binary file (trace-cmd.dat(5)).
var traceDatMagic = []byte("\x17\x08\x44tracing")

// looksLike names what the input seems to be, from its first bytes ("" when unsure).
// Only regular files are looked at again.
func (s *Source) looksLike() string {
	f, err := os.Open(s.cfg.Path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	lr, err := newLineReader(f, MaxLineLen)
	if err != nil {
		return ""
	}
	head := make([]byte, 4096)
	n, _ := io.ReadFull(lr.br, head)
	head = head[:n]
	t := bytes.TrimSpace(head)
	switch {
	case bytes.HasPrefix(head, traceDatMagic):
		return "this is a binary trace-cmd file (trace.dat): run `trace-cmd report " + s.cfg.Path + " > capture.txt` and replay that"
	case bytes.HasPrefix(t, []byte("packet {")) || bytes.Contains(head, []byte("\npacket {")):
		return "a Perfetto trace in text form: ghostdriver read its ftrace events, and none is a GPU event"
	case bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head[:validPrefix(head)]):
		return "this looks like binary data, not text"
	}
	return ""
}

// validPrefix cuts a UTF-8 sequence split at the end of the sample.
func validPrefix(b []byte) int {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if r, _ := utf8.DecodeLastRune(b[:len(b)-i]); r != utf8.RuneError {
			return len(b) - i
		}
	}
	return len(b)
}
