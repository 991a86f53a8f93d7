// The live source's counters: Stats and Losses read the kernel's per-CPU loss counters
// (the types are sink.go's, the same on every system).

package cuda

// Stats returns what the source counted so far.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.ByAPI = make(map[string]uint64, len(s.stats.ByAPI))
	for k, v := range s.stats.ByAPI {
		st.ByAPI[k] = v
	}
	if !s.closed {
		st.Lost, st.StaleFrames, st.ReturnsWithoutFrame = s.kernelCounts()
	}
	st.Lost += s.lostAtStop.Load()
	return st
}

// Losses returns what Stats says was lost, without copying the rest.
func (s *Source) Losses() Losses {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := Losses{RingBuffer: s.stats.Lost, MissedReturn: s.stats.StaleFrames, NoFrame: s.stats.ReturnsWithoutFrame,
		EntryPointsDropped: s.stats.EntryPointsDropped}
	if !s.closed {
		l.RingBuffer, l.MissedReturn, l.NoFrame = s.kernelCounts()
	}
	l.RingBuffer += s.lostAtStop.Load()
	return l
}

// kernelCounts sums the kernel's per-CPU loss counters (under s.mu, before Close): ring
// reserve failures (`lost`, ghostdriver.h) and the frame losses of cuda.c.
func (s *Source) kernelCounts() (ring, missedReturn, noFrame uint64) {
	sum := func(m string, i uint32) (n uint64) {
		var perCPU []uint64
		if err := s.coll.Maps[m].Lookup(i, &perCPU); err == nil {
			for _, v := range perCPU {
				n += v
			}
		}
		return n
	}
	return sum(cudaBPFMapLost, 0), sum(cudaBPFMapCudaFrameLosses, uint32(cudaBPFCudaFrameLossCUDA_LOSS_MISSED_RETURN)),
		sum(cudaBPFMapCudaFrameLosses, uint32(cudaBPFCudaFrameLossCUDA_LOSS_NO_FRAME))
}
