// The live reader's watermark against a producer stalled between reserving its ring buffer
// record and committing it (docs/correlation.md, "reorder window"): Run asks the reader where
// it stopped at the end of each poll, and holds the watermark while one record stays
// uncommitted.
package probe

import (
	"sync/atomic"
	"time"
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
