// Package webui serves `awf ui`: a read-only web app over the runs of a state directory and
// the audit log. Pages are rendered on the server with html/template (every value escaped)
// from embedded assets, with a little JavaScript for live updates; nothing is fetched from
// elsewhere. It reads state through the state store and the audit log through its reader,
// and never writes either. Every request must carry the server's token (in the URL once, in
// a cookie after) and name a loopback Host (see guard.go).
package webui

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	auditlog "github.com/awf-dev/awf/internal/infrastructure/audit"
	"github.com/awf-dev/awf/internal/infrastructure/localhttp"
)

//go:embed assets
var assets embed.FS

// Runs is what the viewer needs of the state store (statestore.Store has it): the runs'
// summaries, one run with its large outputs, and whether a running run still has a process.
type Runs interface {
	List(ctx context.Context) ([]ports.RunSummary, error)
	Load(ctx context.Context, id string) (*state.RunState, error)
	Owner(id string) (ports.RunOwner, bool)
}

// Config is everything a Server needs.
type Config struct {
	Runs Runs
	// StateDir is the directory of the runs, watched for changes to update pages live.
	StateDir string
	// AuditLog is the audit log's path; a missing file has no records.
	AuditLog string
	// Token is the secret every request must carry (NewToken makes one).
	Token string
	// Workflows loads a run's workflow file, to lay out its parallel steps (nil: the layout
	// comes from the state alone).
	Workflows ports.WorkflowLoader
	// AllowRemote accepts any Host header; by default only loopback names are accepted.
	AllowRemote bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Poll is how often live updates look for changes (0: half a second).
	Poll time.Duration
	// Log receives diagnostics (nil: discarded).
	Log *slog.Logger
}

// Server is the viewer. It is safe for concurrent use.
type Server struct {
	cfg   Config
	pages map[string]*template.Template
	stats *statsCache
	wfs   *workflowCache
	cache *runCache
	// audit finds a run's records in the audit log, reading only what was appended since the
	// last run page; nil without an audit log.
	audit *auditlog.RunIndex
	// stop ends live update streams (Serve's context); nil: they end with their requests.
	stop <-chan struct{}
}

// New returns a server; a missing Runs or Token is an error.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Runs == nil:
		return nil, fmt.Errorf("webui: no state store")
	case len(cfg.Token) < 16:
		return nil, fmt.Errorf("webui: token too short (use NewToken)")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	srv := &Server{cfg: cfg, pages: pages, stats: newStatsCache(), wfs: &workflowCache{files: map[string]cachedWorkflow{}}, cache: &runCache{}}
	if cfg.AuditLog != "" {
		srv.audit = auditlog.NewRunIndex(cfg.AuditLog)
	}
	return srv, nil
}

// NewToken returns a random token of 32 bytes in hex: one per start of the server.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// URL is the address to open: the server at addr with its token.
func (s *Server) URL(addr net.Addr) string {
	return fmt.Sprintf("http://%s/?token=%s", addr.String(), s.cfg.Token)
}

// Handler serves the app: / (runs), /runs/ID (one run), /runs/ID/output (one output, paged),
// /audit, /events (server-sent events) and /static/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.runsPage)
	mux.HandleFunc("GET /runs/{id}", s.runPage)
	mux.HandleFunc("GET /runs/{id}/output", s.outputPage)
	mux.HandleFunc("GET /audit", s.auditPage)
	mux.HandleFunc("GET /events", s.events)
	return s.guard(mux)
}

// Serve serves on ln until ctx ends, then shuts down (see localhttp.Serve); live update
// streams end with ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.stop = ctx.Done()
	return localhttp.Serve(ctx, ln, s.Handler())
}
