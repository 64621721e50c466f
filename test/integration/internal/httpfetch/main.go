// Command httpfetch runs awf's http_request tool once, inside a container, so that the
// integration tests exercise its policy against Docker's networking and DNS. It prints the
// tool's result as one JSON object: {"status", "output", "error"}.
//
//	httpfetch [-hosts web,*.example.com] [-allow-private] URL
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/tools/httptool"
)

// Result is what httpfetch prints; the tests decode it.
type Result struct {
	Status string `json:"status"`
	Output string `json:"output"`
	Error  string `json:"error"`
}

func main() {
	hosts := flag.String("hosts", "", "comma-separated host allowlist (empty: any public host)")
	private := flag.Bool("allow-private", false, "allow private and loopback addresses")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: httpfetch [-hosts LIST] [-allow-private] URL")
		os.Exit(2)
	}
	p := httptool.Policy{AllowPrivate: *private, Timeout: 10 * time.Second}
	if *hosts != "" {
		p.Hosts = strings.Split(*hosts, ",")
	}
	t, err := httptool.New(p)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	res := t.Execute(context.Background(), tool.Invocation{ID: "it", Args: map[string]any{"url": flag.Arg(0)}})
	if err := json.NewEncoder(os.Stdout).Encode(Result{Status: string(res.Status), Output: res.Output, Error: res.Error}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
