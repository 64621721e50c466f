// Package sample is a tiny project the example workflows check and change.
package sample

import "strings"

// Greet returns a greeting for name.
func Greet(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "world"
	}
	return "Hello, " + name + "!"
}
