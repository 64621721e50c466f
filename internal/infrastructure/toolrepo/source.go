package toolrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// Limits applied when Options leaves them zero.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultMaxIndexSize   = 8 << 20
	DefaultMaxFileSize    = 16 << 20
	DefaultMaxPackageSize = 64 << 20
)

// Options tune how a registry is read. The zero value uses the defaults above and a fresh
// http.Client.
type Options struct {
	// Client fetches from HTTP(S) registries; nil means a client with Timeout.
	Client *http.Client
	// Timeout bounds each HTTP request (when Client is nil).
	Timeout time.Duration
	// MaxIndexSize, MaxFileSize and MaxPackageSize cap what one fetch of the index, one
	// file, and one package's files together may hold.
	MaxIndexSize, MaxFileSize, MaxPackageSize int64
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: o.Timeout}
	}
	if o.MaxIndexSize <= 0 {
		o.MaxIndexSize = DefaultMaxIndexSize
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxPackageSize <= 0 {
		o.MaxPackageSize = DefaultMaxPackageSize
	}
	return o
}

// Repo is one registry. Its index is fetched once, on first use. Safe for concurrent use.
type Repo struct {
	loc  string
	src  source
	opts Options

	once  sync.Once
	index *Index
	err   error
}

// source fetches a file of the registry by its "/"-separated path, reading at most max
// bytes: a larger file is an error, never silently cut.
type source interface {
	fetch(ctx context.Context, rel string, max int64) ([]byte, error)
}

// Open returns the registry at location: an http:// or https:// URL, a file:// URL or a
// directory. A directory that does not exist or a URL of another scheme is a fault.Usage
// error; nothing is fetched yet.
func Open(location string, opts Options) (*Repo, error) {
	opts = opts.withDefaults()
	r := &Repo{loc: location, opts: opts}
	lower := strings.ToLower(location)
	switch {
	case strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://"):
		u, err := url.Parse(location)
		if err != nil || u.Host == "" {
			return nil, fault.New(fault.Usage, "registry %q: not a valid URL", location)
		}
		u.RawQuery, u.Fragment = "", ""
		r.src = &httpSource{base: u, client: opts.Client}
		return r, nil
	case strings.HasPrefix(lower, "file://"):
		u, err := url.Parse(location)
		if err != nil || u.Host != "" && u.Host != "localhost" {
			return nil, fault.New(fault.Usage, "registry %q: want file:///absolute/path", location)
		}
		location = u.Path
	case strings.Contains(location, "://"):
		return nil, fault.New(fault.Usage, "registry %q: want a directory or an http(s):// URL", location)
	}
	info, err := os.Stat(location)
	if err != nil {
		return nil, fault.New(fault.Usage, "registry %s: %v", location, err)
	}
	if !info.IsDir() {
		return nil, fault.New(fault.Usage, "registry %s: not a directory", location)
	}
	r.src = dirSource{dir: location}
	return r, nil
}

// String is the registry's location as given.
func (r *Repo) String() string { return r.loc }

// Index fetches (once) and checks the registry's index.
func (r *Repo) Index(ctx context.Context) (*Index, error) {
	r.once.Do(func() {
		data, err := r.src.fetch(ctx, IndexFile, r.opts.MaxIndexSize)
		if err != nil {
			r.err = fmt.Errorf("registry %s: %w", r.loc, err)
			return
		}
		r.index, r.err = decodeIndex(r.loc, data)
	})
	return r.index, r.err
}

// fetch reads one file of a package.
func (r *Repo) fetch(ctx context.Context, rel string, max int64) ([]byte, error) {
	return r.src.fetch(ctx, rel, max)
}

// dirSource reads a registry directory through os.Root: no path, symlink included, reaches
// outside it.
type dirSource struct{ dir string }

func (s dirSource) fetch(_ context.Context, rel string, max int64) ([]byte, error) {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, fault.Wrap(fault.Execution, fmt.Errorf("open registry directory: %w", err))
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, fault.Wrap(fault.Execution, fmt.Errorf("read %s: %w", rel, err))
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && !info.Mode().IsRegular() {
		return nil, fault.New(fault.Execution, "read %s: not a regular file", rel)
	}
	return readCapped(f, rel, max)
}

// httpSource reads a registry over HTTP(S).
type httpSource struct {
	base   *url.URL
	client *http.Client
}

func (s *httpSource) fetch(ctx context.Context, rel string, max int64) ([]byte, error) {
	u := s.base.JoinPath(strings.Split(rel, "/")...)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fault.Wrap(fault.Execution, fmt.Errorf("fetch %s: %w", rel, err))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fault.Wrap(fault.Execution, fmt.Errorf("fetch %s: %w", rel, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fault.New(fault.Execution, "fetch %s: %s", u.Redacted(), resp.Status)
	}
	if resp.ContentLength > max {
		return nil, fault.New(fault.Execution, "fetch %s: %d bytes: %w of %d bytes", rel, resp.ContentLength, errTooLarge, max)
	}
	return readCapped(resp.Body, rel, max)
}

// errTooLarge marks a file larger than the fetch allowed.
var errTooLarge = errors.New("more than the limit")

// readCapped reads at most max bytes; more is an error.
func readCapped(r io.Reader, rel string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fault.Wrap(fault.Execution, fmt.Errorf("read %s: %w", rel, err))
	}
	if int64(len(data)) > max {
		return nil, fault.New(fault.Execution, "read %s: %w of %d bytes", rel, errTooLarge, max)
	}
	return data, nil
}
