// /proc/<pid>/maps lines as the kernel prints them (fs/proc/task_mmu.c: show_map_vma).

package procfs

import (
	"testing"
)

func TestParseMapsLine(t *testing.T) {
	cases := []struct {
		line string
		want Mapping
	}{
		{"5581a1c00000-5581a1c02000 r--p 00000000 fd:01 1835066                    /usr/bin/python3.11",
			Mapping{0x5581a1c00000, 0x5581a1c02000, "r--p", 0, "fd:01", 1835066, "/usr/bin/python3.11"}},
		{"7f3b6c000000-7f3b6c021000 rw-p 00000000 00:00 0 ",
			Mapping{0x7f3b6c000000, 0x7f3b6c021000, "rw-p", 0, "00:00", 0, ""}},
		{"7ffd5e9e1000-7ffd5ea02000 rw-p 00000000 00:00 0                          [stack]",
			Mapping{0x7ffd5e9e1000, 0x7ffd5ea02000, "rw-p", 0, "00:00", 0, "[stack]"}},
		{"7f3b6d1a0000-7f3b6d1a2000 r--s 00000000 00:01 1029                       /memfd:OTEL_CTX (deleted)",
			Mapping{0x7f3b6d1a0000, 0x7f3b6d1a2000, "r--s", 0, "00:01", 1029, "/memfd:OTEL_CTX (deleted)"}},
		{"7f3b6d1a4000-7f3b6d1a6000 r--p 00000000 00:00 0                          [anon:OTEL_CTX]",
			Mapping{0x7f3b6d1a4000, 0x7f3b6d1a6000, "r--p", 0, "00:00", 0, "[anon:OTEL_CTX]"}},
		{"7f3b6d000000-7f3b6d100000 r-xp 00028000 08:02 393347                     /opt/my app/lib cuda.so.1",
			Mapping{0x7f3b6d000000, 0x7f3b6d100000, "r-xp", 0x28000, "08:02", 393347, "/opt/my app/lib cuda.so.1"}},
		{"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
			Mapping{0xffffffffff600000, 0xffffffffff601000, "--xp", 0, "00:00", 0, "[vsyscall]"}},
	}
	for _, c := range cases {
		got, err := ParseMapsLine(c.line)
		if err != nil || got != c.want {
			t.Errorf("ParseMapsLine(%q) = %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "zz-10 r--p 0 00:00 0", "10-5 r--p 0 00:00 0", "10-20 r-p 0 00:00 0"} {
		if _, err := ParseMapsLine(bad); err == nil {
			t.Errorf("ParseMapsLine(%q) accepted", bad)
		}
	}
}
