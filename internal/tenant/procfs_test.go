// comm, stat and exe as procfs prints them, including the hostile ones.
package tenant

import "testing"

func TestSanitizeComm(t *testing.T) {
	for in, want := range map[string]string{
		"pt_main_thread\n":   "pt_main_thread",
		"Web Content\n":      "Web Content", // Firefox: spaces are real
		"vllm\tworker\xfe\n": "vllm?worker\uFFFD",
		"a\nb\n":             "a?b", // prctl(PR_SET_NAME) accepts newlines
		"nul\x00x":           "nul?x",
		"kworker/u8:2":       "kworker/u8:2",
		"日本語":                "日本語",
		"\x1b[31mred":        "?[31mred",
		"":                   "",
	} {
		if got := SanitizeComm([]byte(in)); got != want {
			t.Errorf("SanitizeComm(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseStatStartTime(t *testing.T) {
	cases := map[string]uint64{
		"4242 (pt_main_thread) S 4200 4242 4242 0 -1 4194560 51234 0 12 0 3021 455 0 0 20 0 37 0 123456 25769803776 262144": 123456,
		// comm with spaces and parentheses: fields are counted after the last ')'.
		"99 (a) b) (c) R 1 99 99 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0": 4242,
	}
	for in, want := range cases {
		if got, err := ParseStatStartTime([]byte(in)); err != nil || got != want {
			t.Errorf("ParseStatStartTime(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1 (x S 1", "1 (x) S 1 2 3", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0"} {
		if _, err := ParseStatStartTime([]byte(bad)); err == nil {
			t.Errorf("ParseStatStartTime(%q) accepted", bad)
		}
	}
}

func TestExecutablePath(t *testing.T) {
	for in, want := range map[string][2]string{
		"/usr/bin/python3.11":           {"/usr/bin/python3.11", "python3.11"},
		"/usr/local/bin/vllm (deleted)": {"/usr/local/bin/vllm", "vllm"},
		"":                              {"", ""},
	} {
		if full, base := ExecutablePath(in); full != want[0] || base != want[1] {
			t.Errorf("ExecutablePath(%q) = %q, %q", in, full, base)
		}
	}
}
