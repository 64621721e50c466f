package process

import (
	"fmt"
	"syscall"
)

// attrKey identifies attr by value.
func attrKey(attr *syscall.SysProcAttr) string {
	return fmt.Sprintf("%+v", *attr)
}
