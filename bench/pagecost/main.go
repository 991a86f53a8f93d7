//go:build linux

// pagecost measures what a syscall tracepoint program pays on this machine for memory it
// reads and for the clock (BENCHMARKS.md, "What a hook pays on this machine"): programs
// built here with cilium/ebpf's assembler, attached in turn to syscalls:sys_enter_getppid,
// timed by the calling thread's CPU time over a getppid loop, interleaved by round, medians.
//
//	sudo go run ./bench/pagecost [-rounds 5] [-calls 500000]
//
// Conditions: an empty program; N independent loads from N distinct pages of an array map
// (4 KiB apart); a chain of N loads where each address comes from the previous load, within
// one cache line or across N distinct pages; N bpf_ktime_get_ns calls. Output: one TSV row per
// condition (median ns per getppid, and minus the empty program's).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

const pages = 64

type condition struct {
	name  string
	loads int
	kind  string // "indep", "chain-line", "chain-pages", "ktime", ""
}

func main() {
	rounds := flag.Int("rounds", 5, "interleaved rounds")
	calls := flag.Int("calls", 500000, "getppid calls per condition and round")
	flag.Parse()
	runtime.LockOSThread() // the thread's CPU clock times the loop
	if err := run(*rounds, *calls); err != nil {
		fmt.Fprintln(os.Stderr, "pagecost:", err)
		os.Exit(1)
	}
}

// loop returns the calling thread's CPU ns per getppid.
func loop(n int) float64 {
	var a, b unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &a)
	for i := 0; i < n; i++ {
		unix.Getppid()
	}
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &b)
	return float64(b.Nano()-a.Nano()) / float64(n)
}

// program builds the condition's program over m (value: pages × 4 KiB).
func program(c condition, m *ebpf.Map) (*ebpf.Program, error) {
	ins := asm.Instructions{asm.LoadMapValue(asm.R6, m.FD(), 0), asm.Mov.Reg(asm.R7, asm.R6)}
	for i := 0; i < c.loads; i++ {
		switch c.kind {
		case "indep":
			ins = append(ins, asm.LoadMem(asm.R1, asm.R6, int16(0), asm.Word), asm.Add.Imm(asm.R6, 4096))
		case "chain-line", "chain-pages":
			// The next offset is read at the current place (bounded for the verifier).
			ins = append(ins, asm.LoadMem(asm.R1, asm.R7, 0, asm.Word), asm.And.Imm(asm.R1, (pages-1)*4096),
				asm.Mov.Reg(asm.R7, asm.R6), asm.Add.Reg(asm.R7, asm.R1))
		case "ktime":
			ins = append(ins, asm.FnKtimeGetNs.Call())
		}
	}
	ins = append(ins, asm.Mov.Imm(asm.R0, 0), asm.Return())
	return ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.TracePoint, Instructions: ins, License: "GPL"})
}

// fill writes the chain: page p's first word holds the offset of page p+1 (chain-pages), or
// every word 0 (the chain stays on the first cache line).
func fill(m *ebpf.Map, c condition) error {
	buf := make([]byte, pages*4096)
	if c.kind == "chain-pages" {
		for p := 0; p < pages-1; p++ {
			v := uint32((p + 1) * 4096)
			o := p * 4096
			buf[o], buf[o+1], buf[o+2], buf[o+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		}
	}
	return m.Put(uint32(0), buf)
}

func run(rounds, calls int) error {
	if err := rlimit.RemoveMemlock(); err != nil {
		return err
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: pages * 4096, MaxEntries: 1, Flags: unix.BPF_F_MMAPABLE})
	if err != nil {
		return err
	}
	defer m.Close()
	conds := []condition{{"empty program", 0, ""}}
	for _, n := range []int{8, 16} {
		conds = append(conds, condition{fmt.Sprintf("%d independent loads, %d pages", n, n), n, "indep"})
	}
	for _, n := range []int{8, 16} {
		conds = append(conds, condition{fmt.Sprintf("chain of %d loads, one cache line", n), n, "chain-line"})
	}
	for _, n := range []int{4, 8, 16} {
		conds = append(conds, condition{fmt.Sprintf("chain of %d loads, %d pages", n, n), n, "chain-pages"})
	}
	for _, n := range []int{1, 4} {
		conds = append(conds, condition{fmt.Sprintf("%d bpf_ktime_get_ns", n), n, "ktime"})
	}
	res := map[string][]float64{}
	var bare []float64
	for r := 0; r < rounds; r++ {
		bare = append(bare, loop(calls))
		for _, c := range conds {
			if err := fill(m, c); err != nil {
				return err
			}
			p, err := program(c, m)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			l, err := link.Tracepoint("syscalls", "sys_enter_getppid", p, nil)
			if err != nil {
				p.Close()
				return err
			}
			loop(calls / 50) // warm
			res[c.name] = append(res[c.name], loop(calls))
			l.Close()
			p.Close()
		}
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	empty := med(res[conds[0].name])
	fmt.Printf("condition\tns_per_getppid\tover_empty_program\n")
	fmt.Printf("no program\t%.1f\t%.1f\n", med(bare), med(bare)-empty)
	for _, c := range conds {
		fmt.Printf("%s\t%.1f\t%.1f\n", c.name, med(res[c.name]), med(res[c.name])-empty)
	}
	return nil
}
