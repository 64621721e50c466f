// Command awf-temporal is awf with the Temporal engine: awf run --engine temporal, awf worker,
// awf approve, awf deny and the status of Temporal runs. It is a program of its own because
// the Temporal SDK's package initialisation (gRPC, protobuf registrations) would slow every
// start of awf, including each sandboxed tool call's helper; awf hands these commands to it
// (docs/distributed.md).
package main

import (
	"os"

	"github.com/awf-dev/awf/cmd/awf/internal/cli"
	"github.com/awf-dev/awf/cmd/awf/internal/durable"
)

func main() {
	os.Exit(cli.Program(durable.Extend))
}
