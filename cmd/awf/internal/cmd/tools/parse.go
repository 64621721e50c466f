package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/bom"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/pkg/toolparse"
)

// MaxModelOutput bounds the text `awf tools parse` reads.
const MaxModelOutput = 64 << 20

// ParseOptions are everything `awf tools parse` needs.
type ParseOptions struct {
	IO      *iostreams.IOStreams
	Tools   []string
	Schemas string
	// Text prints the calls for people; the default is the JSON object of the contract.
	Text bool
}

func newCmdParse(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &ParseOptions{IO: f.IO}
	format := cmdutil.FormatJSON // what scripts read; text is for people
	cmd := &cobra.Command{
		Use:   "parse [--tools a,b,c] [--schemas FILE.json] < model-output.txt",
		Short: "Parse tool calls out of model text",
		Long: `Read a model's text on standard input and print the tool calls in it, the remaining
prose and any leading reasoning as one JSON object:

  {"calls":[{"id":"...","name":"...","arguments":{...}}],"content":"...","reasoning":"...","error":""}

Recognised: OpenAI-style JSON, Claude-style and other XML dialects, Hermes/Qwen <tool_call>,
Mistral [TOOL_CALLS], Llama 3 JSON and <|python_tag|>, pythonic [f(a=1)], JSON in code fences.
--tools lists the allowed names (call-shaped JSON without a marker is a call only for these);
--schemas is a JSON object mapping tool names to parameter schemas, used to type XML values.
A malformed call sets "error" and no calls. The exit code is 0 whatever the text held; 1 for
usage errors.`,
		Example: `  awf tools parse --tools read_file,grep < reply.txt
  llm "list the files" | awf tools parse --schemas schemas.json`,
		Args:              cmdutil.MaxArgs(0),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Text = !format.JSON()
			return dispatch(cmd.Context(), runF, opts, runParse)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Tools, "tools", nil, "allowed tool `NAMES`, comma-separated (default: any)")
	cmd.Flags().StringVar(&opts.Schemas, "schemas", "", "JSON `FILE` mapping tool names to parameter schemas")
	cmd.Flags().VarP(&format, "output", "o", "output format: json or text")
	_ = cmd.RegisterFlagCompletionFunc("output", cmdutil.CompleteValues("json", "text"))
	_ = cmd.RegisterFlagCompletionFunc("tools", cmdutil.CommaList(cmdutil.CompleteTools(f)))
	return cmd
}

// ParseResult is the JSON object `awf tools parse` prints (TOOLPARSE.md).
type ParseResult struct {
	Calls     []toolparse.Call `json:"calls"`
	Content   string           `json:"content"`
	Reasoning string           `json:"reasoning"`
	Error     string           `json:"error"`
}

func runParse(_ context.Context, opts *ParseOptions) error {
	schemas, err := readSchemas(opts.Schemas)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(opts.IO.In, MaxModelOutput+1))
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("read standard input: %w", err))
	}
	if len(data) > MaxModelOutput {
		return fault.New(fault.Usage, "standard input holds more than %d bytes", MaxModelOutput)
	}
	parsed, perr := toolparse.Parse(string(data), toolparse.Options{Tools: opts.Tools, Schemas: schemas})
	res := ParseResult{Calls: parsed.Calls, Content: parsed.Content, Reasoning: parsed.Reasoning}
	if res.Calls == nil {
		res.Calls = []toolparse.Call{}
	}
	if perr != nil {
		res.Error = perr.Error()
	}
	if !opts.Text {
		return cmdutil.WriteJSON(opts.IO.Out, res)
	}
	return writeParse(opts.IO.Out, res)
}

// readSchemas reads --schemas: a JSON object of tool name -> parameter schema.
func readSchemas(path string) (map[string]json.RawMessage, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.New(fault.Usage, "--schemas: %v", err)
	}
	if data, err = bom.Strip(data); err != nil {
		return nil, fault.New(fault.Usage, "--schemas %s: %w", path, err)
	}
	var schemas map[string]json.RawMessage
	if err := json.Unmarshal(data, &schemas); err != nil {
		return nil, fault.New(fault.Usage, "--schemas %s: want a JSON object mapping tool names to schemas: %v", path, err)
	}
	return schemas, nil
}

func writeParse(w io.Writer, res ParseResult) error {
	if res.Error != "" {
		fmt.Fprintf(w, "error: %s\n", res.Error)
	}
	for _, c := range res.Calls {
		fmt.Fprintf(w, "call %s: %s %s\n", c.ID, c.Name, c.Arguments)
	}
	if res.Reasoning != "" {
		fmt.Fprintf(w, "reasoning:\n%s\n", indent(res.Reasoning))
	}
	if res.Content != "" {
		fmt.Fprintf(w, "content:\n%s\n", indent(res.Content))
	}
	return nil
}
