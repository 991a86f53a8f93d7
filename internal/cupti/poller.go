//go:build linux

// The Poller: what a source runs to read every channel of the node. It finds new
// channels, keeps one per process, beats and steers each (control from a policy),
// drains it into a Decoder, and closes it once its process is gone, after a last drain.

package cupti

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"golang.org/x/sys/unix"
)

// PollerConfig configures a Poller.
type PollerConfig struct {
	// ProcRoot is where processes are found (default /proc).
	ProcRoot string
	// Interval is how often every channel is visited: beaten, steered and drained
	// (default 100ms). The library never waits for the collector: a ring fills in
	// what the process produces in this time, at most.
	Interval time.Duration
	// RescanInterval is how often ProcRoot is scanned for new channels (default 1s;
	// <0: only when Run starts). A scan reads the descriptors of every process not
	// read already.
	RescanInterval time.Duration
	// Want says whether the timeline of process pid (the collector's pid) should be
	// on; asked at every visit. nil: on for every process.
	Want func(pid uint32) bool
	// Sink receives the decoded frames, from Run's goroutine.
	Sink Sink
}

// ChannelStats is one channel's state and counts at the latest visit.
type ChannelStats struct {
	PID    uint32 // the collector's pid of the process
	FD     int
	NSPID  uint32 // its pid in its own namespace (the header's)
	Sealed bool   // sealed against shrinking
	// What the library says.
	State                          State
	StateMsg, CUPTIPath            string
	CUPTIVersion, KernelRecordSize uint32
	Counters                       Counters
	// ControlOn is what the header asks for; ControlAcked whether the library has
	// acted on the last write; ControlWrites how many writes this collector made.
	ControlOn, ControlAcked bool
	ControlWrites           uint64
	Ring                    RingStats
	Decoder                 DecoderStats
	// LastCorrupt says what the latest corrupt drain found ("" if none).
	LastCorrupt string
}

// Totals are counts summed over channels.
type Totals struct {
	Counters Counters
	Ring     RingStats
	Decoder  DecoderStats
}

// Add adds one channel's counts.
func (t *Totals) Add(c *ChannelStats) {
	t.Counters.Add(c.Counters)
	t.Ring.Add(c.Ring)
	t.Decoder.Add(c.Decoder)
}

// PollerStats is the Poller's state after its latest visit.
type PollerStats struct {
	Channels []ChannelStats // open, by pid
	// Total sums every channel Run has read, the closed ones included: counters
	// that only grow.
	Total Totals
	// Opened and Closed count channels; OpenFailed the channels found but not opened
	// (LastOpenError says why the latest was), Foreign those refused because they
	// belong to another process (inherited over fork: not retried); Faults the
	// channels closed because their mapping faulted; ScanErrors the scans of ProcRoot
	// that failed.
	Opened, Closed, OpenFailed, Foreign, Faults, ScanErrors, Rescans uint64
	LastOpenError                                                    string
}

// Poller reads every channel under ProcRoot. Run it once.
type Poller struct {
	cfg     PollerConfig
	chans   map[int]*polled
	foreign map[Found][2]uint64 // refused as foreign: dev/ino, not opened again while the same
	closed  Totals
	stats   PollerStats // counts; Channels and Total are filled by publish

	mu   sync.Mutex
	snap PollerStats
}

type polled struct {
	ch    *Channel
	dec   *Decoder
	stats ChannelStats
}

// NewPoller checks cfg and applies its defaults.
func NewPoller(cfg PollerConfig) (*Poller, error) {
	if cfg.Sink == nil {
		return nil, errors.New("cupti.NewPoller: no Sink")
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if cfg.RescanInterval == 0 {
		cfg.RescanInterval = time.Second
	}
	return &Poller{cfg: cfg, chans: map[int]*polled{}, foreign: map[Found][2]uint64{}}, nil
}

// Stats returns the state after the latest visit. Safe to call from any goroutine.
func (p *Poller) Stats() PollerStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.snap
	s.Channels = slices.Clone(s.Channels)
	return s
}

// Run visits the channels every Interval until ctx is done, then asks each library to
// turn off, drains each once more and closes them, and returns nil. It returns an error
// at once if ProcRoot cannot be read at the start.
func (p *Poller) Run(ctx context.Context) error {
	if err := p.rescan(); err != nil {
		return err
	}
	defer p.closeAll()
	p.visitAll()
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	next := time.Now().Add(p.cfg.RescanInterval)
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			if p.cfg.RescanInterval > 0 && !now.Before(next) {
				_ = p.rescan() // counted; the channels open are still read
				next = now.Add(p.cfg.RescanInterval)
			}
			p.visitAll()
		}
	}
}

// rescan opens the channels of processes that have none open.
func (p *Poller) rescan() error {
	p.stats.Rescans++
	found, err := find(p.cfg.ProcRoot, func(pid int) bool { return p.chans[pid] != nil })
	if err != nil {
		p.stats.ScanErrors++
		return err
	}
	seen := map[Found]bool{}
	for _, f := range found {
		seen[f] = true
		if p.chans[f.PID] != nil {
			continue // one per process: the first found
		}
		id, ok := statID(f.Path)
		if old, known := p.foreign[f]; known && ok && old == id {
			continue
		}
		ch, err := OpenChannel(p.cfg.ProcRoot, f.PID, f.FD)
		if err != nil {
			if errors.Is(err, ErrForeignChannel) {
				p.stats.Foreign++
				p.foreign[f] = id
				continue
			}
			p.stats.OpenFailed++
			p.stats.LastOpenError = err.Error()
			continue
		}
		p.stats.Opened++
		p.chans[f.PID] = &polled{ch: ch, dec: NewDecoder(uint32(f.PID), p.cfg.Sink),
			stats: ChannelStats{PID: uint32(f.PID), FD: f.FD, NSPID: ch.NSPID, Sealed: ch.Sealed}}
	}
	for f := range p.foreign {
		if !seen[f] {
			delete(p.foreign, f)
		}
	}
	return nil
}

func statID(path string) ([2]uint64, bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return [2]uint64{}, false
	}
	return [2]uint64{st.Dev, st.Ino}, true
}

// visitAll visits every channel and publishes the stats.
func (p *Poller) visitAll() {
	now := kclock.MonoNow()
	for pid, c := range p.chans {
		reason, err := c.ch.Gone()
		if err == nil && reason == "" {
			err = p.visit(c, now, false)
		} else if err == nil {
			// Gone: what is in the ring is still there (the mapping keeps the memfd
			// alive), drained once more before closing.
			err = p.visit(c, now, true)
		}
		if err != nil {
			p.stats.Faults++
			c.stats.LastCorrupt = err.Error()
		}
		if err != nil || reason != "" {
			p.close(pid, c)
		}
	}
	p.publish()
}

// visit beats, steers (unless last) and drains one channel, then reads its header,
// all under the fault guard.
func (p *Poller) visit(c *polled, now int64, last bool) error {
	return guard(func() {
		r := c.ch.Ring
		if !last {
			r.Beat(uint64(now))
			want := p.cfg.Want == nil || p.cfg.Want(c.stats.PID)
			if r.Control() != want {
				r.SetControl(want)
				c.stats.ControlWrites++
			}
		}
		p.drain(c)
	})
}

func (p *Poller) drain(c *polled) {
	r := c.ch.Ring
	if _, err := r.Drain(c.dec.Frame); err != nil {
		c.stats.LastCorrupt = err.Error()
	}
	s := &c.stats
	s.State, s.StateMsg, s.CUPTIPath = r.LibState(), r.StateMsg(), r.CUPTIPath()
	s.CUPTIVersion, s.KernelRecordSize = r.CUPTIVersion(), r.KernelRecordSize()
	s.Counters = r.Counters()
	s.ControlOn, s.ControlAcked = r.Control(), r.Acked()
	s.Ring, s.Decoder = r.Stats(), c.dec.Stats()
}

func (p *Poller) close(pid int, c *polled) {
	p.closed.Add(&c.stats)
	_ = c.ch.Close()
	delete(p.chans, pid)
	p.stats.Closed++
	// A sink that holds work for a process learns that its records are all in.
	if g, ok := p.cfg.Sink.(interface{ Gone(pid uint32) }); ok {
		g.Gone(uint32(pid))
	}
}

// closeAll ends Run: each library still in its process is asked off (a collector that
// stops reading should not leave CUPTI's cost on), each ring drained once more.
func (p *Poller) closeAll() {
	for pid, c := range p.chans {
		reason, err := c.ch.Gone()
		if err == nil {
			err = guard(func() {
				if reason == "" && c.ch.Ring.Control() {
					c.ch.Ring.SetControl(false)
					c.stats.ControlWrites++
				}
				p.drain(c)
			})
		}
		if err != nil {
			p.stats.Faults++
			c.stats.LastCorrupt = err.Error()
		}
		p.close(pid, c)
	}
	p.publish()
}

// publish makes the stats of this visit what Stats returns.
func (p *Poller) publish() {
	s := p.stats
	s.Total = p.closed
	s.Channels = make([]ChannelStats, 0, len(p.chans))
	for _, c := range p.chans {
		s.Channels = append(s.Channels, c.stats)
		s.Total.Add(&c.stats)
	}
	slices.SortFunc(s.Channels, func(a, b ChannelStats) int { return int(a.PID) - int(b.PID) })
	p.mu.Lock()
	p.snap = s
	p.mu.Unlock()
}
