// Reads the header of lines in the latency format: tracefs with options/latency-format
// set, and what ftrace_dump (ftrace_dump_on_oops, sysrq-z) prints into the kernel log,
// where each line may carry the printk prefix ("<0>", "[  12.345678]", "[    T1]").
//
// The kernel prints it in trace_output.c (trace_print_lat_context, lat_print_generic,
// lat_print_timestamp); ftrace_dump_one (trace.c) sets TRACE_FILE_LAT_FMT and prints each
// line with printk(KERN_EMERG):
//
//	plain:   "%8.8s-%-7d %3d" comm pid cpu, the flag columns (trace_print_lat_fmt: irqs-off,
//	         need-resched, hardirq/softirq, preempt depth, migrate-disable depth; four or
//	         five characters depending on the kernel), then " %4lldus%c: " — microseconds
//	         since the trace buffer's start (time_start), and a mark for the gap to the
//	         next event (' ', '+', '!', '#', '*', '@', '$').
//	verbose: "%16s %7d %3d %d %08x %08lx " comm pid cpu flags preempt-count index, then
//	         "[%08llx] %ld.%03ldms (+%ld.%03ldms): " — the event's absolute time in
//	         microseconds (hex), then the time since the buffer's start and to the next
//	         event in milliseconds.
//
// Both forms exist only with a clock that counts nanoseconds (TRACE_FILE_TIME_IN_NS); with
// a counter clock the kernel prints raw counts (" %4lld: "), which are not times and are
// not read. The plain form gives microseconds relative to the buffer's start, so its
// event times are not comparable to a capture in another format; the verbose form's
// bracketed value is absolute. Comms are cut to 8 bytes in the plain form.

package ftrace

import "bytes"

// reasonLatencyNoTask is the reason for a latency-format line whose columns before the
// timestamp do not read as comm-pid, cpu and flags.
const reasonLatencyNoTask = "latency format: no comm-pid, cpu and flags before the timestamp"

// latencyMarks are the characters lat_print_timestamp puts after "us" (trace_find_mark).
func isLatencyMark(c byte) bool {
	switch c {
	case ' ', '+', '!', '#', '*', '@', '$':
		return true
	}
	return false
}

// stripPrintkPrefix removes what the kernel log puts before an ftrace_dump line: the
// "<level>" of /dev/kmsg and dmesg -r, the "[seconds.micros]" timestamp, and the
// "[  T123]" / "[  C1]" caller id (CONFIG_PRINTK_CALLER). ok is false when the line
// starts with none of them.
func stripPrintkPrefix(line []byte) (rest []byte, ok bool) {
	rest = line
	if len(rest) > 2 && rest[0] == '<' {
		i := 1
		for i < len(rest) && isDigit(rest[i]) {
			i++
		}
		if i > 1 && i < len(rest) && rest[i] == '>' {
			rest, ok = rest[i+1:], true
		}
	}
	if len(rest) > 2 && rest[0] == '[' {
		end := bytes.IndexByte(rest, ']')
		if end > 1 && isPrintkTime(trimBlankLeft(rest[1:end])) {
			rest, ok = rest[end+1:], true
			// the caller id follows the timestamp directly
			if len(rest) > 3 && rest[0] == '[' {
				if end := bytes.IndexByte(rest, ']'); end > 2 {
					id := trimBlankLeft(rest[1:end])
					if len(id) > 1 && (id[0] == 'T' || id[0] == 'C') && allDigits(id[1:]) {
						rest = rest[end+1:]
					}
				}
			}
		}
	}
	if ok && len(rest) > 0 && rest[0] == ' ' {
		// printk puts one blank after its prefix; the line's own blanks follow.
		rest = rest[1:]
	}
	return rest, ok
}

func isPrintkTime(b []byte) bool {
	dot := bytes.IndexByte(b, '.')
	return dot > 0 && dot < len(b)-1 && allDigits(b[:dot]) && allDigits(b[dot+1:])
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return len(b) > 0
}

// splitLatency parses a latency-format line into h, like taskColumns.split does for the
// default format. found is false when the line has no latency timestamp at all.
func splitLatency(line []byte, h *header) (reason string, found bool) {
	colon, tsStart, ts, verbose := findLatencyTimestamp(line)
	if colon < 0 {
		return "", false
	}
	h.ts = ts
	var ok bool
	if verbose {
		ok = splitLatencyTaskVerbose(line[:tsStart], h)
	} else {
		ok = splitLatencyTask(line[:tsStart], h)
	}
	if !ok {
		return reasonLatencyNoTask, true
	}
	return splitName(line, colon, h), true
}

// findLatencyTimestamp finds " 1234us+: " (plain) or "[0001e240] 123.456ms (+0.002ms): "
// (verbose) and returns the index of its final ':', where the columns before it end, and
// the time in nanoseconds. colon is -1 when there is none.
func findLatencyTimestamp(line []byte) (colon, tsStart int, ts int64, verbose bool) {
	limit := min(len(line), tsSearchLimit)
	for i := 4; i < limit; i++ {
		c := bytes.IndexByte(line[i:limit], ':')
		if c < 0 {
			break
		}
		i += c
		if i+1 < len(line) && line[i+1] != ' ' {
			continue
		}
		// plain: digits "us" mark ':'
		if isLatencyMark(line[i-1]) && line[i-2] == 's' && line[i-3] == 'u' {
			j := i - 4
			for j >= 0 && isDigit(line[j]) {
				j--
			}
			if j < i-4 && j >= 0 && line[j] == ' ' && i-4-j <= 19 {
				us, ok := parseDec(line[j+1 : i-3])
				if ok && us <= maxMicros {
					return i, j, int64(us) * 1000, false
				}
			}
			continue
		}
		// verbose: "[hex] a.bms (+c.dms):"
		if line[i-1] == ')' && bytes.HasSuffix(line[:i], []byte("ms)")) {
			open := bytes.LastIndexByte(line[:i], '[')
			if open < 0 {
				continue
			}
			close := bytes.IndexByte(line[open:i], ']')
			if close < 2 || close > 17 {
				continue
			}
			us, ok := parseHex(line[open+1 : open+close])
			if !ok || us > maxMicros {
				continue
			}
			if !isLatencyMillis(line[open+close+1 : i]) {
				continue
			}
			return i, open, int64(us) * 1000, true
		}
	}
	return -1, 0, 0, false
}

// maxMicros keeps a time in nanoseconds within int64.
const maxMicros = (1<<63 - 1) / 1000

// isLatencyMillis checks " 1.234ms (+0.005ms)".
func isLatencyMillis(b []byte) bool {
	b = trimBlankLeft(b)
	sp := bytes.IndexByte(b, ' ')
	if sp < 0 {
		return false
	}
	abs, rel := b[:sp], trimBlankLeft(b[sp:])
	if !bytes.HasSuffix(abs, []byte("ms")) || !isPrintkTime(abs[:len(abs)-2]) {
		return false
	}
	if !bytes.HasPrefix(rel, []byte("(+")) || !bytes.HasSuffix(rel, []byte("ms)")) {
		return false
	}
	return isPrintkTime(rel[2 : len(rel)-3])
}

func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		v := hexVal(c)
		if v < 0 {
			return 0, false
		}
		n = n<<4 | uint64(v)
	}
	return n, true
}

// splitLatencyTask reads "%8.8s-%-7d %3d" and the flag columns: "  <idle>-0         0d.h2.".
func splitLatencyTask(b []byte, h *header) bool {
	b = trimBlankRight(b)
	sp := bytes.LastIndexAny(b, " \t")
	if sp < 0 {
		return false
	}
	cpuFlags := b[sp+1:]
	n := 0
	for n < len(cpuFlags) && isDigit(cpuFlags[n]) {
		n++
	}
	// the flags never start with a digit (irqs-off is one of "dDbX.")
	if n == 0 || n == len(cpuFlags) || len(cpuFlags)-n > 8 {
		return false
	}
	cpu, ok := parseUint32(cpuFlags[:n])
	if !ok || cpu > 1<<20 {
		return false
	}
	b = trimBlankRight(b[:sp])
	dash := bytes.LastIndexByte(b, '-')
	if dash < 0 {
		return false
	}
	tid, ok := parseUint32(b[dash+1:])
	if !ok {
		return false
	}
	h.cpu, h.tgid, h.tid = int32(cpu), 0, tid
	h.comm = trimBlankLeft(b[:dash])
	return true
}

// splitLatencyTaskVerbose reads "%16s %7d %3d %d %08x %08lx ": comm, pid, cpu, flags,
// preempt count, entry index.
func splitLatencyTaskVerbose(b []byte, h *header) bool {
	b = trimBlankRight(b)
	var fields [5][]byte // idx, preempt, flags, cpu, pid (right to left)
	for k := range fields {
		sp := bytes.LastIndexAny(b, " \t")
		if sp < 0 {
			return false
		}
		fields[k] = b[sp+1:]
		b = trimBlankRight(b[:sp])
	}
	if _, ok := parseHex(fields[0]); !ok {
		return false
	}
	if _, ok := parseHex(fields[1]); !ok {
		return false
	}
	if _, ok := parseUint32(fields[2]); !ok {
		return false
	}
	cpu, ok := parseUint32(fields[3])
	if !ok || cpu > 1<<20 {
		return false
	}
	tid, ok := parseUint32(fields[4])
	if !ok {
		return false
	}
	h.cpu, h.tgid, h.tid = int32(cpu), 0, tid
	h.comm = trimBlankLeft(b)
	return len(h.comm) > 0
}

// isDumpBanner reports the lines ftrace_dump prints around the buffer.
func isDumpBanner(t []byte) bool {
	return bytes.HasPrefix(t, []byte("Dumping ftrace ")) ||
		bytes.Equal(t, []byte("---------------------------------")) ||
		bytes.Equal(t, []byte("(ftrace buffer empty)"))
}
