// Package strutil holds small string helpers for the sample project. The autonomous-coding
// example workflow asks an agent to add one here.
package strutil

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Capitalize returns s with its first letter in upper case.
func Capitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}

// Words splits s into words separated by white space.
func Words(s string) []string {
	return strings.Fields(s)
}
