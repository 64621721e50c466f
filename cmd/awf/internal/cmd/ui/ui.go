// Package ui implements `awf ui`: a local, read-only web viewer of the runs in the state
// directory and of the audit log (served by package webui).
package ui

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/webui"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/localhttp"
	"github.com/awf-dev/awf/internal/infrastructure/statestore"
)

// DefaultAddr listens on loopback, on a free port chosen at each start.
const DefaultAddr = "127.0.0.1:0"

// Options are everything `awf ui` needs.
type Options struct {
	IO      *iostreams.IOStreams
	Factory *cmdutil.Factory

	Addr        string
	AllowRemote bool
	// Listening, when set, is told the URL to open (tests use it).
	Listening func(url string)
}

// NewCmdUI returns `awf ui`.
func NewCmdUI(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Browse runs and the audit log in a local, read-only web page",
		Long: `Serve a read-only web app over the runs in the state directory and the audit log: the
runs (filter by status, workflow, tool and decision; search; running runs update live), each
run's timeline of steps with commands, outputs and errors, agent steps as conversations with
every tool call, who allowed or refused it and the files it changed, and the audit log with
the filters of awf audit. It never writes the state or the log, and needs no network.

awf ui listens on 127.0.0.1 (a free port unless --addr says which) and prints a URL with a
token made at each start: open it in a browser on this machine. The token moves to a cookie on
the first request; requests without it, naming a Host that is not a loopback name, or sent by a
page of another origin are refused. A non-loopback --addr is refused unless --allow-remote is
given (the token still guards it, but travels over plain HTTP). Stop it with Ctrl-C.`,
		Example: `  awf ui
  awf ui --addr 127.0.0.1:8099
  awf ui --state-dir /ci/artifacts/runs --audit-log /ci/artifacts/audit.jsonl`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := listenAddr(opts); err != nil {
				return err
			}
			if runF == nil {
				runF = runUI
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", DefaultAddr, "listen on `HOST:PORT` (a loopback address; port 0 picks a free one)")
	cmd.Flags().BoolVar(&opts.AllowRemote, "allow-remote", false, "let --addr be a non-loopback address (anyone who reaches it and has the token can read every run)")
	return cmd
}

func listenAddr(opts *Options) (string, error) {
	return localhttp.ListenAddr("--addr", opts.Addr, opts.AllowRemote,
		"anyone who reaches it and learns the token could read every run and the audit log")
}

func runUI(ctx context.Context, opts *Options) error {
	cfg, err := opts.Factory.Config()
	if err != nil {
		return err
	}
	store, err := statestore.New(cfg.StateDir)
	if err != nil {
		return err
	}
	token, err := webui.NewToken()
	if err != nil {
		return fault.Wrap(fault.System, err)
	}
	srv, err := webui.New(webui.Config{
		Runs: store, StateDir: cfg.StateDir, AuditLog: cfg.AuditLog, Token: token,
		Workflows: opts.Factory.Loader(), AllowRemote: opts.AllowRemote, Log: opts.Factory.Log(),
	})
	if err != nil {
		return fault.Wrap(fault.System, err)
	}
	addr, err := listenAddr(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fault.Wrap(fault.Usage, fmt.Errorf("--addr %s: %w", opts.Addr, err))
	}
	url := srv.URL(ln.Addr())
	if !opts.IO.Quiet() {
		fmt.Fprintf(opts.IO.ErrOut, "awf ui: runs in %s, audit log %s (read-only); stop with Ctrl-C\n", cfg.StateDir, cfg.AuditLog)
	}
	fmt.Fprintln(opts.IO.Out, url)
	if opts.Listening != nil {
		opts.Listening(url)
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return fault.Wrap(fault.System, err)
	}
	return nil
}
