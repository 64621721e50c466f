package process

import "errors"

// execFileHelper cannot replace the process on Windows, which has no exec in place and no
// numbered descriptors: FileHelperMain runs the helper as a child there.
func execFileHelper(string, string, []string) error {
	return errors.New("exec in place: not on Windows")
}
