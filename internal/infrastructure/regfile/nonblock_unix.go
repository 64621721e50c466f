//go:build unix

package regfile

import "syscall"

// oNonblock keeps the open of a FIFO from waiting for a writer; it changes nothing for a
// regular file.
const oNonblock = syscall.O_NONBLOCK
