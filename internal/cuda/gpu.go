// The GPU's own timeline joined to the host's submissions: CUPTI's kernel records and
// the API records of the launch calls (internal/cupti reads them from the injection
// library's channel) are attached to the cuda.submission whose launch calls made them.
// A submission of a process whose timeline is on is held until the process's records for
// its time have arrived (a flush mark at or after its sync's return), then released with
// its GPUWork; everything else passes straight through.
//
// The join is measured end to end, never guessed from order:
//   - kernel → launch API record: CUPTI's correlation id (the kernel carries the id of the
//     runtime or driver call that launched it; a graph's kernels all carry the graph
//     launch's);
//   - API record → the uprobe's launch op: the same process, the API record's interval
//     inside the op's entry..return (CUPTI's clock converted to CLOCK_MONOTONIC with the
//     batch's clock pair), the closest such op winning. CUPTI's thread id is not the OS
//     thread id (measured: the low 32 bits of pthread_self()): the fuser learns which is
//     which from launches that had one candidate record only, and from then on a thread's
//     op takes only its own thread's records (two threads launching at the same time
//     have overlapping windows).

package cuda

import (
	"math"
	"sort"
)

// GPUKernel is one kernel's execution as CUPTI measured it (times CLOCK_MONOTONIC ns).
type GPUKernel struct {
	PID                     uint32
	Start, End              int64
	Correlation             uint32
	Device, Context, Stream uint32
	Grid, Block             [3]uint32
	GraphID                 uint32
	Name                    string
	// SMs is the device's multiprocessor count as the process's driver reported it
	// (GPUDevice), 0 when it did not: set by the fuser.
	SMs uint32
}

// Blocks is the kernel's grid size in thread blocks.
func (k *GPUKernel) Blocks() uint64 {
	return uint64(k.Grid[0]) * uint64(k.Grid[1]) * uint64(k.Grid[2])
}

// SMWeight is min(1, blocks ÷ the device's SMs): the share of the device a kernel can
// occupy at most (one block runs on one SM at a time, so a kernel of fewer blocks than
// SMs leaves the rest idle). 0 when the SM count is unknown.
func (k *GPUKernel) SMWeight() float64 {
	if k.SMs == 0 {
		return 0
	}
	return min(1, float64(k.Blocks())/float64(k.SMs))
}

// GPUDevice is a device a process sees (its driver's report when the timeline came on).
type GPUDevice struct {
	PID, Device, SMs uint32
}

// GPUAPI is the API record of one launch call (times CLOCK_MONOTONIC ns).
type GPUAPI struct {
	PID         uint32
	Start, End  int64
	Correlation uint32
	CBID        uint32
	Driver      bool   // the driver API's record, else the runtime's
	TID         uint32 // CUPTI's thread id (not the OS thread id: the low 32 bits of pthread_self)
}

// GPUState is a change of a process's timeline (on, off, backed off, ...) at Mono.
type GPUState struct {
	PID  uint32
	Mono int64
	On   bool
}

// GPUWork is what the GPU did for one submission.
type GPUWork struct {
	// Kernels of the submission's launches, in start order (at most MaxKernels kept,
	// KernelCount counts them all).
	Kernels     []GPUKernel
	KernelCount int
	// FirstStart is the first kernel's start, LastEnd the last kernel's end; Busy the
	// union of the kernel intervals (≤ LastEnd-FirstStart: the rest is idle time inside
	// the execution window).
	FirstStart, LastEnd, Busy int64
	// SMWeightedBusy is Busy with each kernel weighted by its SMWeight (the union taken in
	// start order: a kernel counts only past the latest end before it, at its own weight);
	// SMKnown says every kernel's device reported its SM count (else it is not set).
	SMWeightedBusy int64
	SMKnown        bool
	// QueueFrom is the return of the first launch call whose kernel started first: the
	// GPU queue stage runs from it to FirstStart.
	QueueFrom int64
	// Launches matched to an API record, and those that found none (their kernels are
	// not in the submission).
	Matched, Unmatched int
	// Complete: a flush mark after the sync's return arrived, so every kernel that ended
	// before it is here; false when the wait timed out or the process went away.
	Complete bool
	// ClockRuleViolations counts kernels that started before their launch call entered
	// or ended after the sync that waited for them returned (the clock rule; a nonzero
	// count means the clock conversion is off).
	ClockRuleViolations int
	// Devices the kernels ran on.
	Devices []uint32
	// Top are the kernel names by GPU time, largest first (at most TopKernels).
	Top []KernelTime
}

// KernelTime is one kernel name's share of a submission.
type KernelTime struct {
	Name  string
	Count int
	Time  int64
}

// FuserConfig bounds the fuser.
type FuserConfig struct {
	// MaxWait is how long a submission waits for its records after its sync returned
	// (source clock ns; default 2 s). Released without them it is marked incomplete.
	MaxWait int64
	// MaxPending submissions held at once (default 4096); more pass without GPU work,
	// counted in Stats.PendingFull.
	MaxPending int
	// MaxRecords per process kept for joining (default 1 << 18 API records and as many
	// kernels); older ones are dropped first, counted.
	MaxRecords int
	// MaxKernels kept per submission (default 512); TopKernels names (default 5).
	MaxKernels, TopKernels int
	// Tolerance widens a launch op's window when looking for its API record (default
	// 2 µs): the conversion of CUPTI's clock errs by at most half the batch's clock-pair
	// spread (sub-µs measured), and CUPTI stamps a call inside the function, after the
	// uprobe's entry. Wider would let an op with no record of its own (a launch made as
	// the timeline came on) take another thread's record made at the same time.
	Tolerance int64
}

// FuserStats counts what the fuser did.
type FuserStats struct {
	Fused, Incomplete, Uncovered, PendingFull uint64
	LaunchesMatched, LaunchesUnmatched        uint64
	KernelsAttributed, KernelsUnattributed    uint64
	RecordsEvicted, ClockRuleViolations       uint64
}

type gpuProc struct {
	on      bool
	changes []GPUState // state changes in arrival order (bounded)
	mark    int64      // the latest flush mark: records up to here have arrived
	apis    []GPUAPI   // sorted by Start when unsorted is false
	// unsorted: an API record arrived out of start order since apis was last sorted
	// (CUPTI hands buffers over per thread and out of order); sorted once before use,
	// not shifted per record (a memmove of up to MaxRecords records each time).
	unsorted bool
	kernels  map[uint32][]GPUKernel
	nk       int
	used     map[uint32]bool
	// CUPTI thread id ↔ OS thread id, learnt from unambiguous launches.
	osTID, cuptiTID map[uint32]uint32
	// sms: each device's multiprocessor count (GPUDevice).
	sms map[uint32]uint32
	// gone: the process exited and its channel was drained for the last time (at goneAt,
	// the fuser's latest watermark).
	gone   bool
	goneAt int64
}

// GPUSink takes a timeline source's records (internal/cupti's channels); the Fuser is one.
type GPUSink interface {
	Kernel(GPUKernel)
	API(GPUAPI)
	State(GPUState)
	// Mark: every record of pid for work finished before mono has been delivered.
	Mark(pid uint32, mono int64)
	// Device: a device pid sees (sent when its timeline comes on, before its kernels).
	Device(GPUDevice)
	// Gone: pid's channel was drained for the last time (the process exited).
	Gone(pid uint32)
}

var _ GPUSink = (*Fuser)(nil)

// Fuser joins GPU records to submissions. Not safe for concurrent use.
type Fuser struct {
	cfg     FuserConfig
	emit    func(*Submission)
	procs   map[uint32]*gpuProc
	pending []*Submission
	now     int64 // the latest watermark
	Stats   FuserStats
}

// NewFuser returns a fuser that hands every submission, with or without GPU work, to emit.
func NewFuser(cfg FuserConfig, emit func(*Submission)) *Fuser {
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 2e9
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 4096
	}
	if cfg.MaxRecords <= 0 {
		cfg.MaxRecords = 1 << 18
	}
	if cfg.MaxKernels <= 0 {
		cfg.MaxKernels = 512
	}
	if cfg.TopKernels <= 0 {
		cfg.TopKernels = 5
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = 2e3
	}
	return &Fuser{cfg: cfg, emit: emit, procs: map[uint32]*gpuProc{}}
}

func (f *Fuser) proc(pid uint32) *gpuProc {
	p := f.procs[pid]
	if p == nil {
		p = &gpuProc{kernels: map[uint32][]GPUKernel{}, used: map[uint32]bool{}, osTID: map[uint32]uint32{},
			cuptiTID: map[uint32]uint32{}, sms: map[uint32]uint32{}}
		f.procs[pid] = p
	}
	return p
}

// State records a change of pid's timeline.
func (f *Fuser) State(s GPUState) {
	p := f.proc(s.PID)
	p.on = s.On
	if len(p.changes) == 64 {
		p.changes = p.changes[1:]
	}
	p.changes = append(p.changes, s)
	f.release(false)
}

// Mark says every record of pid up to mono has arrived (a flush mark).
func (f *Fuser) Mark(pid uint32, mono int64) {
	p := f.proc(pid)
	if mono > p.mark {
		p.mark = mono
	}
	f.release(false)
}

// API adds a launch call's API record.
func (f *Fuser) API(a GPUAPI) {
	p := f.proc(a.PID)
	if len(p.apis) >= f.cfg.MaxRecords {
		f.evict(a.PID, p)
	}
	if n := len(p.apis); n > 0 && p.apis[n-1].Start > a.Start {
		p.unsorted = true
	}
	p.apis = append(p.apis, a)
}

// sortAPIs puts a process's API records in start order (stable: equal starts keep their
// arrival order).
func (p *gpuProc) sortAPIs() {
	if p.unsorted {
		sort.SliceStable(p.apis, func(i, j int) bool { return p.apis[i].Start < p.apis[j].Start })
		p.unsorted = false
	}
}

// Device records a device's SM count for pid's kernels.
func (f *Fuser) Device(d GPUDevice) {
	if d.SMs > 0 {
		f.proc(d.PID).sms[d.Device] = d.SMs
	}
}

// Kernel adds a kernel record.
func (f *Fuser) Kernel(k GPUKernel) {
	p := f.proc(k.PID)
	if p.nk >= f.cfg.MaxRecords {
		f.evict(k.PID, p)
	}
	p.kernels[k.Correlation] = append(p.kernels[k.Correlation], k)
	p.nk++
}

// evict drops the older half of a process's records (API records by start; kernels
// whose correlation is no longer among them).
func (f *Fuser) evict(pid uint32, p *gpuProc) {
	p.sortAPIs()
	half := len(p.apis) / 2
	keep := map[uint32]bool{}
	for _, a := range p.apis[half:] {
		keep[a.Correlation] = true
	}
	f.Stats.RecordsEvicted += uint64(half)
	p.apis = append(p.apis[:0], p.apis[half:]...)
	for c, ks := range p.kernels {
		if !keep[c] || p.nk >= f.cfg.MaxRecords {
			f.Stats.RecordsEvicted += uint64(len(ks))
			f.Stats.KernelsUnattributed += uint64(len(ks))
			p.nk -= len(ks)
			delete(p.kernels, c)
			delete(p.used, c)
		}
	}
}

// Gone says pid exited and its channel was drained for the last time: every record it
// made is here. Its last submissions may still be on their way from the uprobes' ring,
// so the process is forgotten only MaxWait later (Watermark).
func (f *Fuser) Gone(pid uint32) {
	p := f.procs[pid]
	if p == nil {
		return
	}
	p.gone, p.goneAt, p.mark = true, f.now, math.MaxInt64
	f.release(false)
}

// forget drops a gone process's records, counting the kernels no submission took.
func (f *Fuser) forget(pid uint32, p *gpuProc) {
	for _, ks := range p.kernels {
		f.Stats.KernelsUnattributed += uint64(len(ks))
	}
	delete(f.procs, pid)
}

// Submission takes a closed submission from the assembler.
func (f *Fuser) Submission(s *Submission) {
	p := f.procs[s.PID]
	if p == nil || !p.coveredAt(s.Start) {
		f.Stats.Uncovered++
		f.emit(s)
		return
	}
	if len(f.pending) >= f.cfg.MaxPending {
		f.Stats.PendingFull++
		f.emit(s)
		return
	}
	f.pending = append(f.pending, s)
	f.release(false)
}

// Watermark releases what waited longer than MaxWait (now: source clock ns).
func (f *Fuser) Watermark(now int64) {
	f.now = now
	for pid, p := range f.procs {
		if p.gone && now-p.goneAt > f.cfg.MaxWait {
			f.forget(pid, p)
		}
	}
	var late []*Submission
	for _, s := range f.pending {
		if now-s.End > f.cfg.MaxWait {
			late = append(late, s)
		}
	}
	for _, s := range late {
		f.fuse(s, false)
	}
	if len(late) > 0 {
		f.dropPending(func(s *Submission) bool { return now-s.End > f.cfg.MaxWait })
	}
	f.release(false)
}

// Flush releases everything (end of input).
func (f *Fuser) Flush() {
	f.release(true)
	for pid, p := range f.procs {
		if p.gone {
			f.forget(pid, p)
		}
	}
}

func (f *Fuser) dropPending(drop func(*Submission) bool) {
	keep := f.pending[:0]
	for _, s := range f.pending {
		if !drop(s) {
			keep = append(keep, s)
		}
	}
	clear(f.pending[len(keep):])
	f.pending = keep
}

// release hands on, in arrival order, the pending submissions whose records have all
// arrived (or all of them when all is set).
func (f *Fuser) release(all bool) {
	n := 0
	for _, s := range f.pending {
		p := f.procs[s.PID]
		ready := p != nil && p.mark >= s.End
		if !ready && !all {
			break // keep arrival order: spans of one process stay in order
		}
		f.fuse(s, ready)
		n++
	}
	if n > 0 {
		clear(f.pending[:n])
		f.pending = append(f.pending[:0], f.pending[n:]...)
	}
}

// coveredAt says whether the timeline was on at t by the state changes seen.
func (p *gpuProc) coveredAt(t int64) bool {
	on := false
	for _, c := range p.changes {
		if c.Mono > t {
			break
		}
		on = c.On
	}
	return on
}

// covered says whether the timeline was on for all of [start, end].
func (p *gpuProc) covered(start, end int64) bool {
	if !p.coveredAt(start) {
		return false
	}
	for _, c := range p.changes {
		if c.Mono > start && c.Mono <= end && !c.On {
			return false
		}
	}
	return true
}

// fuse attaches the GPU work of s and emits it.
func (f *Fuser) fuse(s *Submission, complete bool) {
	p := f.procs[s.PID]
	if p == nil || !p.covered(s.Start, s.End) {
		f.Stats.Uncovered++
		f.emit(s)
		return
	}
	p.sortAPIs()
	w := &GPUWork{Complete: complete}
	var firstQueue int64
	for i := range s.Ops {
		op := &s.Ops[i]
		if op.Info().Class != ClassLaunch {
			continue
		}
		a, ok := p.matchAPI(op.TID, op.Start-f.cfg.Tolerance, op.End+f.cfg.Tolerance, op.Start, op.End)
		if !ok {
			w.Unmatched++
			continue
		}
		w.Matched++
		p.used[a.Correlation] = true
		for _, k := range p.kernels[a.Correlation] {
			// The device's SM count as known now: its frame may come after the kernel's
			// record (the library writes it once the driver answers).
			k.SMs = p.sms[k.Device]
			w.KernelCount++
			if len(w.Kernels) < f.cfg.MaxKernels {
				w.Kernels = append(w.Kernels, k)
			}
			if w.FirstStart == 0 || k.Start < w.FirstStart {
				w.FirstStart = k.Start
				firstQueue = op.End
			}
			if k.End > w.LastEnd {
				w.LastEnd = k.End
			}
			if k.Start < op.Start || (s.Outcome == Synced && k.End > s.End) {
				w.ClockRuleViolations++
			}
		}
		delete(p.kernels, a.Correlation)
	}
	w.QueueFrom = firstQueue
	sort.Slice(w.Kernels, func(i, j int) bool { return w.Kernels[i].Start < w.Kernels[j].Start })
	w.Busy = unionLength(w.Kernels)
	w.SMWeightedBusy, w.SMKnown = smWeighted(w.Kernels)
	w.Devices, w.Top = summarize(w.Kernels, f.cfg.TopKernels)
	p.nk -= w.KernelCount
	s.GPU = w
	f.Stats.Fused++
	if !complete {
		f.Stats.Incomplete++
	}
	f.Stats.LaunchesMatched += uint64(w.Matched)
	f.Stats.LaunchesUnmatched += uint64(w.Unmatched)
	f.Stats.KernelsAttributed += uint64(w.KernelCount)
	f.Stats.ClockRuleViolations += uint64(w.ClockRuleViolations)
	p.prune(s.Start - f.cfg.MaxWait)
	f.emit(s)
}

// matchAPI finds the unused API record inside [lo, hi] of the op's thread (as far as
// the thread ids are known) that overlaps the op [start, end] most (the launch the op
// made), preferring one that launched kernels; a launch with one candidate teaches the
// fuser which CUPTI thread id is the op's thread.
func (p *gpuProc) matchAPI(tid uint32, lo, hi, start, end int64) (GPUAPI, bool) {
	i := sort.Search(len(p.apis), func(j int) bool { return p.apis[j].Start >= lo })
	best, bestScore, inside := -1, int64(-1), 0
	for ; i < len(p.apis) && p.apis[i].Start <= hi; i++ {
		a := p.apis[i]
		if a.End > hi || p.used[a.Correlation] {
			continue
		}
		if os, known := p.osTID[a.TID]; known && os != tid {
			continue // another thread's launch
		}
		if c, known := p.cuptiTID[tid]; known && c != a.TID {
			continue
		}
		ov := min(a.End, end) - max(a.Start, start)
		score := ov
		if a.Start >= start && a.End <= end {
			// Strictly inside the op: a record of this call (another thread's, running at
			// the same time, can be too; the thread map sorts those out once learnt). The
			// tolerance's partial overlaps are a fallback only.
			inside++
			score += 1 << 41
		}
		if len(p.kernels[a.Correlation]) > 0 {
			score += 1 << 40
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return GPUAPI{}, false
	}
	a := p.apis[best]
	if inside == 1 && a.Start >= start && a.End <= end {
		// One record strictly inside the op's own window: the op's thread. A mapping
		// that contradicts it was learnt wrongly and is forgotten.
		if c, known := p.cuptiTID[tid]; !known {
			if _, taken := p.osTID[a.TID]; !taken {
				p.cuptiTID[tid], p.osTID[a.TID] = a.TID, tid
			}
		} else if c != a.TID {
			delete(p.osTID, c)
			delete(p.cuptiTID, tid)
		}
	}
	return a, true
}

// prune drops API records that started before t (their submissions are gone).
func (p *gpuProc) prune(t int64) {
	i := sort.Search(len(p.apis), func(j int) bool { return p.apis[j].Start >= t })
	for _, a := range p.apis[:i] {
		delete(p.used, a.Correlation)
	}
	p.apis = append(p.apis[:0], p.apis[i:]...)
}

// unionLength is the length of the union of the kernels' intervals (sorted by start).
func unionLength(ks []GPUKernel) int64 {
	var total, curS, curE int64
	for i, k := range ks {
		if i == 0 || k.Start > curE {
			total += curE - curS
			curS, curE = k.Start, k.End
		} else if k.End > curE {
			curE = k.End
		}
	}
	if len(ks) > 0 {
		total += curE - curS
	}
	return total
}

// smWeighted is the union of the kernels' intervals (sorted by start) with each part
// weighted by the SM weight of the kernel that extended the union over it; known is
// false when a kernel's device did not report its SM count.
func smWeighted(ks []GPUKernel) (ns int64, known bool) {
	var horizon int64
	var total float64
	for i := range ks {
		k := &ks[i]
		if k.SMs == 0 {
			return 0, false
		}
		from := max(k.Start, horizon)
		if k.End > from {
			total += float64(k.End-from) * k.SMWeight()
		}
		horizon = max(horizon, k.End)
	}
	return int64(total + 0.5), len(ks) > 0
}

func summarize(ks []GPUKernel, top int) ([]uint32, []KernelTime) {
	var devs []uint32
	seen := map[uint32]bool{}
	by := map[string]*KernelTime{}
	for _, k := range ks {
		if !seen[k.Device] {
			seen[k.Device] = true
			devs = append(devs, k.Device)
		}
		t := by[k.Name]
		if t == nil {
			t = &KernelTime{Name: k.Name}
			by[k.Name] = t
		}
		t.Count++
		t.Time += k.End - k.Start
	}
	out := make([]KernelTime, 0, len(by))
	for _, t := range by {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Time != out[j].Time {
			return out[i].Time > out[j].Time
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > top {
		out = out[:top]
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	return devs, out
}
