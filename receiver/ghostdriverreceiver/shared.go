// One receiver instance per component ID, shared by its traces and metrics pipelines
// (the collector's own sharedcomponent helper is internal to its modules).

package ghostdriverreceiver

import (
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver"
)

type registry struct {
	mu sync.Mutex
	m  map[component.ID]*ghostReceiver
}

var instances = &registry{m: map[component.ID]*ghostReceiver{}}

func (r *registry) getOrCreate(set receiver.Settings, cfg *Config, opts *options) (*ghostReceiver, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if g, ok := r.m[set.ID]; ok {
		return g, nil
	}
	g, err := newReceiver(set, cfg, opts, func() { r.remove(set.ID) })
	if err != nil {
		return nil, err
	}
	r.m[set.ID] = g
	return g, nil
}

func (r *registry) remove(id component.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, id)
}
