// Package shorten cuts text that goes into a message to a bounded length: messages quote what
// they are about (an expression, a nested failure), and what they quote can be as long as its
// input, or longer when messages nest.
package shorten

import "unicode/utf8"

// To returns s when it has at most most bytes, and otherwise its first most bytes (whole
// characters) followed by "...".
func To(s string, most int) string {
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
