// The environment: only four keys come out, whatever else is in there.
package tenant

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ghostdriver/ghostdriver/internal/attr"
)

func env(entries ...string) string { return strings.Join(entries, "\x00") + "\x00" }

func TestScanEnviron(t *testing.T) {
	in := env("PATH=/usr/bin", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"TRACESTATE=rojo=00f067aa0ba902b7", "OTEL_SERVICE_NAME=trainer", "OTEL_RESOURCE_ATTRIBUTES=a=b,c=d%20e",
		"OTEL_SERVICE_NAME=second-wins-not", "XTRACEPARENT=nope", "TRACEPARENTX=nope", "=weird", "NOEQUALS")
	want := Environ{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "rojo=00f067aa0ba902b7",
		ServiceName: "trainer", ResourceAttributes: "a=b,c=d%20e"}
	if got, err := ScanEnviron(strings.NewReader(in), DefaultEnvironLimit); err != nil || got != want {
		t.Errorf("got %+v, %v\nwant %+v", got, err, want)
	}
	// Byte-at-a-time reads exercise every buffer boundary.
	if got, err := ScanEnviron(iotest.OneByteReader(strings.NewReader(in)), DefaultEnvironLimit); err != nil || got != want {
		t.Errorf("one byte at a time: %+v, %v", got, err)
	}
}

func TestScanEnvironBounds(t *testing.T) {
	// Last entry without its NUL (a process that rewrote its environment area).
	if got, _ := ScanEnviron(strings.NewReader("A=1\x00OTEL_SERVICE_NAME=tail"), DefaultEnvironLimit); got.ServiceName != "tail" {
		t.Errorf("unterminated last entry: %+v", got)
	}
	// An oversized value is dropped, never cut short.
	big := env("OTEL_RESOURCE_ATTRIBUTES="+strings.Repeat("x", MaxEnvValue+1), "OTEL_SERVICE_NAME=ok")
	if got, _ := ScanEnviron(strings.NewReader(big), DefaultEnvironLimit); got.ResourceAttributes != "" || !got.Truncated || got.ServiceName != "ok" {
		t.Errorf("oversized value: %+v", got)
	}
	// Past the scan limit nothing more is read, and a value straddling it is dropped.
	in := env("FILLER="+strings.Repeat("y", 100), "OTEL_SERVICE_NAME=beyond")
	if got, _ := ScanEnviron(strings.NewReader(in), 110); got.ServiceName != "" || !got.Truncated {
		t.Errorf("limit: %+v", got)
	}
	// Read errors surface.
	if _, err := ScanEnviron(iotest.ErrReader(errors.New("EIO")), DefaultEnvironLimit); err == nil {
		t.Error("read error swallowed")
	}
}

func TestParseResourceAttributes(t *testing.T) {
	got, err := ParseResourceAttributes(" deployment.environment.name = prod ,team=ml%20platform,, url=http%3A%2F%2Fx%2Fa+b,empty=")
	want := []attr.Attribute{attr.String("deployment.environment.name", "prod"), attr.String("team", "ml platform"),
		attr.String("url", "http://x/a+b"), attr.String("empty", "")}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v\nwant %+v", got, err, want)
	}
	for _, bad := range []string{"novalue", "=v", "a=%zz", "a=%4"} {
		if got, err := ParseResourceAttributes(bad); !errors.Is(err, ErrResourceAttributes) || got != nil {
			t.Errorf("ParseResourceAttributes(%q) = %v, %v; the whole value must be discarded", bad, got, err)
		}
	}
	if got, err := ParseResourceAttributes(""); err != nil || got != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
}
