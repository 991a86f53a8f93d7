// Every key the package emits is in the one table, once.
package tenant

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

func TestKeysTable(t *testing.T) {
	inTable := map[string]bool{}
	for _, k := range Keys {
		if inTable[k.Key] {
			t.Errorf("%s listed twice", k.Key)
		}
		inTable[k.Key] = true
	}
	r := testResolver(t, publishedContext(0x7f1c2a600000, appctx.ProcessContext{Resource: []attr.Attribute{attr.String("service.name", "s")}}))
	var emitted []attr.Attribute
	for _, pid := range []uint32{4242, 5151, 777, 31337} {
		p, err := r.Process(pid)
		if err != nil {
			t.Fatal(err)
		}
		emitted = append(emitted, p.Attributes()...)
		for _, c := range p.DRMClients {
			emitted = append(emitted, c.Attributes()...)
		}
	}
	for _, d := range r.Devices() {
		emitted = append(emitted, d.Attributes()...)
	}
	for _, a := range emitted {
		if !inTable[a.Key] {
			t.Errorf("%s is emitted but not in Keys", a.Key)
		}
	}
}

func TestResolverUnreadableProcessContextFallsBackToEnv(t *testing.T) {
	r := testResolver(t, ctxMem{}) // the mapping is listed but its memory cannot be read
	p, err := r.Process(5151)
	if err != nil {
		t.Fatal(err)
	}
	if p.ResourceSource != FromEnv || p.ServiceName != "from-env" || p.ProcessContextErr == "" {
		t.Errorf("source %v, service %q, error %q", p.ResourceSource, p.ServiceName, p.ProcessContextErr)
	}
	if v, _ := attr.Lookup(p.Resource, "k8s.namespace.name"); v.Str != "inference" {
		t.Errorf("resource %+v", p.Resource)
	}
}
