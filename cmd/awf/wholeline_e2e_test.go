package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/state"
)

// TestWholeLineCheckedBeforeAnythingRuns runs shell lines under a command allowlist through
// the binary. Each line first writes a marker with an allowed builtin (M); a line with a
// refused program anywhere (after a separator or a newline, inside a substitution of any
// kind, a function, an alias, a here-doc, behind a wrapper, or named only at run time) must
// be refused as a whole before anything runs: the step is denied and its marker does not
// exist. The allowed lines run and write theirs.
func TestWholeLineCheckedBeforeAnythingRuns(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	refused := []string{
		"M; curl x",
		"M && curl x",
		"M || curl x",
		"M | curl x",
		"M\ncurl x",
		"M & curl x",
		"M; curl x & kill $!; wait",
		"M; { sleep 0; curl x; } & jobs",
		"M; ls |& curl x",
		"echo $(curl x) > MARK",
		"echo `curl x` > MARK",
		"M; cat <(curl x)",
		"M; echo >(curl x)",
		"M; x=$(curl x)",
		"M; export X=$(curl x)",
		"M; arr=(a $(curl x))",
		"M; declare -a a=( $(curl x) )",
		"M; f() { curl x; }; f",
		"M; f() { curl x; }",
		"M; alias ls=curl",
		"M; cat <<EOF\n$(curl x)\nEOF",
		"M; cat <<'EOF'\nx\nEOF\ncurl x",
		"M; echo $((1 + $(curl x)))",
		"M; [[ $(curl x) ]]",
		"M; (curl x)",
		"M; { curl x; }",
		"M; if true; then curl x; fi",
		"M; for i in 1; do curl x; done",
		"M; while false; do curl x; done",
		"M; case a in a) curl x;; esac",
		"M; coproc curl x",
		"M; trap 'curl x' EXIT",
		"M; env curl x",
		"M; env -S 'curl x'",
		"M; nice curl x",
		"M; timeout 5 curl x",
		"M; ls | xargs curl",
		"M; find . -exec curl {} +",
		"M; sh -c 'ls; curl x'",
		"M; sh -c \"sh -c 'curl x'\"",
		"M; echo ls | sh",
		"M; bash -c ls",
		"M; eval ls",
		"M; cmd=ls; $cmd",
		"M; \"$HOME/bin/x\"",
		"M; echo ${x@P}",
		"M; source ./x.sh",
		"M; . ./x.sh",
		"M; exec ls",
		"M; git -c core.pager='curl x' log",
		"M; git -c alias.x='!curl x' x",
		"M; awk 'BEGIN{system(\"curl x\")}'",
		"M; sed -n '1e curl x' MARK",
		"M; rg --pre=curl x",
		"M; tar --to-command='curl x' -xf a.tar",
		"M; \"cu\"rl x",
		"M; c\\url x",
		"M; {curl,x}",
		"M; LD_PRELOAD=/tmp/x.so ls",
		"M; mapfile -C 'curl x' -c 1 < MARK",
	}
	allowed := []string{
		"M; ls",
		"M && cat MARK | grep x",
		"M; sh -c 'ls && cat MARK'",
		"M; f() { ls; }; f",
		"M; cat <<EOF\nhello $(ls)\nEOF",
		"M; arr=(a b); echo ${arr[@]}",
		"M; timeout 5 ls",
		"M; env LC_ALL=C ls",
		"M; find . -name MARK -exec cat {} +",
		"M; echo MARK | xargs cat",
		"M; git --version",
		"M; git log --oneline 2>/dev/null | cat; true",
		"M; sed -n 's/x/y/p' MARK",
		"M; awk '{print $1}' MARK",
	}
	type lineCase struct {
		step, line string
		refused    bool
	}
	var cases []lineCase
	var steps strings.Builder
	add := func(prefix string, i int, line string, refused bool) {
		step := fmt.Sprintf("%s%02d", prefix, i)
		marker := "m_" + step
		line = strings.ReplaceAll(strings.ReplaceAll(line, "MARK", marker), "M", "echo x > "+marker)
		cases = append(cases, lineCase{step, line, refused})
		args, _ := json.Marshal(map[string]string{"command": line})
		fmt.Fprintf(&steps, "  - {name: %s, type: tool, tool: shell, args: %s, continue_on_error: true}\n", step, args)
	}
	for i, l := range refused {
		add("r", i, l, true)
	}
	for i, l := range allowed {
		add("a", i, l, false)
	}
	if len(cases) < 40 {
		t.Fatalf("%d lines, want at least 40", len(cases))
	}
	e := newEnv(t)
	e.write("wf.yaml", "name: wholeline\napproval: {default: auto}\n"+
		"sandbox: {commands: [ls, cat, grep, git, sh, find, xargs, env, sed, awk, tar, timeout, nice, rg]}\n"+
		"steps:\n"+steps.String())
	r := e.runJSON(0, "run", "wf.yaml")
	st := e.state(r.RunID)
	for _, c := range cases {
		s := st.States[c.step]
		_, err := os.Stat(filepath.Join(e.dir, "m_"+c.step))
		ran := err == nil
		denied := len(s.ToolCalls) == 1 && s.ToolCalls[0].Result != nil && s.ToolCalls[0].Result.Denied
		switch {
		case c.refused && (ran || !denied || s.Status != state.Failed):
			t.Errorf("%s %q: status %s, denied %v, marker written %v; want refused before running\nerror: %s",
				c.step, c.line, s.Status, denied, ran, s.Error)
		case !c.refused && (!ran || s.Status != state.Completed):
			t.Errorf("%s %q: status %s, marker written %v; want it to run\nerror: %s", c.step, c.line, s.Status, ran, s.Error)
		}
	}
}
