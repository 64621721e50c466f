package cmdcheck

import "testing"

// typical is a command line of the kind an agent sends.
const typical = `cd src && GOFLAGS=-count=1 go test ./... -run 'TestParse|TestLoad' 2>&1 | tee ../test.log | grep -v '^ok' ; git diff --stat | grep -c go`

func BenchmarkCommandCheck(b *testing.B) {
	list := New([]string{"go", "git", "grep", "tee", "cat", "ls", "sed"})
	for b.Loop() {
		if err := list.Check(typical, "/work/ws"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuardCheck(b *testing.B) {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	g := NewGuard(New([]string{"go", "git", "grep", "env", "timeout"}), env, []string{"/work/ws"})
	getenv := func(name string) (string, bool) {
		if name == "PATH" {
			return "/usr/local/bin:/usr/bin:/bin", true
		}
		return "", false
	}
	args := []string{"timeout", "60", "git", "-c", "color.ui=never", "log", "--oneline", "-n", "5"}
	for b.Loop() {
		if err := g.Check(args, "/work/ws", getenv); err != nil {
			b.Fatal(err)
		}
	}
}

// line200 is a 200-character line of the kind an agent sends: pipes, a substitution, a
// wrapper, git and an sh -c script.
const line200 = `cd src && timeout 60 go test ./... 2>&1 | tee ../t.log | grep -v '^ok' ; git -c color.ui=never diff --stat | sed -n '1,20p' ; echo "$(git rev-parse HEAD)" ; sh -c 'ls -la | head -5' ; rg -n TODO .`

// BenchmarkWholeLine is the command check a shell call pays before it runs (issue 11:
// target under 50 µs for a 200-character line).
func BenchmarkWholeLine(b *testing.B) {
	if len(line200) < 195 || len(line200) > 205 {
		b.Fatalf("line is %d characters, want about 200", len(line200))
	}
	list := New([]string{"go", "git", "grep", "tee", "sed", "ls", "head", "rg", "sh"})
	for b.Loop() {
		if err := list.CheckBound(line200, "/work/ws", nil); err != nil {
			b.Fatal(err)
		}
	}
}
