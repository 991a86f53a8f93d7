// Package replay is the event.Source that reads an ftrace text capture (tracefs `trace`
// or `trace_pipe` output, or `trace-cmd report` text; plain or gzip) and delivers its
// events, as fast as possible or paced like the original.
//
// This file holds the configuration: what New validates and how an epoch is written.
package replay

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config says what to replay and how.
type Config struct {
	Path string
	// Epoch is the wall-clock time (unix ns) of capture timestamp 0: a span's wall time is
	// Epoch + capture time, exactly. Set when HasEpoch or Epoch != 0; unset, the capture's
	// first event is anchored to the time Run starts.
	Epoch    int64
	HasEpoch bool
	// Speed: 0 = as fast as possible, 1 = real time, 2 = twice as fast.
	Speed float64
	// BatchSize is the number of events per Sink.Consume call (default 256).
	BatchSize int
}

// DefaultBatchSize is used when Config.BatchSize is 0.
const DefaultBatchSize = 256

func (c Config) epochSet() bool { return c.HasEpoch || c.Epoch != 0 }

// New validates cfg and returns a Source. It checks that the file exists, is not a
// directory and, for a regular file, can be opened; it reads nothing.
func New(cfg Config) (*Source, error) {
	if cfg.Path == "" {
		return nil, errors.New("replay: no capture path")
	}
	if cfg.Speed < 0 || math.IsNaN(cfg.Speed) || math.IsInf(cfg.Speed, 0) {
		return nil, fmt.Errorf("replay: speed %v: want 0 (as fast as possible) or a positive factor", cfg.Speed)
	}
	if cfg.BatchSize < 0 {
		return nil, fmt.Errorf("replay: batch size %d is negative", cfg.BatchSize)
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	fi, err := os.Stat(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("replay: capture %w", err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("replay: capture %s is a directory", cfg.Path)
	}
	// Opening a FIFO waits for its writer: only regular files are opened here.
	if fi.Mode().IsRegular() {
		f, err := os.Open(cfg.Path)
		if err != nil {
			return nil, fmt.Errorf("replay: capture %w", err)
		}
		f.Close()
	}
	return newSource(cfg), nil
}

// ParseEpoch reads an epoch: unix nanoseconds ("1700000000000000000") or an RFC 3339
// time with optional fractional seconds ("2023-11-14T22:13:20.5Z").
func ParseEpoch(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("epoch is empty")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	} else if isInteger(s) {
		return 0, fmt.Errorf("epoch %q: unix nanoseconds out of range", s)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("epoch %q: want unix nanoseconds or RFC 3339 (2006-01-02T15:04:05.999999999Z07:00)", s)
	}
	// UnixNano is only defined between 1678 and 2262.
	if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
		return 0, fmt.Errorf("epoch %q: outside the range of unix nanoseconds", s)
	}
	return t.UnixNano(), nil
}

func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
