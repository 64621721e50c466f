package cli

import (
	"slices"
	"strings"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/domain/fault"
)

var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"text", "json"}
)

// checkLogSettings refuses a log level or format given on the command line or in the
// environment that awf does not know, as every other bad flag value is refused: a typo such as
// AWF_LOG_LEVEL=chatty would otherwise leave the user without the logs they asked for.
func checkLogSettings(f *cmdutil.Factory) error {
	type setting struct{ where, value string }
	var levels, formats []setting
	if f.Flags.Changed("log-level") {
		levels = append(levels, setting{"--log-level", f.Flags.LogLevel})
	}
	if f.Flags.Changed("log-format") {
		formats = append(formats, setting{"--log-format", f.Flags.LogFormat})
	}
	if v := f.Getenv("AWF_LOG_LEVEL"); v != "" {
		levels = append(levels, setting{"AWF_LOG_LEVEL", v})
	}
	if v := f.Getenv("AWF_LOG_FORMAT"); v != "" {
		formats = append(formats, setting{"AWF_LOG_FORMAT", v})
	}
	for _, s := range levels {
		if !slices.Contains(logLevels, strings.ToLower(s.value)) {
			return fault.New(fault.Usage, "%s=%s: want %s", s.where, s.value, strings.Join(logLevels, ", "))
		}
	}
	for _, s := range formats {
		if !slices.Contains(logFormats, strings.ToLower(s.value)) {
			return fault.New(fault.Usage, "%s=%s: want %s", s.where, s.value, strings.Join(logFormats, " or "))
		}
	}
	return nil
}
