// The recorder's series: per (ring, dimensions) group, fixed arrays of stage and job
// series, so that recording a job costs one map lookup whatever the number of stages; and
// first-seen order lists, so that every collection writes data points in a stable order
// (no map iteration in the output).

package emit

import (
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit/histogram"
)

// ringKey identifies a ring across devices.
type ringKey struct{ driver, device, ring string }

// ring is one ring's utilization series.
type ring struct {
	key    ringKey
	busy   ringBusy
	listed bool // in series.ringOrder: it had an execution interval
}

// groupKey is a ring with the values of the optional dimensions ("" when none).
type groupKey struct {
	ringKey
	dims string
}

// numProvenances and numOutcomes size the arrays indexed by those enums.
const (
	numProvenances = int(assemble.Inferred) + 1
	numOutcomes    = int(assemble.Evicted) + 1
)

// group holds the job metrics of one ring and dimension set.
type group struct {
	key    groupKey
	ring   *ring
	stage  [numProvenances][assemble.NumStages]*histogram.Histogram
	jobDur [numOutcomes]*histogram.Histogram
	jobs   [numOutcomes]*uint64
}

// Series references in first-seen order.
type (
	stageRef struct {
		g     *group
		src   assemble.Provenance
		stage assemble.Stage
	}
	outcomeRef struct {
		g       *group
		outcome assemble.Outcome
	}
)

// series is the recorder's state.
type series struct {
	groups map[groupKey]*group
	// recent is a direct-mapped cache in front of groups, by the ring name's bytes'
	// address: the records' strings are interned, so a ring's jobs carry the same string,
	// and a hit costs string compares that stop at equal pointers instead of hashing four
	// strings a job.
	recent [groupCacheSlots]*group
	rings  map[ringKey]*ring

	ringOrder   []*ring
	stageOrder  []stageRef
	jobDurOrder []outcomeRef
	jobsOrder   []outcomeRef
}

// groupCacheSlots is the size of series.recent (a power of two).
const groupCacheSlots = 16

func groupSlot(k *groupKey) int {
	p := uintptr(unsafe.Pointer(unsafe.StringData(k.ring)))
	return int((p>>3 ^ p>>9 ^ uintptr(len(k.ring))) & (groupCacheSlots - 1))
}

func (s *series) group(k groupKey) *group {
	slot := &s.recent[groupSlot(&k)]
	if g := *slot; g != nil && g.key == k {
		return g
	}
	if g, ok := s.groups[k]; ok {
		*slot = g
		return g
	}
	if s.groups == nil {
		s.groups = make(map[groupKey]*group)
		s.rings = make(map[ringKey]*ring)
	}
	r, ok := s.rings[k.ringKey]
	if !ok {
		r = &ring{key: k.ringKey}
		s.rings[k.ringKey] = r
	}
	g := &group{key: k, ring: r}
	s.groups[k] = g
	*slot = g
	return g
}

// busyOf returns the utilization state of ring r, listing it for output on first use.
func (s *series) busyOf(r *ring) *ringBusy {
	if !r.listed {
		r.listed = true
		s.ringOrder = append(s.ringOrder, r)
	}
	return &r.busy
}

func (s *series) stageHist(g *group, src assemble.Provenance, st assemble.Stage) *histogram.Histogram {
	if int(src) >= numProvenances || int(st) >= assemble.NumStages {
		return nil
	}
	h := g.stage[src][st]
	if h == nil {
		h = &histogram.Histogram{}
		g.stage[src][st] = h
		s.stageOrder = append(s.stageOrder, stageRef{g, src, st})
	}
	return h
}

func (s *series) jobHist(g *group, o assemble.Outcome) *histogram.Histogram {
	if int(o) >= numOutcomes {
		return nil
	}
	h := g.jobDur[o]
	if h == nil {
		h = &histogram.Histogram{}
		g.jobDur[o] = h
		s.jobDurOrder = append(s.jobDurOrder, outcomeRef{g, o})
	}
	return h
}

func (s *series) jobCount(g *group, o assemble.Outcome) *uint64 {
	if int(o) >= numOutcomes {
		return nil
	}
	n := g.jobs[o]
	if n == nil {
		n = new(uint64)
		g.jobs[o] = n
		s.jobsOrder = append(s.jobsOrder, outcomeRef{g, o})
	}
	return n
}
