package durable

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// TestCASCodec: small payloads stay in the history; large ones become a reference to the
// store and come back whole; a reference the store does not have is an error naming it.
func TestCASCodec(t *testing.T) {
	c := casCodec{dir: t.TempDir()}
	small := &commonpb.Payload{Data: []byte("small")}
	large := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: bytes.Repeat([]byte("x"), 100<<10)}
	enc, err := c.Encode([]*commonpb.Payload{small, large})
	if err != nil {
		t.Fatal(err)
	}
	if enc[0] != small || len(enc[1].Data) != 64 || string(enc[1].Metadata["encoding"]) != casEncoding {
		t.Fatalf("encoded = %v", enc)
	}
	dec, err := c.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dec[1].Data, large.Data) || string(dec[1].Metadata["encoding"]) != "json/plain" {
		t.Errorf("decoded payload differs from the original")
	}
	if err := os.Remove(filepath.Join(c.dir, string(enc[1].Data))); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decode(enc); err == nil {
		t.Error("decoding a reference missing from the store succeeded")
	}
	bad := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte(casEncoding)}, Data: []byte("../../etc/passwd")}
	if _, err := c.Decode([]*commonpb.Payload{bad}); err == nil {
		t.Error("a reference that is no digest was read")
	}
}

// TestApproverBindsDecisions: without a decision a call waits (the deferral); a decision
// answers only the call, arguments and policy it was given for; a timeout is a denial.
func TestApproverBindsDecisions(t *testing.T) {
	req := ports.ApprovalRequest{RunID: "r", Step: "s", CallID: "c1", Tool: "write_file",
		Args: map[string]any{"path": "a"}, Canonical: tool.Canonical{}}
	pending := func(ctx context.Context, r ports.ApprovalRequest) Pending {
		t.Helper()
		_, err := (&Approver{}).Approve(ctx, r)
		p, ok := errors.AsType[*pendingError](err)
		if !ok || !errors.Is(err, ports.ErrApprovalDeferred) {
			t.Fatalf("Approve = %v, want a deferral", err)
		}
		return p.p
	}
	withGrant := func(d *Decision, binding string) context.Context {
		return context.WithValue(t.Context(), grantKey{}, grant{d: d, binding: binding})
	}
	p := pending(t.Context(), req)
	if p.CallID != "c1" || p.Digest == "" || p.Args["path"] != "a" {
		t.Fatalf("pending = %+v", p)
	}
	a := &Approver{}
	ans, err := a.Approve(withGrant(&Decision{CallID: "c1", Digest: p.Digest, Allow: true, By: "ann", Host: "h1"}, ""), req)
	if err != nil || ans != ports.AnswerYes {
		t.Fatalf("approved call = %v, %v", ans, err)
	}
	if u, tty := a.Identity(); u != "ann" || tty != "host h1" {
		t.Errorf("identity = %q %q", u, tty)
	}
	other := req
	other.Args = map[string]any{"path": "b"}
	pending(withGrant(&Decision{CallID: "c1", Digest: p.Digest, Allow: true}, ""), other)
	pending(withGrant(&Decision{CallID: "c1", Digest: p.Digest, Allow: true}, "another policy"), req)
	again := req
	again.CallID = "c2"
	pending(withGrant(&Decision{CallID: "c1", Digest: p.Digest, Allow: true}, ""), again)
	ans, err = (&Approver{}).Approve(withGrant(&Decision{CallID: "c1", Digest: p.Digest, TimedOut: true}, ""), req)
	if err != nil || ans != ports.AnswerTimeout {
		t.Errorf("timed-out call = %v, %v, want a timeout answer", ans, err)
	}
	// An agent step's call cannot wait: nobody to ask.
	noWait := context.WithValue(t.Context(), grantKey{}, grant{noWait: true})
	if _, err := (&Approver{}).Approve(noWait, req); !errors.Is(err, ports.ErrNoApprover) {
		t.Errorf("Approve without a wait = %v, want ErrNoApprover", err)
	}
}

// TestPublicEnv: variables that look like secrets stay out of the history.
func TestPublicEnv(t *testing.T) {
	got := publicEnv([]string{"PATH=/bin", "OPENAI_API_KEY=k", "GITHUB_TOKEN=t", "DB_PASSWORD=p", "HOME=/h", "MY_SECRET=s"})
	if want := []string{"PATH=/bin", "HOME=/h"}; !slices.Equal(got, want) {
		t.Errorf("publicEnv = %v, want %v", got, want)
	}
}

// TestRunAsksForItsFiles: a worker that has not built a run asks for its files when a call
// names them by digest only (and keeps nothing of the run), and refuses files that are not
// the ones the digest names.
func TestRunAsksForItsFiles(t *testing.T) {
	a := &Activities{runs: map[string]*runTools{}}
	files := map[string][]byte{"/w/wf.yaml": []byte("name: x\n")}
	rt := a.run(RunRef{ID: "r1", File: "/w/wf.yaml", FilesDigest: digestFiles(files)})
	if !errors.Is(rt.err, errNeedFiles) || !failure(rt.err).NeedFiles {
		t.Errorf("a call without the files: err = %v, want errNeedFiles carried as NeedFiles", rt.err)
	}
	if len(a.runs) != 0 {
		t.Errorf("the worker keeps %d runs after a call it could not build", len(a.runs))
	}
	other := map[string][]byte{"/w/wf.yaml": []byte("name: y\n")}
	rt = a.run(RunRef{ID: "r2", File: "/w/wf.yaml", FilesDigest: digestFiles(files), Files: other})
	if rt.err == nil || !strings.Contains(rt.err.Error(), "do not match their digest") || failure(rt.err).NeedFiles {
		t.Errorf("files of another digest: err = %v", rt.err)
	}
	if digestFiles(files) == digestFiles(other) || digestFiles(files) != digestFiles(maps.Clone(files)) {
		t.Errorf("digestFiles does not tell the files apart, or differs for the same files")
	}
}
