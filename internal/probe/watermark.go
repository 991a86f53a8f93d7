//go:build linux

// The live reader's watermark against a producer stalled between reserving its ring buffer
// record and committing it (docs/correlation.md, "reorder window"): Run asks the reader where
// it stopped at the end of each poll, and holds the watermark while one record stays
// uncommitted.

package probe

import (
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
)

// blockingReader is a recordReader that can say it stopped at a record still being
// written (mmapRing.BlockedAt).
type blockingReader interface {
	BlockedAt() (pos uint64, blocked bool)
}

// maxWatermarkHold bounds how long one record still being written holds the watermark back.
const maxWatermarkHold = time.Second

// watermarkHold decides, at the end of each poll, whether the watermark may move. The
// poll's mark says that everything stamped before it has been committed, which holds unless
// a producer was stalled between its reserve and its commit: its record, and every record
// reserved after it, cannot be read until it is committed, and whatever of them was stamped
// before the mark comes after the watermark; behind the reorder window it is late, so rules
// that depend on order may miss it. So a poll that ends at an uncommitted record does not
// move the watermark. Even the first time: the reader may reach that record long after it
// was reserved (the reader's goroutine or CPU held up, a vCPU of a loaded guest), with
// records stamped before the mark behind it. A record caught in the middle of a normal
// write (microseconds) costs one poll's watermark. One record holds it for at most
// maxWatermarkHold; then it moves anyway (counted, and the caller warns).
type watermarkHold struct {
	pos   uint64 // where reading stopped at an uncommitted record at the last poll's end
	valid bool   // pos is set
	polls int    // polls held at pos
}

// watermarkStats counts the watermark holds of the live reader.
type watermarkStats struct {
	held   atomic.Uint64 // polls whose watermark waited for a record still being written
	forced atomic.Uint64 // times it moved on after maxWatermarkHold
}

// holds says whether this poll's watermark is to wait, and whether the hold just ran out.
// Holds are counted in polls of the configured interval (positive: Config.withDefaults), so
// a slow poll holds longer.
func (h *watermarkHold) holds(r blockingReader, poll time.Duration, st *watermarkStats) (held, forced bool) {
	pos, blocked := r.BlockedAt()
	if !blocked {
		h.valid, h.polls = false, 0
		return false, false
	}
	if !h.valid || h.pos != pos {
		h.pos, h.valid, h.polls = pos, true, 0
	}
	if time.Duration(h.polls+1)*poll > maxWatermarkHold {
		st.forced.Add(1)
		h.polls = 0
		return false, true
	}
	h.polls++
	st.held.Add(1)
	return true, false
}

// behindMark counts records read after a watermark that had already passed their stamp: the
// watermark said everything stamped before it had been read, and this one had not been. The
// assembler counts such events late when they are behind the reorder window too; this says
// how long after its stamp each was read, which tells a producer held up (stamp long before
// the read) from a reader that was (docs/correlation.md, the rig's late events). Deferred
// ioctl entries are stamped at the entry and sent later by design; they are counted apart.
type behindMark struct {
	mark        int64 // the last watermark given
	n, deferred uint64
	maxBehind   int64
	logged      int
}

func (b *behindMark) check(e *event.Event, log *zap.Logger) {
	if b.mark == 0 || e.Time >= b.mark {
		return
	}
	if e.Kind == event.IoctlEnter {
		b.deferred++
		return
	}
	b.n++
	b.maxBehind = max(b.maxBehind, b.mark-e.Time)
	if b.logged < 10 {
		b.logged++
		now := kclock.MonoNow()
		log.Debug("record read after a watermark that had passed its stamp",
			zap.String("hook", e.Name), zap.Int32("cpu", e.CPU), zap.Uint32("tid", e.TID),
			zap.Duration("behind_watermark", time.Duration(b.mark-e.Time)),
			zap.Duration("read_after_stamp", time.Duration(now-e.Time)),
			zap.Duration("watermark_age", time.Duration(now-b.mark)))
	}
}

func (b *behindMark) report(log *zap.Logger) {
	if b.n == 0 && b.deferred == 0 {
		return
	}
	log.Info("records read after a watermark that had passed their stamp",
		zap.Uint64("records", b.n), zap.Duration("max_behind", time.Duration(b.maxBehind)),
		zap.Uint64("deferred_ioctl_entries", b.deferred))
}
