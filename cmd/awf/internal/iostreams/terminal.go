package iostreams

import "os"

// Terminal returns streams that all read and write one terminal device: the controlling
// terminal (/dev/tty) opened by a command whose standard streams carry data, such as `awf mcp
// serve` over stdio, so that approval prompts still reach the person. neverPrompt forbids
// prompts as SetNeverPrompt does (--non-interactive, CI). The caller closes tty.
func Terminal(tty *os.File, neverPrompt bool) *IOStreams {
	return &IOStreams{
		In: tty, Out: tty, ErrOut: tty,
		inTTY: true, outTTY: true, errTTY: true,
		color:       ColorFromEnv(os.Getenv),
		neverPrompt: neverPrompt,
	}
}
