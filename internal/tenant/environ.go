// The four environment variables ghostdriver reads from /proc/<pid>/environ.
//
// Privacy: environments hold secrets. ScanEnviron streams the file through one fixed 4 KiB
// buffer that it zeroes before returning; only the values of the four keys below are ever
// copied out. Other variables are never converted to strings, logged or kept. Note that
// /proc/<pid>/environ shows the environment the process was exec'ed with, not later setenv.

package tenant

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/attr"
)

// EnvKeys are the only environment variables read.
var EnvKeys = [...]string{"TRACEPARENT", "TRACESTATE", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"}

// Environ holds the values of EnvKeys found in a process's environment.
type Environ struct {
	TraceParent        string
	TraceState         string
	ServiceName        string
	ResourceAttributes string
	// Truncated is set when the environment exceeded the scan limit or a wanted value
	// exceeded MaxEnvValue (that value is then dropped, never used cut short).
	Truncated bool
}

const (
	// MaxEnvValue bounds one kept value.
	MaxEnvValue = 16 << 10
	// DefaultEnvironLimit bounds the bytes scanned (the kernel caps argv+envp at a quarter
	// of the stack rlimit: 2 MiB by default).
	DefaultEnvironLimit = 4 << 20
)

// ScanEnviron scans a NUL-separated environment for EnvKeys, reading at most limit bytes.
// The first occurrence of a key wins, as with getenv(3).
func ScanEnviron(r io.Reader, limit int64) (Environ, error) {
	var env Environ
	dst := [len(EnvKeys)]*string{&env.TraceParent, &env.TraceState, &env.ServiceName, &env.ResourceAttributes}
	var found [len(EnvKeys)]bool

	buf := make([]byte, 4096)
	defer clear(buf)
	var head [32]byte // the key part of the current entry, until '='
	defer clear(head[:])
	const (
		inKey = iota
		capturing
		skipping
	)
	state, hn, key := inKey, 0, -1
	var val []byte
	overflow := false
	finish := func() {
		if state == capturing && !found[key] {
			found[key] = true
			if overflow {
				env.Truncated = true
			} else {
				*dst[key] = string(val)
			}
		}
		state, hn, key, overflow, val = inKey, 0, -1, false, val[:0]
	}
	var total int64
	for {
		n, err := r.Read(buf)
		if total+int64(n) > limit {
			n = int(limit - total)
			env.Truncated = true
			err = io.EOF
		}
		total += int64(n)
		for _, c := range buf[:n] {
			switch state {
			case inKey:
				switch {
				case c == 0:
					hn = 0
				case c == '=':
					state, key = skipping, -1
					for i, k := range EnvKeys {
						if string(head[:hn]) == k {
							state, key = capturing, i
						}
					}
				case hn == len(head):
					state = skipping
				default:
					head[hn] = c
					hn++
				}
			case capturing:
				switch {
				case c == 0:
					finish()
				case len(val) < MaxEnvValue:
					val = append(val, c)
				default:
					overflow = true
				}
			case skipping:
				if c == 0 {
					finish()
				}
			}
		}
		if errors.Is(err, io.EOF) {
			if state == capturing && !env.Truncated {
				finish() // last entry without a trailing NUL
			}
			return env, nil
		}
		if err != nil {
			return env, err
		}
	}
}

// ErrResourceAttributes is returned by ParseResourceAttributes.
var ErrResourceAttributes = errors.New("invalid OTEL_RESOURCE_ATTRIBUTES")

// MaxResourceAttributes bounds the pairs taken from OTEL_RESOURCE_ATTRIBUTES.
const MaxResourceAttributes = 128

// ParseResourceAttributes parses OTEL_RESOURCE_ATTRIBUTES: comma-separated key=value pairs
// in the W3C Baggage octet format, values percent-decoded ('+' is not a space), spaces
// around keys and values trimmed, empty members skipped. As the SDK specification says,
// any error discards the whole value.
func ParseResourceAttributes(s string) ([]attr.Attribute, error) {
	var out []attr.Attribute
	for _, member := range strings.Split(s, ",") {
		if strings.TrimSpace(member) == "" {
			continue
		}
		k, v, ok := strings.Cut(member, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: member %q is not key=value", ErrResourceAttributes, member)
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("%w: value of %q: %v", ErrResourceAttributes, k, err)
		}
		if len(out) == MaxResourceAttributes {
			return nil, fmt.Errorf("%w: more than %d attributes", ErrResourceAttributes, MaxResourceAttributes)
		}
		out = append(out, attr.String(k, strings.ToValidUTF8(dv, "\uFFFD")))
	}
	return out, nil
}
