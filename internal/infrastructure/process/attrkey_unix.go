//go:build unix

package process

import (
	"fmt"
	"syscall"
)

// attrKey identifies attr, but for its cgroup, by value (the credential it points to
// included).
func attrKey(attr *syscall.SysProcAttr) string {
	k := withoutCgroup(attr)
	cred := ""
	if k.Credential != nil {
		cred = fmt.Sprintf("%+v", *k.Credential)
		k.Credential = nil
	}
	return fmt.Sprintf("%+v %s", k, cred)
}
