package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmd/audit"

	"github.com/awf-dev/awf/cmd/awf/internal/cmd/doctor"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/engine"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/history"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/list"
	mcpcmd "github.com/awf-dev/awf/cmd/awf/internal/cmd/mcp"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/resume"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/run"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/scaffold"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/status"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/tools"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/ui"
	"github.com/awf-dev/awf/cmd/awf/internal/cmd/validate"
	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/domain/fault"
)

// The values --non-interactive and --approve accept.
var (
	nonInteractiveModes = []string{"deny", "fail"}
	approveModes        = []string{"auto", "prompt", "deny"}
)

// NewCmdRoot returns the awf command tree.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command { return newCmdRoot(f, nil) }

// newCmdRoot returns the command tree that running args needs (see commandsFor); with nil
// args, the whole tree.
func newCmdRoot(f *cmdutil.Factory, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "awf",
		Short: "Run YAML workflows in which AI agents call tools under the engine's control",
		Long: `awf runs declarative YAML workflows: shell commands, tool calls and agent steps in
which a model asks for tools. The engine validates, sandboxes, approves, runs and records every
call: a YAML state file per run and an append-only audit log.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			f.Flags.Changed = cmdutil.ChangedIn(cmd)
			f.IO.SetQuiet(f.Flags.Quiet)
			if err := checkLogSettings(f); err != nil {
				return err
			}
			if v := f.Flags.NonInteractive; v != "" && !slices.Contains(nonInteractiveModes, v) {
				return fault.New(fault.Usage, "--non-interactive=%s: want deny or fail", v)
			}
			if v := f.Flags.Approve; v != "" && !slices.Contains(approveModes, v) {
				return fault.New(fault.Usage, "--approve=%s: want auto, prompt or deny", v)
			}
			f.IO.SetNeverPrompt(f.Flags.NonInteractive != "" || f.Getenv("CI") != "")
			// Cobra checks flag groups (--replay with --record) after this hook, with
			// unclassified errors; checked here they are usage errors.
			if err := cmd.ValidateRequiredFlags(); err != nil {
				return fault.Wrap(fault.Usage, err)
			}
			if err := cmd.ValidateFlagGroups(); err != nil {
				return fault.Wrap(fault.Usage, err)
			}
			return nil
		},
	}
	root.SetVersionTemplate(versionLine())
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fault.Wrap(fault.Usage, err)
	})
	pf := root.PersistentFlags()
	pf.StringVar(&f.Flags.StateDir, "state-dir", "", "directory of run state files (default .awf/runs, env AWF_STATE_DIR)")
	pf.StringVar(&f.Flags.AwfDir, "awf-dir", "", "the project's awf `DIR` (default: the nearest .awf/ upwards, env AWF_DIR)")
	pf.StringVar(&f.Flags.LogLevel, "log-level", "", "log level: debug, info, warn, error (default warn)")
	pf.StringVar(&f.Flags.LogFormat, "log-format", "", "log format: text or json")
	pf.StringVar(&f.Flags.LogFile, "log-file", "", "write logs to `FILE` instead of stderr")
	pf.BoolVarP(&f.Flags.Quiet, "quiet", "q", false, "no progress output; only warnings, failures and data")
	pf.StringVar(&f.Flags.NonInteractive, "non-interactive", "", "never prompt; calls needing approval are denied (deny) or end the run (fail); implied when CI is set")
	pf.Lookup("non-interactive").NoOptDefVal = "deny"
	pf.StringVar(&f.Flags.AuditLog, "audit-log", "", "append the audit log to `FILE` (default .awf/audit.jsonl, env AWF_AUDIT_LOG)")
	pf.StringVar(&f.Flags.Approve, "approve", "", "override every tool's approval mode: auto, prompt or deny (a deny in the workflow stays)")
	pf.BoolVarP(&f.Flags.Yes, "yes", "y", false, "approve calls that would prompt (a deny in the workflow stays)")

	cmds, named := commandsFor(root, f, args)
	root.AddCommand(cmds...)
	if named {
		// Only the named command can run: the completion command (five commands with their
		// flags, built by cobra on every start) is not needed.
		root.CompletionOptions.DisableDefaultCmd = true
	}
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	if args == nil || completing(args) {
		completeGlobalFlags(root)
		completeNoFiles(root)
		completeEverywhere(root, "engine", cmdutil.CompleteValues(cmdutil.EngineLocal, cmdutil.EngineTemporal))
	}
	refuseUnknownTopics(root)
	refuseUnknownSubcommands(root)
	return root
}

// commands are awf's top-level commands by name, each built only when a run needs it.
var commands = []struct {
	name  string // the command's Name(), checked by TestCommandNames
	build func(*cmdutil.Factory) *cobra.Command
}{
	{"run", func(f *cmdutil.Factory) *cobra.Command { return run.NewCmdRun(f, nil) }},
	{"validate", func(f *cmdutil.Factory) *cobra.Command { return validate.NewCmdValidate(f, nil) }},
	{"list", func(f *cmdutil.Factory) *cobra.Command { return list.NewCmdList(f, nil) }},
	{"status", func(f *cmdutil.Factory) *cobra.Command { return status.NewCmdStatus(f, nil) }},
	{"history", func(f *cmdutil.Factory) *cobra.Command { return history.NewCmdHistory(f, nil) }},
	{"resume", func(f *cmdutil.Factory) *cobra.Command { return resume.NewCmdResume(f, nil) }},
	{"init", func(f *cmdutil.Factory) *cobra.Command { return scaffold.NewCmdInit(f, nil) }},
	{"audit", func(f *cmdutil.Factory) *cobra.Command { return audit.NewCmdAudit(f, nil) }},
	{"mcp", func(f *cmdutil.Factory) *cobra.Command { return mcpcmd.NewCmdMCP(f, nil) }},
	{"doctor", func(f *cmdutil.Factory) *cobra.Command { return doctor.NewCmdDoctor(f, nil) }},
	{"tools", func(f *cmdutil.Factory) *cobra.Command { return tools.NewCmdTools(f, nil) }},
	{"ui", func(f *cmdutil.Factory) *cobra.Command { return ui.NewCmdUI(f, nil) }},
	{"worker", engine.NewCmdWorker},
	{"approve", engine.NewCmdApprove},
	{"deny", engine.NewCmdDeny},
}

// commandsFor builds the top-level commands running args needs: the one args name, none when
// args only ask for the version, every one otherwise (help lists them, completion and "did you
// mean" search them). Building all of them, with their flags, was a tenth of the start-up
// that every command pays. Which command args name is found as cobra finds it: the first
// argument when it is a command's name (cobra takes the first word), else with placeholders,
// in cobra's Find; a name that is no command's (an alias, help, __complete) gets every command.
// named reports whether args name one of the commands (then the only one built).
func commandsFor(root *cobra.Command, f *cmdutil.Factory, args []string) (cmds []*cobra.Command, named bool) {
	if len(args) > 0 && versionOnly(args) && !slices.ContainsFunc(args, isWord) {
		return nil, false // flags only: no command is named, without building placeholders to find one
	}
	if len(args) > 0 && isWord(args[0]) {
		// The first argument is what cobra's Find takes for the command's name.
		for _, c := range commands {
			if c.name == args[0] {
				return []*cobra.Command{c.build(f)}, true
			}
		}
	}
	if args != nil {
		placeholders := make([]*cobra.Command, len(commands))
		for i, c := range commands {
			placeholders[i] = &cobra.Command{Use: c.name}
		}
		root.AddCommand(placeholders...)
		found, _, err := root.Find(args)
		root.RemoveCommand(placeholders...)
		if i := slices.Index(placeholders, found); err == nil && i >= 0 {
			return []*cobra.Command{commands[i].build(f)}, true
		}
		if found == root && versionOnly(args) {
			return nil, false
		}
	}
	all := make([]*cobra.Command, len(commands))
	for i, c := range commands {
		all[i] = c.build(f)
	}
	return all, false
}

// isWord reports whether arg is no flag: a command's name, an argument or a flag's value.
func isWord(arg string) bool { return !strings.HasPrefix(arg, "-") }

// versionOnly reports whether args, which name no command, ask for the version and not for
// help: cobra prints the version and stops, so the root command is all that is needed.
func versionOnly(args []string) bool {
	version, help := askedFor(args)
	return version && !help
}

// askedFor reports whether args ask for the version (--version, -v) and for help (--help,
// -h), before any "--".
func askedFor(args []string) (version, help bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		version = version || a == "--version" || a == "-v"
		help = help || a == "--help" || a == "-h"
	}
	return version, help
}

// completing reports whether args may be a shell's completion request (cobra's __complete
// command, which the completion scripts call): only then are the completion functions of
// flags and arguments wired, a walk of the command tree that every other command line would
// pay at start. Any argument of that name counts, past global flags too.
func completing(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		return a == cobra.ShellCompRequestCmd || a == cobra.ShellCompNoDescRequestCmd
	})
}

// completeGlobalFlags completes the values of the global flags that take one of a few words,
// and directories or files for the others.
func completeGlobalFlags(root *cobra.Command) {
	for name, complete := range map[string]cobra.CompletionFunc{
		"log-level":       cmdutil.CompleteValues(logLevels...),
		"log-format":      cmdutil.CompleteValues(logFormats...),
		"non-interactive": cmdutil.CompleteValues(nonInteractiveModes...),
		"approve":         cmdutil.CompleteValues(approveModes...),
		"state-dir":       cmdutil.CompleteDirs,
		"awf-dir":         cmdutil.CompleteDirs,
	} {
		_ = root.RegisterFlagCompletionFunc(name, complete) // fails only for a flag that does not exist
	}
}

// completeNoFiles makes the shell offer no file names after a command that takes no arguments
// (its Use is one word: awf list, awf ui) and says nothing of its own completion: cobra's
// default is the shell's file completion. Commands that take arguments complete them
// themselves (cmdutil.CompleteRunIDs, CompleteWorkflows, ...).
func completeNoFiles(c *cobra.Command) {
	for _, sub := range c.Commands() {
		completeNoFiles(sub)
	}
	if c.ValidArgsFunction == nil && c.Runnable() && len(strings.Fields(c.Use)) == 1 {
		c.ValidArgsFunction = cobra.NoFileCompletions
	}
}

// completeEverywhere completes the flag name with complete on every command that has it and
// completes it no other way (awf run --engine, awf status --engine).
func completeEverywhere(c *cobra.Command, name string, complete cobra.CompletionFunc) {
	for _, sub := range c.Commands() {
		completeEverywhere(sub, name, complete)
	}
	if c.LocalFlags().Lookup(name) == nil {
		return
	}
	if _, ok := c.GetFlagCompletionFunc(name); !ok {
		_ = c.RegisterFlagCompletionFunc(name, complete)
	}
}

// refuseUnknownSubcommands makes every command that only groups others (awf itself, awf
// completion) print its help when called alone and fail with a usage error when called with
// a word that is none of its commands: cobra exits 0 after printing help for `awf completion
// tcsh` and reports `awf nosuch` unclassified (exit 4).
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return unknownCommand(cmd, args[0])
	}
	c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
}

// unknownCommand is the usage error for a word that is not one of cmd's commands, with
// cobra's suggestion when it has one.
func unknownCommand(cmd *cobra.Command, word string) error {
	hint := ""
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, set only where it suggests itself
	}
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		hint = fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return fault.New(fault.Usage, "unknown command %q for %q%s", word, cmd.CommandPath(), hint)
}

// refuseUnknownTopics makes `awf help WORD` a usage error when WORD is no command; cobra
// prints "Unknown help topic" and exits 0.
func refuseUnknownTopics(root *cobra.Command) {
	help, _, err := root.Find([]string{"help"})
	if err != nil || help == root {
		return
	}
	show := help.Run
	help.RunE = func(c *cobra.Command, args []string) error {
		cmd, rest, err := c.Root().Find(args)
		if err != nil {
			return fault.Wrap(fault.Usage, err)
		}
		if len(rest) > 0 {
			return unknownCommand(cmd, rest[0])
		}
		show(c, args)
		return nil
	}
}
