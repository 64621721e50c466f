package toolrepo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/fault"
)

// fixture is the registry the end-to-end tests install from.
const fixture = "../../../testdata/toolrepo"

// TestFixtureIndexIsCurrent keeps testdata/toolrepo/index.json in step with the packages
// beside it; UPDATE_GOLDEN=1 rewrites it.
func TestFixtureIndexIsCurrent(t *testing.T) {
	idx, err := BuildIndex(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := WriteIndex(fixture, idx); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(fixture, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeIndex(fixture, data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(idx, got); diff != "" {
		t.Errorf("%s/index.json is stale (UPDATE_GOLDEN=1 go test ./internal/infrastructure/toolrepo): -built +file\n%s", fixture, diff)
	}
	refs := []string{}
	for _, tl := range idx.Tools {
		refs = append(refs, tl.Ref)
	}
	if want := []string{"acme/greet", "acme/ping", "acme/pong", "acme/shout"}; !cmp.Equal(refs, want) {
		t.Errorf("refs = %v, want %v", refs, want)
	}
}

func TestIndexCheck(t *testing.T) {
	sum := strings.Repeat("a", 64)
	good := func() Index {
		return Index{Format: 1, Tools: []IndexTool{{Ref: "acme/x", Versions: []IndexVersion{{
			Version: "1.0.0", Dir: "acme/x/1.0.0", Files: []IndexItem{{Path: "config.yaml", Size: 1, SHA256: sum}}}}}}}
	}
	tests := []struct {
		name   string
		change func(*Index)
		want   string
	}{
		{"good", func(*Index) {}, ""},
		{"format", func(i *Index) { i.Format = 2 }, "format 2"},
		{"bare name", func(i *Index) { i.Tools[0].Ref = "x" }, "want owner/name"},
		{"dot owner", func(i *Index) { i.Tools[0].Ref = "./x" }, "bad owner"},
		{"dotdot owner", func(i *Index) { i.Tools[0].Ref = "../x" }, "bad owner"},
		{"constraint", func(i *Index) { i.Tools[0].Ref = "acme/x@1" }, "without a version constraint"},
		{"duplicate tool", func(i *Index) { i.Tools = append(i.Tools, i.Tools[0]) }, "listed twice"},
		{"bad version", func(i *Index) { i.Tools[0].Versions[0].Version = "v1" }, "not a semantic version"},
		{"duplicate version", func(i *Index) {
			i.Tools[0].Versions = append(i.Tools[0].Versions, i.Tools[0].Versions[0])
		}, "version 1.0.0 is listed twice"},
		{"absolute dir", func(i *Index) { i.Tools[0].Versions[0].Dir = "/etc" }, "dir \"/etc\""},
		{"dotdot dir", func(i *Index) { i.Tools[0].Versions[0].Dir = "acme/../../etc" }, "dir"},
		{"dotdot file", func(i *Index) {
			i.Tools[0].Versions[0].Files = append(i.Tools[0].Versions[0].Files, IndexItem{Path: "../../x", SHA256: sum})
		}, "file \"../../x\""},
		{"backslash file", func(i *Index) {
			i.Tools[0].Versions[0].Files = append(i.Tools[0].Versions[0].Files, IndexItem{Path: `a\b`, SHA256: sum})
		}, `file "a\\b"`},
		{"file and dir", func(i *Index) {
			i.Tools[0].Versions[0].Files = append(i.Tools[0].Versions[0].Files,
				IndexItem{Path: "a", SHA256: sum}, IndexItem{Path: "a/b", SHA256: sum})
		}, "also a directory"},
		{"short sum", func(i *Index) { i.Tools[0].Versions[0].Files[0].SHA256 = "abc" }, "64 hex digits"},
		{"no config", func(i *Index) { i.Tools[0].Versions[0].Files[0].Path = "other.yaml" }, "no config.yaml"},
		{"negative size", func(i *Index) { i.Tools[0].Versions[0].Files[0].Size = -1 }, "negative size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx := good()
			tc.change(&idx)
			err := idx.Check()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestDecodeIndexRejectsUnknownFields(t *testing.T) {
	_, err := decodeIndex("r", []byte(`{"format":1,"tools":[],"extra":true}`))
	if err == nil || fault.KindOf(err) != fault.Execution || !strings.Contains(err.Error(), "extra") {
		t.Errorf("decodeIndex(unknown field) = %v, want an execution error naming it", err)
	}
}

// An index saved with a byte order mark reads as without one; a UTF-16 one is refused with
// what to do.
func TestDecodeIndexByteOrderMark(t *testing.T) {
	bomtest.Test(t, []bomtest.Case{
		{Name: "valid", Doc: `{"format":1,"tools":[]}`},
		{Name: "unknown field", Doc: `{"format":1,"tools":[],"extra":true}`, Err: `unknown field "extra"`},
	}, func(t *testing.T, data []byte) (string, error) {
		idx, err := decodeIndex("r", data)
		out, _ := json.Marshal(idx)
		return string(out), err
	})
}

func TestPick(t *testing.T) {
	tl := IndexTool{Ref: "acme/x"}
	for _, v := range []string{"1.0.0", "1.2.0", "1.10.0", "2.0.0", "3.0.0-rc.1"} {
		tl.Versions = append(tl.Versions, IndexVersion{Version: v})
	}
	tests := []struct {
		constraint, want string
		kind             fault.Kind
	}{
		{"", "2.0.0", 0},
		{"^1.0.0", "1.10.0", 0},
		{"~1.2", "1.2.0", 0},
		{"1.0.0", "1.0.0", 0},
		{">=3.0.0-0", "3.0.0-rc.1", 0},
		{"^4", "", fault.Invalid},
		{"not a constraint", "", fault.Usage},
	}
	for _, tc := range tests {
		t.Run(tc.constraint, func(t *testing.T) {
			v, err := tl.Pick(tc.constraint)
			if tc.want == "" {
				if err == nil || fault.KindOf(err) != tc.kind {
					t.Fatalf("Pick(%q) = %v, %v; want a %v error", tc.constraint, v.Version, err, tc.kind)
				}
				return
			}
			if err != nil || v.Version != tc.want {
				t.Errorf("Pick(%q) = %v, %v; want %s", tc.constraint, v.Version, err, tc.want)
			}
		})
	}
}

func TestBuildIndexRefusesMismatchedName(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"acme/x/1.0.0/config.yaml": "name: y\ndescription: d\nsteps: [{type: tool, tool: shell, output_var: o}]\n"})
	if _, err := BuildIndex(root); err == nil || !strings.Contains(err.Error(), `"y" does not match`) {
		t.Errorf("BuildIndex = %v, want a name mismatch", err)
	}
}

func TestWriteIndexRoundTrip(t *testing.T) {
	root := t.TempDir()
	idx := &Index{Format: 1, Tools: []IndexTool{}}
	if err := WriteIndex(root, idx); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(root, IndexFile))
	var back Index
	if err := json.Unmarshal(data, &back); err != nil || back.Format != 1 {
		t.Errorf("index.json = %s (%v)", data, err)
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
