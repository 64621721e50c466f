package process

import (
	"os"
	"strings"
	"testing"
)

func TestHeadBuffer(t *testing.T) {
	tests := []struct {
		name      string
		limit     int64
		writes    []string
		want      string
		truncated bool
		overflows int
	}{
		{"nothing", 10, nil, "", false, 0},
		{"under", 10, []string{"abc", "def"}, "abcdef", false, 0},
		{"exactly", 6, []string{"abc", "def"}, "abcdef", false, 0},
		{"over in one write", 4, []string{"abcdef"}, "abcd", true, 1},
		{"over across writes", 4, []string{"ab", "cd", "e", "fgh"}, "abcd", true, 1},
		{"empty writes", 4, []string{"", "abcd", ""}, "abcd", false, 0},
		{"growth past 512", 2000, []string{strings.Repeat("x", 700), strings.Repeat("y", 700), strings.Repeat("z", 700)},
			strings.Repeat("x", 700) + strings.Repeat("y", 700) + strings.Repeat("z", 600), true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			overflows := 0
			h := headBuffer{limit: tc.limit, onOverflow: func() { overflows++ }}
			for _, w := range tc.writes {
				if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
				}
			}
			if got := h.String(); got != tc.want || h.Truncated() != tc.truncated || overflows != tc.overflows {
				t.Errorf("after %q: String() = %q, Truncated() = %v, overflows = %d; want %q, %v, %d",
					tc.writes, got, h.Truncated(), overflows, tc.want, tc.truncated, tc.overflows)
			}
			if int64(cap(h.buf)) > tc.limit {
				t.Errorf("buffer capacity %d over the limit %d", cap(h.buf), tc.limit)
			}
		})
	}
}

func TestHeadBufferGrowsByDoubling(t *testing.T) {
	h := headBuffer{limit: 64 << 20}
	chunk := make([]byte, 64<<10)
	allocs := 0
	last := -1
	for range (10 << 20) / len(chunk) {
		h.Write(chunk)
		if cap(h.buf) != last {
			allocs++
			last = cap(h.buf)
		}
	}
	if allocs > 12 {
		t.Errorf("10 MiB in 64 KiB writes took %d allocations, want at most 12 (doubling)", allocs)
	}
}

func TestHeadTail(t *testing.T) {
	tests := []struct {
		name   string
		limit  int64
		writes []string
		want   string
	}{
		{"nothing", 10, nil, ""},
		{"under", 10, []string{"abc", "def"}, "abcdef"},
		{"exactly", 6, []string{"abc", "def"}, "abcdef"},
		{"one over", 6, []string{"abcdefg"}, "abc\n[awf: 1 bytes of stderr left out]\nefg"},
		{"flood in one write", 6, []string{"abc" + strings.Repeat(".", 100) + "xyz"}, "abc\n[awf: 100 bytes of stderr left out]\nxyz"},
		{"flood byte by byte", 6, strings.Split("abc"+strings.Repeat(".", 50)+"xyz", ""), "abc\n[awf: 50 bytes of stderr left out]\nxyz"},
		{"ring wraps mid-write", 6, []string{"abcde", "fgh", "ij", "klmn"}, "abc\n[awf: 8 bytes of stderr left out]\nlmn"},
		{"odd limit", 5, []string{"0123456789"}, "01\n[awf: 5 bytes of stderr left out]\n789"},
		{"limit 1", 1, []string{"abc"}, "\n[awf: 2 bytes of stderr left out]\nc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := headTail{limit: tc.limit}
			for _, w := range tc.writes {
				if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
				}
			}
			if got := h.String(); got != tc.want {
				t.Errorf("after %q: String() = %q, want %q", tc.writes, got, tc.want)
			}
		})
	}
}

func TestDrain(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := strings.Repeat("0123456789", 100_000)
	go func() { w.WriteString(want); w.Close() }()
	h := headBuffer{limit: 1 << 30}
	drain(r, &h)
	if got := h.String(); got != want {
		t.Errorf("drain read %d bytes, want %d", len(got), len(want))
	}
}

func TestHeadBufferSpillsPastSpillAt(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tests := []struct {
		name      string
		limit     int64
		write     int
		truncated bool
	}{
		{"under the limit", 4 * spillAt, 3*spillAt + 17, false},
		{"limit past spillAt", spillAt + spillAt/2, 2 * spillAt, true},
		{"limit at spillAt", spillAt, spillAt + 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := make([]byte, tc.write)
			for i := range want {
				want[i] = byte('a' + i%26)
			}
			h := headBuffer{limit: tc.limit}
			for p := want; len(p) > 0; {
				k := min(len(p), 60_000)
				h.Write(p[:k])
				p = p[k:]
			}
			if cap(h.buf) > spillAt {
				t.Errorf("memory buffer grew to %d bytes, want at most spillAt (%d)", cap(h.buf), spillAt)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("spill file left visible in TMPDIR: %v", ents)
			}
			kept := min(int64(tc.write), tc.limit)
			if got := h.String(); got != string(want[:kept]) || h.Truncated() != tc.truncated {
				t.Errorf("String() has %d bytes (equal: %v), Truncated() = %v; want the first %d, %v",
					len(got), got == string(want[:kept]), h.Truncated(), kept, tc.truncated)
			}
			if h.spill != nil {
				t.Error("String() kept the spill file open")
			}
		})
	}
}

func TestHeadBufferSpillWriteFailureKeepsBytes(t *testing.T) {
	// A spill file that cannot be written (read-only here, a full disk in life) moves what it
	// holds back into memory and goes on there: nothing is lost.
	path := t.TempDir() + "/spill"
	if err := os.WriteFile(path, []byte("spilled-"), 0o600); err != nil {
		t.Fatal(err)
	}
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	h := headBuffer{limit: 1 << 30, buf: []byte("memory-"), spill: ro, spilled: int64(len("spilled-"))}
	h.Write([]byte("more"))
	if got := h.String(); got != "memory-spilled-more" || h.Truncated() {
		t.Errorf("String() = %q, Truncated() = %v; want %q, false", got, h.Truncated(), "memory-spilled-more")
	}
}
