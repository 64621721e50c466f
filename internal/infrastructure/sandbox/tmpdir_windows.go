package sandbox

// holdDir holds nothing on Windows: without a lock no directory is swept.
func holdDir(string) (func(), error) { return func() {}, nil }

// takeDir never takes a directory on Windows.
func takeDir(string) (func(), bool) { return nil, false }
