//go:build !unix

package iostreams

// SurviveClosedPipes does nothing where there is no SIGPIPE: a write to a closed pipe fails.
func SurviveClosedPipes() {}
