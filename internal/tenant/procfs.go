// Small bounded readers of /proc/<pid> files.

package tenant

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// readBounded reads at most max bytes of a file; procfs files report size 0, so
// os.ReadFile's size hint is useless and an unbounded read of a hostile file is not OK.
func readBounded(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// SanitizeComm turns a raw comm (≤ 15 bytes plus newline, but set freely by
// prctl(PR_SET_NAME), so any bytes) into a printable UTF-8 string: the trailing newline is
// dropped, invalid UTF-8 becomes U+FFFD, control characters (embedded newlines, tabs, NUL)
// become '?'. Spaces are kept: "Web Content" is a real comm.
func SanitizeComm(b []byte) string {
	return sanitize(bytes.TrimSuffix(b, []byte("\n")), 64)
}

// sanitize makes b printable UTF-8 (see SanitizeComm), keeping at most max input bytes.
func sanitize(b []byte, max int) string {
	if len(b) > max {
		b = b[:max]
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			sb.WriteRune(utf8.RuneError)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			sb.WriteByte('?')
		default:
			sb.WriteRune(r)
		}
		b = b[n:]
	}
	return sb.String()
}

// ParseStatStartTime returns field 22 (starttime, clock ticks after boot) of
// /proc/<pid>/stat. The comm field (2) may contain spaces and parentheses, so fields are
// counted after the last ')'.
func ParseStatStartTime(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("stat: no comm terminator")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("stat: %d fields after comm", len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// ExecutablePath cleans a /proc/<pid>/exe link target and returns it with its basename.
func ExecutablePath(link string) (full, base string) {
	full = strings.TrimSuffix(link, " (deleted)")
	if full == "" {
		return "", ""
	}
	return full, path.Base(full)
}
