// Per-ring state for the hardware-start inference (rule "ring_serial"): a ring executes
// its jobs one after another, so a job cannot start on the hardware before the previous
// job on the same ring is done: ts = max(te, previous job's th (tf when th is unknown)).
//
// The ring remembers only the latest hardware-done time. Each job takes a snapshot of it
// when its own finished fence signals (jobs of one ring finish in ring order), so the
// snapshot is its predecessor's done, whatever happens while the job is held. Rings idle
// for longer than JobTimeout are forgotten: by then any new job's te is later than the
// remembered done, and the inference does not need it.

package assemble

import "time"

type ringKey struct{ dev, name string }

type ring struct {
	lastDone int64
	has      bool
	last     int64      // latest time the ring was used, for pruning
	stats    *RingStats // its entry in Stats.Rings
}

func (a *Assembler) ringFor(dev, name string, t int64) *ring {
	k := ringKey{dev, name}
	r := a.rings[k]
	if r == nil {
		r = &ring{stats: a.ringStatsFor(dev, name)}
		a.rings[k] = r
	}
	if t > r.last {
		r.last = t
	}
	return r
}

// ringDone takes the predecessor snapshot for j and records j's hardware done.
func (a *Assembler) ringDone(j *job) {
	r := j.ring
	if r == nil {
		return
	}
	j.prevDone, j.hasPrevDone = r.lastDone, r.has
	p := &j.out.Points
	done := p[PointFinished].Time
	if p[PointHWDone].Known() {
		done = p[PointHWDone].Time
	}
	if !r.has || done > r.lastDone {
		r.lastDone, r.has = done, true
	}
	if done > r.last {
		r.last = done
	}
}

// ringStatsFor returns the Stats.Rings entry of a ring, "other" beyond maxRingStats.
func (a *Assembler) ringStatsFor(dev, name string) *RingStats {
	if dev != "" {
		name = dev + "/" + name
	}
	rs := a.ringStats[name]
	if rs == nil {
		if len(a.ringStats) >= maxRingStats {
			name = "other"
			rs = a.ringStats[name]
		}
		if rs == nil {
			rs = &RingStats{}
			a.ringStats[name] = rs
		}
	}
	return rs
}

// countRing adds an output job to Stats.Rings.
func (a *Assembler) countRing(j *job) {
	if j.ring == nil {
		return
	}
	rs := j.ring.stats
	rs.Jobs++
	if sp, ok := j.out.Stage(StageExecution); ok && sp.End > sp.Start {
		rs.Busy += time.Duration(sp.End - sp.Start)
	}
}
