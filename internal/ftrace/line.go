// Splits one ftrace text line into its header (task, CPU, timestamp), the event name
// and the payload. The layouts it reads:
//
//	tracefs:            "  comm-tid  [cpu] flags  secs.usecs: name: payload"
//	tracefs with TGID:  "  comm-tid  (  tgid) [cpu] flags  secs.usecs: name: payload"
//	trace-cmd report:   "  comm-tid  [cpu] secs.usecs: name:   payload" (flags with -l)
//	trace-cmd short:    "  comm-tid secs.usecs: name: payload"
//	tracefs syscalls:   "... secs.usecs: sys_ioctl(fd: 3, …)" and "... sys_ioctl -> 0x0"
//
// The timestamp — the first "digits.digits: " preceded by a blank — anchors the split,
// so comms with blanks, dashes, colons and brackets ("Web Content-123", "umr:cs0-6498")
// need no special case.
package ftrace

import "bytes"

// header is a split line; byte slices point into the line.
type header struct {
	comm    []byte
	tid     uint32
	tgid    uint32
	cpu     int32
	ts      int64
	name    []byte // lookup key: the event name, or "sys_x(" / "sys_x ->" for syscalls
	payload []byte
}

// tsSearchLimit bounds where the timestamp may start: the header columns before it are
// at most ~80 bytes wide, and garbage lines are rejected without scanning them whole.
const tsSearchLimit = 256

// reasons for malformed lines (static strings: no allocation on the hot path).
const (
	reasonNoTimestamp = "no timestamp"
	reasonBadTime     = "bad timestamp"
	reasonNoTask      = "no comm-pid before the timestamp"
	reasonNoName      = "no event name after the timestamp"
	reasonTooLong     = "line too long"
)

// split parses line into h. It returns "" or the reason the line is malformed;
// noTS is true when no timestamp was found at all (a header line, perhaps).
func split(line []byte, h *header) (reason string, noTS bool) {
	tsStart, colon := findTimestamp(line)
	if colon < 0 {
		return reasonNoTimestamp, true
	}
	ts, ok := parseTime(line[tsStart:colon])
	if !ok {
		return reasonBadTime, false
	}
	h.ts = ts
	if !splitTask(line[:tsStart], h) {
		return reasonNoTask, false
	}
	// name, then ':' (events), '(' (tracefs syscall entry) or " -> " (syscall exit).
	i := colon + 1
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	ns := i
	for i < len(line) && isNameByte(line[i]) {
		i++
	}
	if i == ns || i == len(line) {
		return reasonNoName, false
	}
	switch {
	case line[i] == ':':
		h.name = line[ns:i]
		i++
	case line[i] == '(':
		h.name = line[ns : i+1]
		h.payload = line[i+1:]
		return "", false
	case hasLit(line, i, " -> "):
		h.name = line[ns : i+3]
		h.payload = line[i+4:]
		return "", false
	case hasLit(line, i, " <-"):
		// function tracer: "func <-parent"
		h.name, h.payload = funcTracerName, nil
		return "", false
	default:
		return reasonNoName, false
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	h.payload = line[i:]
	return "", false
}

var funcTracerName = []byte("function")

func isNameByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// findTimestamp returns the start of "secs.frac" and the index of its ':' (-1 if none).
func findTimestamp(line []byte) (start, colon int) {
	limit := len(line)
	if limit > tsSearchLimit {
		limit = tsSearchLimit
	}
	for i := 3; i < limit; i++ {
		if line[i] != ':' || (i+1 < len(line) && line[i+1] != ' ' && line[i+1] != '\t') {
			continue
		}
		j := i - 1
		for j >= 0 && isDigit(line[j]) {
			j--
		}
		if j == i-1 || j < 1 || line[j] != '.' {
			continue
		}
		k := j - 1
		for k >= 0 && isDigit(line[k]) {
			k--
		}
		if k == j-1 || (k >= 0 && line[k] != ' ' && line[k] != '\t') {
			continue
		}
		return k + 1, i
	}
	return 0, -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseTime converts "secs.frac" (1 to 9 fraction digits) to nanoseconds, exactly.
func parseTime(b []byte) (int64, bool) {
	dot := bytes.IndexByte(b, '.')
	if dot <= 0 || dot > 10 {
		return 0, false
	}
	frac := b[dot+1:]
	if len(frac) == 0 || len(frac) > 9 {
		return 0, false
	}
	var secs, ns int64
	for _, c := range b[:dot] {
		secs = secs*10 + int64(c-'0')
	}
	for _, c := range frac {
		ns = ns*10 + int64(c-'0')
	}
	for i := len(frac); i < 9; i++ {
		ns *= 10
	}
	const maxSecs = (1<<63 - 1) / 1_000_000_000
	if secs >= maxSecs {
		return 0, false
	}
	return secs*1e9 + ns, true
}

// splitTask parses the columns before the timestamp: "comm-tid", then an optional
// "(tgid)", an optional "[cpu]", and optional flags/latency columns after the CPU.
func splitTask(b []byte, h *header) bool {
	b = trimBlankRight(b)
	h.cpu, h.tgid = -1, 0
	// The CPU column is the last "[digits]" token; whatever follows it is flags.
	if open, cpu, ok := lastCPU(b); ok {
		h.cpu = cpu
		b = trimBlankRight(b[:open])
	}
	if n := len(b); n > 0 && b[n-1] == ')' {
		open := bytes.LastIndexByte(b, '(')
		if open < 0 {
			return false
		}
		if tgid, ok := parseUint32(trimBlankRight(trimBlankLeft(b[open+1 : n-1]))); ok {
			h.tgid = tgid
		}
		b = trimBlankRight(b[:open])
	}
	dash := bytes.LastIndexByte(b, '-')
	if dash < 0 {
		return false
	}
	tid, ok := parseUint32(b[dash+1:])
	if !ok {
		return false
	}
	h.tid = tid
	h.comm = trimBlankLeft(b[:dash])
	return true
}

// lastCPU finds the last "[digits]" token in b, returning where its '[' is.
func lastCPU(b []byte) (open int, cpu int32, ok bool) {
	for end := len(b) - 1; end >= 0; end-- {
		if b[end] != ']' {
			continue
		}
		open := bytes.LastIndexByte(b[:end], '[')
		if open < 0 || (open > 0 && b[open-1] != ' ' && b[open-1] != '\t') {
			continue
		}
		n, ok := parseUint32(b[open+1 : end])
		if !ok || n > 1<<20 {
			continue
		}
		return open, int32(n), true
	}
	return 0, 0, false
}

func parseUint32(b []byte) (uint32, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > 1<<32-1 {
		return 0, false
	}
	return uint32(n), true
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func trimBlankRight(b []byte) []byte {
	for len(b) > 0 && isBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func trimBlankLeft(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	return b
}
