// Config checks at Open: a bad value is an error that names the field's problem.
package cuda

import (
	"os"
	"strings"
	"testing"
)

func TestConfigErrorsNameTheProblem(t *testing.T) {
	page := os.Getpagesize()
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{RingBufferBytes: 3 * page}, "is not a power of two"},
		{Config{RingBufferBytes: page / 2}, "smaller than one page"},
		{Config{RingBufferBytes: -page}, "smaller than one page"},
		{Config{RingBufferBytes: 2 << 30}, "exceeds 1 GiB"},
		{Config{Layers: "kernel"}, `cuda layers "kernel": want "both", "driver" or "runtime"`},
	} {
		_, err := c.cfg.withDefaults()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want it to say %q", c.cfg, err, c.want)
		}
	}
	for _, ok := range []Config{{}, {RingBufferBytes: page}, {RingBufferBytes: 1 << 30}, {Layers: LayersDriver}, {Layers: LayersRuntime}} {
		if _, err := ok.withDefaults(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}
