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
