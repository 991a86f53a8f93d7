//go:build !linux

// The live sources need Linux eBPF; elsewhere only replay works.

package graph

import "errors"

type linuxParts struct{}

func (g *Graph) openLive() error {
	if g.spec.Live != nil {
		return errors.New(`source "live" needs Linux with eBPF; use source "replay" on this platform`)
	}
	return errors.New("the CUDA source needs Linux with eBPF uprobes")
}
