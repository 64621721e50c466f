package httptool

import "github.com/awf-dev/awf/internal/infrastructure/tools/internal/toolargs"

// args reads a call's arguments (shared with the file tools).
type args = toolargs.Args
