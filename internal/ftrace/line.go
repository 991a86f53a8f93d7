// Splits one ftrace text line into its header (task, CPU, timestamp), the event name
// and the payload. The layouts it reads:
//
//	tracefs:            "  comm-tid  [cpu] flags  secs.usecs: name: payload"
//	tracefs with TGID:  "  comm-tid  (  tgid) [cpu] flags  secs.usecs: name: payload"
//	trace-cmd report:   "  comm-tid  [cpu] secs.usecs: name:   payload" (flags with -l)
//	trace-cmd short:    "  comm-tid secs.usecs: name: payload"
//	latency format:     "  comm-tid  cpuflags  usecs us: name: payload" (latency.go)
//	tracefs syscalls:   "... secs.usecs: sys_ioctl(fd: 3, …)" and "... sys_ioctl -> 0x0"
//
// The timestamp — the first "digits.digits: " preceded by a blank — anchors the split,
// so comms with blanks, dashes, colons and brackets ("Web Content-123", "umr:cs0-6498")
// need no special case.
//
// Lines come in runs from one task (a submit ioctl and its fences, a worker's run), whose
// columns before the timestamp repeat byte for byte: the task columns of the last line
// are kept (taskColumns) and reused when the next line starts with the same bytes.

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

// taskColumns are the parsed columns before the timestamp of the last line split.
type taskColumns struct {
	prefix []byte // the bytes before the timestamp; empty when not valid
	tid    uint32
	tgid   uint32
	cpu    int32
	commAt int // where the comm starts in prefix; it ends at the dash before the tid
	commTo int
}

// split parses line into h. It returns "" or the reason the line is malformed;
// noTS is true when no timestamp was found at all (a header line, perhaps).
//
// When line starts with tc's prefix, its timestamp search starts after it: no colon
// inside those bytes was a timestamp's in the last line, and whether one is depends only
// on the bytes before it and the byte after (the timestamp's first digit, or the blank
// ending the prefix). The result is the same as a search from the start.
func (tc *taskColumns) split(line []byte, h *header) (reason string, noTS bool) {
	n := len(tc.prefix)
	same := n > 0 && len(line) > n && string(line[:n]) == string(tc.prefix)
	if same {
		// Most lines: the timestamp follows the prefix directly. The first colon after
		// the prefix is then the timestamp's, which the search below would find too.
		if ts, colon, ok := timeAt(line, n); ok {
			h.ts = ts
			h.tid, h.tgid, h.cpu, h.comm = tc.tid, tc.tgid, tc.cpu, line[tc.commAt:tc.commTo]
			return splitName(line, colon, h), false
		}
	}
	from := 3
	if same {
		from = max(from, n)
	}
	tsStart, colon := findTimestamp(line, from)
	if colon < 0 {
		return reasonNoTimestamp, true
	}
	ts, ok := parseTime(line[tsStart:colon])
	if !ok {
		return reasonBadTime, false
	}
	h.ts = ts
	if same && tsStart == n {
		h.tid, h.tgid, h.cpu, h.comm = tc.tid, tc.tgid, tc.cpu, line[tc.commAt:tc.commTo]
	} else {
		commAt, ok := splitTask(line[:tsStart], h)
		if !ok {
			tc.prefix = tc.prefix[:0]
			return reasonNoTask, false
		}
		tc.prefix = append(tc.prefix[:0], line[:tsStart]...)
		tc.tid, tc.tgid, tc.cpu, tc.commAt, tc.commTo = h.tid, h.tgid, h.cpu, commAt, commAt+len(h.comm)
	}
	return splitName(line, colon, h), false
}

// timeAt reads a timestamp that starts at i, right after a blank: "secs.frac:" followed
// by a blank or the end of the line, within tsSearchLimit, converted by parseTime's rules.
// ok is false when the bytes at i are not that, or the time does not parse (the caller
// then searches as for any line, and finds the same outcome).
func timeAt(line []byte, i int) (ts int64, colon int, ok bool) {
	limit := min(len(line), tsSearchLimit)
	start := i
	for i < limit && isDigit(line[i]) {
		i++
	}
	if i == start || i >= limit || line[i] != '.' {
		return 0, 0, false
	}
	i++
	for i < limit && isDigit(line[i]) {
		i++
	}
	if i >= limit || line[i] != ':' || i+1 < len(line) && line[i+1] != ' ' && line[i+1] != '\t' {
		return 0, 0, false
	}
	ts, ok = parseTime(line[start:i])
	return ts, i, ok
}

// splitName reads the event name after the timestamp's colon, then ':' (events), '('
// (tracefs syscall entry) or " -> " (syscall exit), and the payload after it.
func splitName(line []byte, colon int, h *header) (reason string) {
	i := colon + 1
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	ns := i
	for i < len(line) && isNameByte(line[i]) {
		i++
	}
	if i == ns || i == len(line) {
		return reasonNoName
	}
	switch {
	case line[i] == ':':
		h.name = line[ns:i]
		i++
	case line[i] == '(':
		h.name = line[ns : i+1]
		h.payload = line[i+1:]
		return ""
	case hasLit(line, i, " -> "):
		h.name = line[ns : i+3]
		h.payload = line[i+4:]
		return ""
	case hasLit(line, i, " <-"):
		// function tracer: "func <-parent"
		h.name, h.payload = funcTracerName, nil
		return ""
	default:
		return reasonNoName
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	h.payload = line[i:]
	return ""
}

var funcTracerName = []byte("function")

func isNameByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// findTimestamp returns the start of "secs.frac" and the index of its ':' (-1 if none),
// looking for the colon from index from (≥ 3) on.
func findTimestamp(line []byte, from int) (start, colon int) {
	limit := len(line)
	if limit > tsSearchLimit {
		limit = tsSearchLimit
	}
	for i := from; i < limit; i++ {
		c := bytes.IndexByte(line[i:limit], ':')
		if c < 0 {
			break
		}
		i += c
		if i+1 < len(line) && line[i+1] != ' ' && line[i+1] != '\t' {
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
// "(tgid)", an optional "[cpu]", and optional flags/latency columns after the CPU. It
// returns where the comm starts in b.
func splitTask(b []byte, h *header) (commAt int, ok bool) {
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
			return 0, false
		}
		if tgid, ok := parseUint32(trimBlankRight(trimBlankLeft(b[open+1 : n-1]))); ok {
			h.tgid = tgid
		}
		b = trimBlankRight(b[:open])
	}
	dash := bytes.LastIndexByte(b, '-')
	if dash < 0 {
		return 0, false
	}
	tid, ok := parseUint32(b[dash+1:])
	if !ok {
		return 0, false
	}
	h.tid = tid
	h.comm = trimBlankLeft(b[:dash])
	return dash - len(h.comm), true
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
	n, ok := parseDec(b)
	if !ok || n > 1<<32-1 {
		return 0, false
	}
	return uint32(n), true
}

// parseDec parses a decimal of at most 19 digits (no sign, no overflow of uint64).
func parseDec(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
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
