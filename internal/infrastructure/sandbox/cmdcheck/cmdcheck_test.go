package cmdcheck

import (
	"errors"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/google/go-cmp/cmp"
)

var testAllow = []string{"git", "go", "ls", "cat", "grep", "find", "xargs", "sh", "awk", "tar", "/work/ws/build.sh"}

func TestCheckAllows(t *testing.T) {
	list := New(testAllow)
	for _, script := range []string{
		"git status",
		"go test ./... && git diff | grep foo",
		"ls -la; cat x.go",
		"echo $(git rev-parse HEAD) `ls`",
		"timeout 60 go test ./...",
		"timeout -s KILL -k 5 60 go test",
		"env GOFLAGS=-mod=mod go build ./...",
		"env -u HOME -- go env",
		"nice -n 10 go build",
		"nice -5 go build",
		"nohup go build",
		"find . -name '*.go' -exec grep -l foo {} +",
		`find . -type f -exec cat {} \;`,
		"git -c core.pager=cat log",
		"git -c alias.st=status st",
		"git -C sub -c color.ui=never status",
		"sh -c 'git status && ls'",
		"sh -ec 'git status'",
		"f() { git status; }; f",
		"x=1; echo $x; export Y=2",
		"cat <(ls)",
		"awk '{print $1}' file",
		"awk -F: '/a|b/ {n++} END {print n}' f",
		"xargs -0 grep foo",
		"ls | xargs",
		"command -v curl",
		"command git status",
		"trap 'git status' EXIT",
		"exec 3>out",
		"./build.sh --fast",
		"/work/ws/build.sh",
		"tar -xzf a.tgz",
		"git rebase -x 'go test ./...' main",
		"git submodule foreach git status",
		"GIT_PAGER=cat git log",
		"[ -f x ] && test -d y || true",
		"cat <<EOF\nhello\nEOF",
		"git config user.name bot",
	} {
		if err := list.Check(script, "/work/ws"); err != nil {
			t.Errorf("Check(%q) = %v, want allowed", script, err)
		}
	}
}

func TestCheckRefuses(t *testing.T) {
	list := New(testAllow)
	tests := []struct {
		script  string
		program string
		rule    Rule
	}{
		{"curl evil.com", "curl", RuleAllowlist},
		{"git status; curl x", "curl", RuleAllowlist},
		{"git status && curl x || ls", "curl", RuleAllowlist},
		{"echo $(curl x)", "curl", RuleAllowlist},
		{"echo `curl x`", "curl", RuleAllowlist},
		{"cat <(curl x)", "curl", RuleAllowlist},
		{"x=$(curl x)", "curl", RuleAllowlist},
		{"cat <<EOF\n$(curl x)\nEOF", "curl", RuleAllowlist},
		{"echo $((1 + $(curl x)))", "curl", RuleAllowlist},
		{"[[ $(curl x) ]]", "curl", RuleAllowlist},
		{"(curl x)", "curl", RuleAllowlist},
		{"if true; then curl x; fi", "curl", RuleAllowlist},
		{"for i in 1; do curl; done", "curl", RuleAllowlist},
		{"case a in a) curl;; esac", "curl", RuleAllowlist},
		{"coproc curl x", "curl", RuleAllowlist},
		{"sh -c 'curl x'", "curl", RuleAllowlist},
		{`sh -c "sh -c 'curl x'"`, "curl", RuleAllowlist},
		{"sh -xc 'git status; curl x'", "curl", RuleAllowlist},
		{"bash -c 'ls'", "bash", RuleAllowlist},
		{"env curl x", "curl", RuleAllowlist},
		{"env -i PATH=/tmp curl", "curl", RuleAllowlist},
		{"env -S 'curl x'", "curl", RuleAllowlist},
		{"xargs curl", "curl", RuleAllowlist},
		{"xargs -n1 -P4 curl", "curl", RuleAllowlist},
		{`find . -exec curl {} \;`, "curl", RuleAllowlist},
		{`find . -execdir rm {} +`, "rm", RuleAllowlist},
		{`find . -exec {} \;`, "{}", RuleAllowlist},
		{"timeout 5 curl x", "curl", RuleAllowlist},
		{"nice curl", "curl", RuleAllowlist},
		{"nohup curl x", "curl", RuleAllowlist},
		{"setsid -f curl x", "curl", RuleAllowlist},
		{"stdbuf -o0 curl x", "curl", RuleAllowlist},
		{"command curl x", "curl", RuleAllowlist},
		{"git -c core.pager='curl x' log", "curl", RuleAllowlist},
		{"git -c alias.x='!curl evil' x", "curl", RuleAllowlist},
		{"git -c core.sshCommand='nc -e sh' fetch", "nc", RuleAllowlist},
		{"git -c diff.x.textconv=python3 diff", "python3", RuleAllowlist},
		{"git -c core.hooksPath=/tmp/h commit", "git", RuleGitConfig},
		{"git -c include.path=/tmp/cfg status", "git", RuleGitConfig},
		{"git --exec-path=/tmp/x status", "git", RuleGitConfig},
		{"git rebase -x 'curl x' main", "curl", RuleAllowlist},
		{"git rebase --exec='curl x' main", "curl", RuleAllowlist},
		{"git bisect run curl x", "curl", RuleAllowlist},
		{"git submodule foreach 'curl x'", "curl", RuleAllowlist},
		{"git fetch --upload-pack='curl x' origin", "curl", RuleAllowlist},
		{"git config alias.x '!curl evil'", "curl", RuleAllowlist},
		{"git config core.hooksPath /tmp", "git", RuleGitConfig},
		{"git() { curl x; }; git status", "curl", RuleAllowlist},
		{"$cmd x", "$?", RuleDynamic},
		{`"$cmd" x`, "$?", RuleDynamic},
		{"eval 'ls'", "eval", RuleEval},
		{"builtin eval ls", "eval", RuleEval},
		{"source ./x.sh", "source", RuleSource},
		{". ./x.sh", ".", RuleSource},
		{"exec curl", "exec", RuleExec},
		{"alias ls=curl", "alias", RuleAlias},
		{"trap \"$x\" EXIT", "trap", RuleDynamic},
		{"trap 'curl x' EXIT", "curl", RuleAllowlist},
		{"sh script.sh", "sh", RuleShellScript},
		{"sh < script.sh", "sh", RuleShellScript},
		{"sh -c \"$x\"", "sh", RuleDynamic},
		{"echo ${x@P}", "${x@P}", RulePrompt},
		{"GIT_SSH_COMMAND='curl x' git fetch", "curl", RuleAllowlist},
		{"PAGER='curl x' git log", "curl", RuleAllowlist},
		{"LD_PRELOAD=/tmp/x.so git status", "LD_PRELOAD", RuleEnv},
		{"export LD_PRELOAD=/tmp/x.so", "LD_PRELOAD", RuleEnv},
		{"env LD_PRELOAD=/tmp/x.so git status", "LD_PRELOAD", RuleEnv},
		{"GIT_CONFIG_VALUE_1=githooks git commit", "GIT_CONFIG_VALUE_1", RuleEnv},
		{"export GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_KEY_0", RuleEnv},
		{"GIT_CONFIG_COUNT= git commit", "GIT_CONFIG_COUNT", RuleEnv},
		{"export -n GIT_CONFIG_COUNT", "GIT_CONFIG_COUNT", RuleEnv},
		{"unset GIT_CONFIG_COUNT; git commit", "unset", RuleEnv},
		{"unset \"$v\"", "unset", RuleEnv},
		{"env -i git commit", "env", RuleEnv},
		{"env -u GIT_CONFIG_COUNT git commit", "env", RuleEnv},
		{"declare -x BASH_ENV=/tmp/x", "BASH_ENV", RuleEnv},
		{`find . -exec sh -c 'echo {}' \;`, "sh", RuleReplace},
		{"ls | xargs -I{} sh -c 'echo {}'", "sh", RuleReplace},
		{"ls | xargs -i sh -c 'echo {}'", "sh", RuleReplace},
		{`awk 'BEGIN{system("curl x")}'`, "awk", RuleAwk},
		{`awk '{print | "sh"}'`, "awk", RuleAwk},
		{`awk 'BEGIN{"id" | getline x}'`, "awk", RuleAwk},
		{"awk -f prog.awk", "awk", RuleAwk},
		{"tar --to-command='curl x' -xf a.tar", "curl", RuleAllowlist},
		{"tar -I 'curl x' -xf a.tar", "curl", RuleAllowlist},
		{"tar --checkpoint-action=exec='curl x' -cf a.tar .", "curl", RuleAllowlist},
		{"sudo ls", "sudo", RuleAllowlist},
		{`c\url x`, "curl", RuleAllowlist},
		{"'cu'rl x", "curl", RuleAllowlist},
		{`"cu"'r'l x`, "curl", RuleAllowlist},
		{"{curl,x}", "$?", RuleDynamic},
		{"/usr/bin/cur? x", "$?", RuleDynamic},
		{"~/bin/tool", "$?", RuleDynamic},
		{"/lib64/ld-linux-x86-64.so.2 /usr/bin/curl", "/lib64/ld-linux-x86-64.so.2", RuleAllowlist},
		{"timeout --weird 5 curl", "timeout", RuleOption},
		{"env $x curl", "env", RuleDynamic},
		{"./other.sh", "./other.sh", RuleAllowlist},
		{"echo 'unterminated", "sh", RuleParse},
		{"echo " + strings.Repeat("$(", 300) + "ls" + strings.Repeat(")", 300), "sh", RuleParse}, // too deep to parse
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			err := list.Check(tc.script, "/work/ws")
			r, ok := errors.AsType[*Refusal](err)
			if !ok {
				t.Fatalf("Check(%q) = %v, want a refusal", tc.script, err)
			}
			if r.Program != tc.program || r.Rule != tc.rule {
				t.Errorf("Check(%q) refused %q by %s (%v), want %q by %s", tc.script, r.Program, r.Rule, err, tc.program, tc.rule)
			}
			if fault.KindOf(err) != fault.Denied {
				t.Errorf("Check(%q) kind = %v, want denied", tc.script, fault.KindOf(err))
			}
		})
	}
}

func TestCheckWrappersOfAllowedPrograms(t *testing.T) {
	// A program that runs others needs its own entry, and so does what it runs.
	list := New([]string{"sudo", "ls", "/lib64/ld-linux-x86-64.so.2", "busybox"})
	tests := []struct {
		script string
		rule   Rule
		ok     bool
	}{
		{script: "sudo ls", rule: RulePrivilege},
		{script: "/lib64/ld-linux-x86-64.so.2 /usr/bin/curl x", rule: RuleAllowlist},
		{script: "/lib64/ld-linux-x86-64.so.2 --library-path /x ls", ok: true},
		{script: "busybox ls", ok: true},
		{script: "busybox wget x", rule: RuleAllowlist},
	}
	for _, tc := range tests {
		err := list.Check(tc.script, "/")
		if tc.ok {
			if err != nil {
				t.Errorf("Check(%q) = %v, want allowed", tc.script, err)
			}
			continue
		}
		if r, ok := errors.AsType[*Refusal](err); !ok || r.Rule != tc.rule {
			t.Errorf("Check(%q) = %v, want rule %s", tc.script, err, tc.rule)
		}
	}
}

func TestNilAllowlistAllowsAll(t *testing.T) {
	var list *Allowlist
	if err := list.Check("curl x; eval y; $z", "/"); err != nil {
		t.Errorf("nil allowlist Check = %v, want nil", err)
	}
	if err := New(nil).Check("ls", "/"); err == nil {
		t.Error("empty allowlist allowed ls, want refused")
	}
}

func TestPrograms(t *testing.T) {
	got, err := Programs(`env A=1 timeout 5 sh -c 'git -c core.pager=less log | grep x' && find . -exec cat {} + ; $dyn`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Program{
		{Name: "env", Args: []string{"A=1", "timeout", "5", "sh", "-c", "git -c core.pager=less log | grep x"}},
		{Name: "timeout", Args: []string{"5", "sh", "-c", "git -c core.pager=less log | grep x"}, Via: []string{"env"}},
		{Name: "sh", Args: []string{"-c", "git -c core.pager=less log | grep x"}, Via: []string{"env", "timeout"}},
		{Name: "git", Args: []string{"-c", "core.pager=less", "log"}, Via: []string{"env", "timeout", "sh -c"}},
		{Name: "less", Via: []string{"env", "timeout", "sh -c", "git core.pager"}},
		{Name: "grep", Args: []string{"x"}, Via: []string{"env", "timeout", "sh -c"}},
		{Name: "find", Args: []string{".", "-exec", "cat", "{}", "+"}},
		{Name: "cat", Args: []string{"{}"}, Via: []string{"find -exec"}},
		{Name: "", Args: nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Programs mismatch (-want +got):\n%s", diff)
	}
	if _, err := Programs("echo 'x"); err == nil {
		t.Error("Programs of an unterminated quote = nil error, want a parse error")
	}
}

func TestLiteral(t *testing.T) {
	list := New([]string{"a b", "x"})
	for _, script := range []string{`"a b"`, `a\ b`, `'a b'`, `"x"`, "x\\\n"} {
		if err := list.Check(script, "/"); err != nil {
			t.Errorf("Check(%q) = %v, want allowed", script, err)
		}
	}
}
