// nvidia-smi's utilization.gpu samples, read from what
//
//	nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits -lms 100
//
// writes (a header line, units and "%" are accepted too), so that the report can set them
// beside the GPU timeline's coverage of the same window. nvidia-smi prints its local time;
// ReadSMI is given the zone to read it in.

package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// SMISample is one utilization.gpu reading of one device.
type SMISample struct {
	At          int64 // unix ns
	Device      string
	Utilization float64 // 0..1
}

// ReadSMI reads nvidia-smi's CSV. Lines that are not samples (the header, blank lines,
// "[N/A]" readings) are skipped and counted; a line with a timestamp that does not parse
// is an error naming the line.
func ReadSMI(r io.Reader, loc *time.Location) (samples []SMISample, skipped int, err error) {
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		f := strings.Split(sc.Text(), ",")
		if len(f) < 3 {
			skipped++
			continue
		}
		ts, dev := strings.TrimSpace(f[0]), strings.TrimSpace(f[1])
		u := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f[2]), "%"))
		v, perr := strconv.ParseFloat(u, 64)
		if perr != nil { // the header, or [N/A]
			skipped++
			continue
		}
		t, terr := time.ParseInLocation("2006/01/02 15:04:05.000", ts, loc)
		if terr != nil {
			return nil, skipped, fmt.Errorf("nvidia-smi line %d: timestamp %q: want nvidia-smi's 2006/01/02 15:04:05.000 (--query-gpu=timestamp,index,utilization.gpu)", n, ts)
		}
		samples = append(samples, SMISample{At: t.UnixNano(), Device: dev, Utilization: v / 100})
	}
	return samples, skipped, sc.Err()
}

// smiMean is the mean utilization of the devices' samples in [start, end).
func smiMean(s []SMISample, devices string, start, end int64) (float64, int) {
	want := map[string]bool{}
	for _, d := range strings.Split(devices, ",") {
		want[d] = true
	}
	sum, n := 0.0, 0
	for _, x := range s {
		if want[x.Device] && x.At >= start && x.At < end {
			sum += x.Utilization
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}
