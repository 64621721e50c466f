//go:build unix

package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A state directory copied from elsewhere may hold anything where awf expects files: a FIFO
// (whose open waits for a writer for ever), a link to /dev/zero (endless), under the name of
// a state file, a journal or a lock, or named by a state file as its workflow file. awf
// history, awf status and awf ui, which only read, must answer anyway: such a file is "not
// a regular file", and the other runs still show.
func TestReadersRefuseFilesThatAreNotRegular(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", "name: plain\nsteps:\n  - {name: a, type: shell, command: echo hi}\n")
	good := e.runJSON(0, "run", "wf.yaml").RunID
	jour := e.runJSON(0, "run", "wf.yaml").RunID
	live := e.runJSON(0, "run", "wf.yaml").RunID
	runs := filepath.Join(e.dir, ".awf", "runs")
	fifo := func(name string) {
		if err := syscall.Mkfifo(filepath.Join(runs, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fifo("fifo.yaml")
	if err := os.Symlink("/dev/zero", filepath.Join(runs, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	fifo(jour + ".journal")
	// A run that says it is running, with a FIFO for its lock and its workflow file.
	fifo(live + ".lock")
	fifo("wf.fifo")
	p := filepath.Join(runs, live+".yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "\nstatus: completed\n", "\nstatus: running\n", 1)
	text = regexp.MustCompile(`(?m)^workflow_file: .*$`).ReplaceAllString(text, "workflow_file: "+filepath.Join(runs, "wf.fifo"))
	if !strings.Contains(text, "wf.fifo") || !strings.Contains(text, "status: running") {
		t.Fatalf("state file not as expected:\n%s", text)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	hist := e.capture(e.cmd(ctx, "history"), []string{"history"})
	for _, want := range []string{"fifo", "zero", good[:8], "not a regular file"} {
		if !strings.Contains(hist.stdout+hist.stderr, want) {
			t.Errorf("awf history lacks %q:\n%s%s", want, hist.stdout, hist.stderr)
		}
	}
	st := e.capture(e.cmd(ctx, "status", jour), []string{"status"})
	if st.code == 0 || !strings.Contains(st.stderr, "not a regular file") {
		t.Errorf("awf status of a run whose journal is a FIFO: exit %d\n%s", st.code, st.stderr)
	}

	srv := startUI(t, e)
	client := &http.Client{Timeout: time.Minute}
	for _, path := range []string{"/", "/runs/" + live, "/runs/" + good, "/runs/" + jour} {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.base+path, nil)
		req.Header.Set("Cookie", "awf_ui_"+srv.base[strings.LastIndex(srv.base, ":")+1:]+"="+srv.token)
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("awf ui %s: %v", path, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if path == "/runs/"+jour {
			if resp.StatusCode != 500 || !strings.Contains(string(body), "not a regular file") {
				t.Errorf("awf ui %s: %d, want 500 saying not a regular file\n%s", path, resp.StatusCode, body)
			}
		} else if resp.StatusCode != 200 {
			t.Errorf("awf ui %s: %d\n%s", path, resp.StatusCode, body)
		}
	}
}
