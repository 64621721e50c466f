// Package cmdutil holds what every awf command shares: the Factory that builds the object graph
// lazily, argument checks that classify their errors as usage errors, and the --output flag.
package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// Format is the value of --output.
type Format string

// Output formats.
const (
	FormatText Format = "text"
	FormatJSON Format = "json"
)

// String implements pflag.Value.
func (f *Format) String() string {
	if *f == "" {
		return string(FormatText)
	}
	return string(*f)
}

// Set implements pflag.Value, rejecting unknown formats before the command runs.
func (f *Format) Set(v string) error {
	switch Format(v) {
	case FormatText, FormatJSON:
		*f = Format(v)
		return nil
	}
	return fmt.Errorf("unknown output format %q (want text or json)", v)
}

// Type implements pflag.Value.
func (f *Format) Type() string { return "format" }

// JSON reports whether JSON output was asked for.
func (f Format) JSON() bool { return f == FormatJSON }

// AddOutputFlag adds --output/-o text|json.
func AddOutputFlag(cmd *cobra.Command, f *Format) {
	cmd.Flags().VarP(f, "output", "o", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", CompleteValues(string(FormatText), string(FormatJSON)))
}

// WriteJSON writes v as one indented JSON object followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// ExactArgs is cobra.ExactArgs with a message for people and a usage classification.
func ExactArgs(n int, msg string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return fault.New(fault.Usage, "too many arguments: %q", args[n:])
		}
		if len(args) < n {
			return fault.New(fault.Usage, "%s", msg)
		}
		return nil
	}
}

// MaxArgs allows at most n arguments.
func MaxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return fault.New(fault.Usage, "too many arguments: %q", args[n:])
		}
		return nil
	}
}

// noSignalWatch is the annotation NoSignalWatch sets.
const noSignalWatch = "awf.no-signal-watch"

// NoSignalWatch marks cmd as one that need not watch Ctrl-C, SIGTERM and SIGPIPE: it starts
// no process and writes no state, so dying of the signal loses nothing, and not watching saves
// every start the two threads os/signal needs.
func NoSignalWatch(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[noSignalWatch] = "true"
}

// WatchesNoSignals reports whether cmd was marked with NoSignalWatch.
func WatchesNoSignals(cmd *cobra.Command) bool { return cmd.Annotations[noSignalWatch] == "true" }
