package cmdcheck

import (
	"errors"
	"testing"
)

// TestProgramsThatRunPrograms: under an allowlist, the options through which allowed programs
// run other programs are followed (what they run is checked) or refused (issue 11, item 3a).
func TestProgramsThatRunPrograms(t *testing.T) {
	list := New([]string{"rg", "git", "find", "xargs", "sed", "awk", "tar", "env", "make", "vim", "emacs", "ssh", "scp",
		"zip", "man", "sort", "rsync", "ls", "cat", "grep", "unzip", "strace"})
	tests := []struct {
		script string
		rule   Rule // "" when allowed
	}{
		// ripgrep
		{"rg --pre=sh pattern src", RuleAllowlist},
		{"rg --pre sh pattern src", RuleAllowlist},
		{"rg --pre=cat pattern src", ""},
		{"rg --pre-glob '*.gz' --pre sh x", RuleAllowlist},
		{"rg -z pattern", RuleRunsOthers},
		{"rg -iz pattern", RuleRunsOthers},
		{"rg --search-zip pattern", RuleRunsOthers},
		{"rg --search-z pattern", RuleRunsOthers},
		{"rg -e -z pattern", ""},
		{"rg -n -i 'a|b' src", ""},
		{"RIPGREP_CONFIG_PATH=./rc rg x", RuleEnv},
		// git
		{"git -c core.pager=sh log", RuleAllowlist},
		{"git -c core.fsmonitor=./x status", RuleAllowlist},
		{"git -c core.hooksPath=. commit", RuleGitConfig},
		{"git -c alias.x='-c core.pager=sh log' x", RuleAllowlist},
		{"git -c alias.x='log --oneline' x", ""},
		{"git -c protocol.ext.allow=always fetch", RuleGitConfig},
		{"git clone 'ext::sh -c touch% /tmp/x' d", RuleRunsOthers},
		{"git fetch --upload-pack='sh -c id' origin", RuleAllowlist},
		{"git fetch --upload-p='sh -c id' origin", RuleAllowlist},
		{"git push --receive-pack=sh origin", RuleAllowlist},
		{"git config core.pager sh", RuleAllowlist},
		{"git config --edit", RuleGitConfig},
		{"git config user.email a@b", ""},
		{"git grep Foo::Bar", ""},
		{"git status", ""},
		{"git log --oneline | cat", ""},
		// find, xargs
		{"find . -exec sh {} ;", RuleReplace},
		{"find . -exec sh -c id ;", RuleAllowlist},
		{"find . -execdir curl {} +", RuleAllowlist},
		{"find . -ok rm {} ;", RuleAllowlist},
		{"find . -okdir rm {} ;", RuleAllowlist},
		{"find . -name '*.go' -exec grep -l x {} +", ""},
		{"ls | xargs sh", RuleAllowlist},
		{"ls | xargs -n1 cat", ""},
		// sed
		{"sed 1e\\ id f", RuleRunsOthers},
		{"sed -n '1e id' f", RuleRunsOthers},
		{"sed 's/x/id/e' f", RuleRunsOthers},
		{"sed -e 's/a/b/' -e 's/x/id/ge' f", RuleRunsOthers},
		{"sed 's|x|y|;/a/,/b/e' f", RuleRunsOthers},
		{"sed -f script.sed f", RuleRunsOthers},
		{"sed f -e 's/x/y/e'", RuleRunsOthers},
		{"sed --expression='s/x/y/e' f", RuleRunsOthers},
		{"sed -n 's/a/b/gp' f", ""},
		{"sed -i.bak 's/e/E/g; /^#/d' f", ""},
		{"sed -n '/start/,/end/p' f", ""},
		{"sed '$!N;s/\\n/ /' f", ""},
		{"sed 's/x/y/w out.txt' f", ""},
		{"sed '1i\\\nheader' f", ""},
		{"sed --sandbox 's/x/id/e' f", ""},
		// awk
		{`awk 'BEGIN{system("id")}'`, RuleAwk},
		{`awk '{print | "sh"}'`, RuleAwk},
		{`awk 'BEGIN{"id" | getline}'`, RuleAwk},
		{`awk '{print $1}' f`, ""},
		// tar
		{"tar --to-command=sh -xf a.tar", RuleAllowlist},
		{"tar --to-com=sh -xf a.tar", RuleAllowlist},
		{"tar --use-compress-program=sh -xf a.tar", RuleAllowlist},
		{"tar -I sh -xf a.tar", RuleAllowlist},
		{"tar -xIsh -f a.tar", RuleRunsOthers},
		{"tar xIf sh a.tar", RuleRunsOthers},
		{"tar --checkpoint=1 --checkpoint-action=exec=sh -cf a.tar .", RuleAllowlist},
		{"tar --checkpoint-a=exec=sh -cf a.tar .", RuleAllowlist},
		{"tar -xzf a.tgz", ""},
		{"sort --compress-program=sh f", RuleAllowlist},
		{"rsync -e sh a b", RuleAllowlist},
		// env and wrappers
		{"env -S 'sh -c id'", RuleAllowlist},
		{"env --split-string='sh -c id'", RuleAllowlist},
		{"env sh", RuleAllowlist},
		{"nice -n 5 sh", RuleAllowlist},
		{"timeout 5 sh", RuleAllowlist},
		{"nohup sh", RuleAllowlist},
		{"stdbuf -o0 sh", RuleAllowlist},
		{"ionice -c 3 sh", RuleAllowlist},
		{"setsid sh", RuleAllowlist},
		{"chroot / sh", RuleAllowlist},
		{"strace -o /dev/null ls", RuleRunsOthers},
		{"env LC_ALL=C ls", ""},
		// make
		{"make SHELL=/bin/sh", RuleRunsOthers},
		{"make .SHELLFLAGS=-c", RuleRunsOthers},
		{"make --eval='x: ; id'", RuleRunsOthers},
		{"MAKEFLAGS='SHELL=sh' make", RuleEnv},
		{"make -j4 build", ""},
		// editors, ssh, zip, man
		{"vim -c '!id' f", RuleRunsOthers},
		{"vim +'!id' f", RuleRunsOthers},
		{"vim -es f", RuleRunsOthers},
		{"emacs --eval '(shell-command \"id\")'", RuleRunsOthers},
		{"ssh -o ProxyCommand='sh -c id' host", RuleRunsOthers},
		{"ssh -oLocalCommand=id -o PermitLocalCommand=yes host", RuleRunsOthers},
		{"ssh -F ./cfg host", RuleRunsOthers},
		{"ssh -vo ProxyCommand=id host", RuleRunsOthers},
		{"ssh host id", ""},
		{"scp -S sh a host:b", RuleAllowlist},
		{"zip -TT sh a.zip f", RuleRunsOthers},
		{"zip -T a.zip f", ""},
		{"man -P sh ls", RuleRunsOthers},
		// builtins that run or load code
		{"mapfile -C f -c 1 < x", RuleBuiltinCode},
		{"enable -f ./x.so x", RuleBuiltinCode},
		{"hash -p /tmp/x ls", RuleBuiltinCode},
	}
	for _, tc := range tests {
		err := list.Check(tc.script, "/work/ws")
		if tc.rule == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want allowed", tc.script, err)
			}
			continue
		}
		r, ok := errors.AsType[*Refusal](err)
		if !ok || r.Rule != tc.rule {
			t.Errorf("Check(%q) = %v, want refused by %s", tc.script, err, tc.rule)
		}
	}
}

// TestCheckBound: a command template's bound values are checked as the arguments they are.
func TestCheckBound(t *testing.T) {
	list := New([]string{"rg", "ls"})
	vars := map[string]string{"AWF_T1": "--pre=sh", "AWF_T2": "pattern", "AWF_T3": "a b"}
	if err := list.CheckBound(`rg "${AWF_T1}" src`, "/w", vars); err == nil {
		t.Error(`rg "${AWF_T1}" with --pre=sh: allowed, want refused`)
	}
	if err := list.CheckBound(`rg -- "${AWF_T2}" src; ls "$AWF_T3"`, "/w", vars); err != nil {
		t.Errorf("harmless values: %v", err)
	}
	if err := list.CheckBound(`${AWF_T3} x`, "/w", vars); err == nil {
		t.Error("an unquoted value split into words as the command name: allowed, want refused")
	}
}
