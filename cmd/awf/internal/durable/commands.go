package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/activity"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/awf-dev/awf/cmd/awf/internal/cmd/status"
	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Extend adds the temporal engine to awf's command tree: the engine of awf run --engine
// temporal, and the worker, approve, deny and status commands that plain awf hands over to
// awf-temporal.
func Extend(f *cmdutil.Factory, root *cobra.Command) {
	f.Engines = map[string]cmdutil.Engine{cmdutil.EngineTemporal: func(ctx context.Context, req cmdutil.EngineRun) error {
		return Submit(ctx, f, req)
	}}
	for _, c := range root.Commands() {
		switch c.Name() {
		case "worker", "approve", "deny", "status":
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newCmdWorker(f), newCmdDecide(f, true), newCmdDecide(f, false), newCmdStatus(f))
}

func newCmdWorker(f *cmdutil.Factory) *cobra.Command {
	srv := &cmdutil.Server{}
	var host string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a worker of the temporal engine",
		Long: `Run a worker: it executes the workflows of awf runs submitted with awf run --engine temporal
and their activities (shell steps, tool calls, agent steps), through the same governed path as a
local run: policy, approval, sandbox and this worker's audit log. Stop it with Ctrl-C.`,
		Args: cmdutil.ExactArgs(0, "awf worker takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if host == "" {
				host = hostname()
			}
			return runWorker(cmd.Context(), f, *srv, host)
		},
	}
	cmdutil.AddServerFlags(cmd, srv)
	cmd.Flags().StringVar(&host, "host", "", "`NAME` of the workspace this worker sees (default: the host name): runs taken by a worker stay with the workers of the same name, which must see the same files")
	return cmd
}

// runWorker polls the task queue (workflows and activities of shared-workspace runs) and the
// queue of its host (activities of the runs the host's workers claimed) until ctx ends. A
// worker restarted on the same host takes its runs back.
func runWorker(ctx context.Context, f *cmdutil.Factory, srv cmdutil.Server, host string) error {
	set, err := loadSettings(f)
	if err != nil {
		return err
	}
	c, err := dial(f, &srv)
	if err != nil {
		return err
	}
	defer c.Close()
	f.Approver = func() ports.Approver { return &Approver{} }
	f.HelperPath = helperProgram()
	go sweeper(ctx, payloadDir(f), set.PayloadRetention, func(removed int, err error) {
		if err != nil || removed > 0 {
			f.Log().Info("payload store swept", "removed", removed, "retention", set.PayloadRetention, "err", err)
		}
	})
	own := srv.TaskQueue + "@" + host
	acts := NewActivities(f, own)
	common := worker.New(c, srv.TaskQueue, worker.Options{})
	common.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
	pinned := worker.New(c, own, worker.Options{})
	for _, w := range []worker.Worker{common, pinned} {
		registerActivities(w, acts)
	}
	if err := common.Start(); err != nil {
		return fmt.Errorf("start worker on %s: %w", srv.TaskQueue, err)
	}
	defer common.Stop()
	if err := pinned.Start(); err != nil {
		return fmt.Errorf("start worker on %s: %w", own, err)
	}
	defer pinned.Stop()
	helper := f.HelperPath
	if helper == "" {
		helper = "this program"
	}
	fmt.Fprintf(f.IO.ErrOut, "worker %d: polling task queues %s and %s on %s (namespace %s); sandbox helper: %s\n", os.Getpid(), srv.TaskQueue, own, srv.HostPort, srv.Namespace, helper)
	<-ctx.Done()
	return nil
}

// activityRegistry is what registers activities: a worker, or a replayer in tests.
type activityRegistry interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

func registerActivities(w activityRegistry, a *Activities) {
	w.RegisterActivityWithOptions(a.Claim, activity.RegisterOptions{Name: ActivityClaim})
	w.RegisterActivityWithOptions(a.Shell, activity.RegisterOptions{Name: ActivityShell})
	w.RegisterActivityWithOptions(a.Tool, activity.RegisterOptions{Name: ActivityTool})
	w.RegisterActivityWithOptions(a.Agent, activity.RegisterOptions{Name: ActivityAgent})
	registerAgentActivities(w, a)
}

func newCmdDecide(f *cmdutil.Factory, allow bool) *cobra.Command {
	srv := &cmdutil.Server{}
	d := Decision{Allow: allow}
	verb, what := "deny", "Deny"
	if allow {
		verb, what = "approve", "Approve"
	}
	cmd := &cobra.Command{
		Use:   verb + " RUN_ID CALL_ID",
		Short: what + " a tool call that waits for a person (temporal engine)",
		Long: what + ` a tool call of a run on the temporal engine that waits for approval (awf status RUN_ID
lists them, with their full arguments). The decision is bound to the call as it was shown: valid
once, for that call only; a decision sent before the call waits is kept for it. The worker's audit
log records who decided and from which host.`,
		Args: cmdutil.ExactArgs(2, "need a run and a call: awf "+verb+" RUN_ID CALL_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d.CallID = args[1]
			return Decide(cmd.Context(), f, *srv, args[0], d)
		},
	}
	if !allow {
		cmd.Flags().StringVar(&d.Reason, "reason", "", "why the call is denied (the model is told)")
	}
	cmdutil.AddServerFlags(cmd, srv)
	return cmd
}

func newCmdStatus(f *cmdutil.Factory) *cobra.Command {
	srv := &cmdutil.Server{}
	var format cmdutil.Format
	var wait bool
	cmd := &cobra.Command{
		Use:   "status RUN_ID",
		Short: "Show the state of a run on the temporal engine, and the calls waiting for a person",
		Args:  cmdutil.ExactArgs(1, "need a run id: awf status RUN_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, waiting, err := Status(cmd.Context(), f, *srv, args[0], wait)
			if err != nil {
				return err
			}
			return printStatus(f, st, waiting, format)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the run ends")
	cmd.Flags().String("engine", cmdutil.EngineTemporal, "the run's engine (awf status hands temporal runs over with it)")
	_ = cmd.Flags().MarkHidden("engine")
	cmdutil.AddStateOutputFlag(cmd, &format)
	cmdutil.AddServerFlags(cmd, srv)
	return cmd
}

// printStatus prints a run as awf status prints a local one (yaml: its state file, exported),
// with the calls waiting and their full arguments, escaped.
func printStatus(f *cmdutil.Factory, st *state.RunState, waiting []Pending, format cmdutil.Format) error {
	v := status.View{RunState: st, StateFile: "temporal:" + st.ID}
	switch format {
	case cmdutil.FormatYAML:
		b, err := cmdutil.ExportYAML(context.Background(), st)
		if err != nil {
			return err
		}
		_, err = f.IO.Out.Write(b)
		return err
	case cmdutil.FormatJSON:
		return cmdutil.WriteJSON(f.IO.Out, struct {
			status.View
			Waiting []Pending `json:"waiting,omitempty"`
		}{v, waiting})
	}
	status.Write(f.IO.Out, v)
	for _, p := range waiting {
		fmt.Fprintf(f.IO.Out, "waiting for approval since %s: call %s, step %s, tool %s\n  arguments: %s\n  %s\n",
			p.Since.UTC().Format(time.RFC3339), p.CallID, render.Line(p.Step), render.Line(p.Tool),
			render.Line(jsonText(p.Args)), render.Line(p.Reason))
	}
	return nil
}

// jsonText is v as one line of JSON, every argument in full.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// sdkLogger sends the SDK's logs to awf's logger at their levels.
func sdkLogger(f *cmdutil.Factory) sdklog.Logger { return sdklog.NewStructuredLogger(f.Log()) }
