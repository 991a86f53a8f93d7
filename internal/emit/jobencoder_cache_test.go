// What the JobEncoder encodes once and copies afterwards (jobencoder_kvcache.go,
// jobencoder_json.go, jobencoder_ids.go) against the builder and pdata's marshallers where
// the copies could go wrong: timestamps at and below one second (no seconds to copy, or
// none written), a stage outside the name table, and a value whose memory is rewritten
// in place between batches (the same address, other bytes).
package emit

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
)

func TestJobEncoderSameAsBuilderOnSmallTimes(t *testing.T) {
	base := -testClock.Offset // source time of wall time 0
	var batch []*assemble.Job
	for i, wall := range []int64{-5, 0, 1, 999_999_999, 1_000_000_000, 1_000_000_001, 12_345_678_901, 99_999_999_999} {
		j := fullJob()
		j.Finished.Seqno = uint64(1000 + i)
		j.Start, j.End = base+wall, base+wall+1_000_000_000
		for k := range j.Stages {
			j.Stages[k].Start, j.Stages[k].End = base+wall+int64(k), base+wall+int64(k)*999_999_999
		}
		batch = append(batch, j)
	}
	odd := fullJob() // a stage number past the names: named as Stage.String names it
	odd.Finished.Seqno = 2000
	odd.Stages = append(odd.Stages[:1], assemble.StageSpan{Stage: assemble.Stage(14), Start: 1, End: 2})
	batch = append(batch, odd)
	for _, c := range encoderCases {
		t.Run(c.String(), func(t *testing.T) {
			sameAsBuilder(t, c, [][]*assemble.Job{batch, batch[:3]}, nil)
		})
	}
}

func TestJobEncoderValueRewrittenInPlace(t *testing.T) {
	for _, c := range encoderCases {
		t.Run(c.String(), func(t *testing.T) {
			mem := []byte("worker-thread-a")
			inPlace := unsafe.String(&mem[0], len(mem))
			encode := func(e *JobEncoder, seqno uint64, comm, rule string) []byte {
				j := fullJob()
				j.Finished.Seqno, j.Comm, j.Stages[0].Rule = seqno, comm, rule
				e.Append(j)
				b := e.Take()
				defer b.Release()
				return b.AppendTo(nil)
			}
			got := NewJobEncoder(testClock, c.format)
			want := NewJobEncoder(testClock, c.format)
			encode(got, 1, inPlace, inPlace)
			encode(want, 1, "worker-thread-a", "worker-thread-a")
			copy(mem, "worker-thread-b")
			if g, w := encode(got, 2, inPlace, inPlace), encode(want, 2, "worker-thread-b", "worker-thread-b"); !bytes.Equal(g, w) {
				t.Fatalf("a value rewritten in place was encoded as it was before:\n got %q\nwant %q", g, w)
			}
		})
	}
}
