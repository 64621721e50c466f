package process

import (
	"context"
	"io"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// printf '%s' "$big" is how scripts hand a bound value to a pipe without the shell touching
// it. The interpreter's printf builtin formats the whole output into a string first, through
// fmt and a strings.Builder: two more copies of a value that may be 10 MB. For formats made
// of literal text and plain %s directives, streamPrintf writes the same bytes straight to
// standard output instead; any other format is left to the builtin.
//
// The interposition: a call handler renames such a printf call to printfCommand, which no
// builtin or function has, so that it reaches the exec handlers, where printfExec serves it.
// A script that defines its own printf function keeps it: the handler is not installed.

// printfCommand is the name a streamable printf call is renamed to.
const printfCommand = "awf:printf"

// printfHandler returns the call handler that streams plain printf calls, or nil when file
// defines a function named printf.
func printfHandler(file *syntax.File) interp.CallHandlerFunc {
	defined := false
	syntax.Walk(file, func(n syntax.Node) bool {
		if f, ok := n.(*syntax.FuncDecl); ok && f.Name.Value == "printf" {
			defined = true
		}
		return !defined
	})
	if defined {
		return nil
	}
	return printfCall
}

// printfCall renames a printf call that streamPrintf can serve. It also drops the "--" that
// ends printf's options, as bash's printf does and as awf validate advises before a bound
// value; the interpreter's builtin would print it.
func printfCall(_ context.Context, args []string) ([]string, error) {
	if len(args) >= 2 && args[0] == "printf" && args[1] == "--" {
		args = append([]string{"printf"}, args[2:]...)
	}
	if len(args) >= 2 && args[0] == "printf" && streamable(args[1]) {
		renamed := append([]string{printfCommand}, args[1:]...)
		return renamed, nil
	}
	return args, nil
}

// printfExec serves the calls printfCall renamed and passes everything else on.
func printfExec(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(ctx context.Context, args []string) error {
		if args[0] != printfCommand {
			return next(ctx, args)
		}
		if err := streamPrintf(interp.HandlerCtx(ctx).Stdout, args[1], args[2:]); err != nil {
			return interp.ExitStatus(1)
		}
		return nil
	}
}

// streamable reports whether format is literal text and plain %s directives: no other %
// (no %d, %%, widths), no leading '-' (printf -v), and no backslash escape that a %s
// directive would split.
func streamable(format string) bool {
	if strings.HasPrefix(format, "-") {
		return false
	}
	for _, piece := range strings.Split(format, "%s") {
		if strings.Contains(piece, "%") || trailingBackslashes(piece)%2 == 1 {
			return false
		}
	}
	return strings.Contains(format, "%s")
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// streamPrintf writes what `printf format args...` prints, for a streamable format: the
// format is applied again while arguments remain, and missing arguments are empty. Literal
// pieces go through the interpreter's own escape handling (expand.Format without arguments
// does escapes only), so the bytes are those of the builtin.
func streamPrintf(w io.Writer, format string, args []string) error {
	pieces := strings.Split(format, "%s")
	for i, p := range pieces {
		text, _, err := expand.Format(&expand.Config{}, p, nil)
		if err != nil {
			return err
		}
		pieces[i] = text
	}
	directives := len(pieces) - 1
	for first := true; first || len(args) > 0; first = false {
		for i, p := range pieces {
			if _, err := io.WriteString(w, p); err != nil {
				return err
			}
			if i == directives {
				break
			}
			arg := ""
			if len(args) > 0 {
				arg, args = args[0], args[1:]
			}
			if err := writeChunked(w, arg); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeChunked writes s through a small buffer: io.WriteString on a writer without
// WriteString would copy all of s into one []byte.
func writeChunked(w io.Writer, s string) error {
	if sw, ok := w.(io.StringWriter); ok {
		_, err := sw.WriteString(s)
		return err
	}
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	for len(s) > 0 {
		n := copy(buf, s)
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		s = s[n:]
	}
	return nil
}
