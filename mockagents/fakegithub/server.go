package fakegithub

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options configure a Server.
type Options struct {
	// Dir receives the CA's PEM file (ca.pem) and gh's config directory
	// (gh-config); empty means a temporary directory removed by Close.
	Dir string
	// LogPath receives one JSON line per request (see the package doc);
	// empty logs nothing.
	LogPath string
	// Token is the only token accepted; empty means a random one.
	Token string
	// User is the login the token belongs to; default "party-test".
	User string
	// Repos, when not empty, are the only repositories (owner/name) that
	// exist; every other is 404. Empty: every repository exists.
	Repos []string
	// Addr is the address to listen on; default 127.0.0.1:0.
	Addr string
	// Now is the server's clock; default time.Now.
	Now func() time.Time
}

// Server is a running fake GitHub.
type Server struct {
	opt     Options
	auth    *authority
	dir     string
	ownDir  bool
	caFile  string
	ghDir   string
	logFile *os.File

	// addr is the address the server listens on, kept across Stop and
	// Resume.
	addr string

	mu      sync.Mutex
	ln      net.Listener
	srv     *http.Server
	repos   map[string]*repo
	seq     int
	nextID  int64
	lastT   time.Time
	stopped bool
	// pending are EditBeforeWrite's edits, done before the next write;
	// lateErrs are their failures, which Close returns.
	pending  []pendingEdit
	lateErrs []error
}

// Start makes the CA, writes its PEM file and serves HTTPS in the
// background until Close.
func Start(opt Options) (*Server, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.User == "" {
		opt.User = "party-test"
	}
	if opt.Token == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		opt.Token = "fgh_" + hex.EncodeToString(b[:])
	}
	s := &Server{opt: opt, repos: map[string]*repo{}, dir: opt.Dir}
	if s.dir == "" {
		d, err := os.MkdirTemp("", "fakegithub")
		if err != nil {
			return nil, fmt.Errorf("fakegithub: %w", err)
		}
		s.dir, s.ownDir = d, true
	}
	fail := func(err error) (*Server, error) {
		if s.logFile != nil {
			s.logFile.Close()
		}
		if s.ownDir {
			os.RemoveAll(s.dir)
		}
		return nil, err
	}
	auth, err := newAuthority(time.Now()) // the wall clock: gh checks the certificate against it
	if err != nil {
		return fail(err)
	}
	s.auth = auth
	s.caFile = filepath.Join(s.dir, "ca.pem")
	if err := os.WriteFile(s.caFile, auth.caPEM, 0o644); err != nil {
		return fail(fmt.Errorf("fakegithub: %w", err))
	}
	s.ghDir = filepath.Join(s.dir, "gh-config")
	if err := os.MkdirAll(s.ghDir, 0o700); err != nil {
		return fail(fmt.Errorf("fakegithub: %w", err))
	}
	for _, full := range opt.Repos {
		s.nextID++
		s.repos[full] = newRepo(full, s.nextID)
	}
	if opt.LogPath != "" {
		f, err := os.OpenFile(opt.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fail(fmt.Errorf("fakegithub: log: %w", err))
		}
		s.logFile = f
	}
	addr := opt.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := s.listen(addr); err != nil {
		return fail(err)
	}
	return s, nil
}

// listen serves on addr; s.mu is not held.
func (s *Server) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fakegithub: listen: %w", err)
	}
	tl := tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{s.auth.cert}, MinVersion: tls.VersionTLS12})
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.ln, s.srv, s.stopped = tl, srv, false
	if s.addr == "" {
		s.addr = ln.Addr().String() // before serving: handlers read it
	}
	s.mu.Unlock()
	go func() { _ = srv.Serve(tl) }() // returns once Stop or Close shut it
	return nil
}

// Host is the host gh is given as GH_HOST: 127.0.0.1:PORT.
func (s *Server) Host() string { return s.addr }

// URL is the API's base URL, https://127.0.0.1:PORT/api/v3/.
func (s *Server) URL() string { return "https://" + s.addr + "/api/v3/" }

// Token is the token the server accepts.
func (s *Server) Token() string { return s.opt.Token }

// CAFile is the path of the CA's PEM file, for SSL_CERT_FILE.
func (s *Server) CAFile() string { return s.caFile }

// LogPath is the request log's path ("" when there is none).
func (s *Server) LogPath() string { return s.opt.LogPath }

// Env is the environment that points gh at the server, as KEY=VALUE
// entries to add to a command's environment.
func (s *Server) Env() []string {
	return []string{
		"GH_HOST=" + s.Host(),
		"GH_ENTERPRISE_TOKEN=" + s.opt.Token,
		"SSL_CERT_FILE=" + s.caFile,
		"GH_CONFIG_DIR=" + s.ghDir,
		"GH_NO_UPDATE_NOTIFIER=1",
		"GH_PROMPT_DISABLED=1",
		"NO_COLOR=1",
	}
}

// Stop closes the listener, so that gh finds nobody there (offline); the
// contents stay, and Resume serves them again.
func (s *Server) Stop() error {
	s.mu.Lock()
	srv, stopped := s.srv, s.stopped
	s.stopped = true
	s.mu.Unlock()
	if stopped {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	return err
}

// Resume listens again on the address the server had, after Stop.
func (s *Server) Resume() error {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if !stopped {
		return nil
	}
	return s.listen(s.addr)
}

// Close stops the server for good and removes its temporary directory.
func (s *Server) Close() error {
	err := s.Stop()
	s.mu.Lock()
	if len(s.lateErrs) > 0 && err == nil {
		err = errors.Join(s.lateErrs...)
	}
	s.mu.Unlock()
	if s.logFile != nil {
		if cerr := s.logFile.Close(); err == nil {
			err = cerr
		}
	}
	if s.ownDir {
		os.RemoveAll(s.dir)
	}
	return err
}

// stamp is the time of a write: now, to the second, and at least a second
// after the previous write's. s.mu is held.
func (s *Server) stamp() time.Time {
	t := s.opt.Now().UTC().Truncate(time.Second)
	if !t.After(s.lastT) {
		t = s.lastT.Add(time.Second)
	}
	s.lastT = t
	return t
}

// newID is a fresh database id. s.mu is held.
func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}

// repo finds (or, when every repository exists, makes) owner/name. s.mu
// is held.
func (s *Server) repo(owner, name string) *repo {
	full := owner + "/" + name
	if r, ok := s.repos[full]; ok {
		return r
	}
	if len(s.opt.Repos) > 0 || owner == "" || name == "" {
		return nil
	}
	r := newRepo(full, s.newID())
	s.repos[full] = r
	return r
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	for _, p := range []string{"token ", "Bearer ", "bearer "} {
		if t, ok := strings.CutPrefix(h, p); ok {
			return t == s.opt.Token
		}
	}
	return false
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	defer func() { s.logRequest(r, body, sw.status) }()
	if !s.authorized(r) {
		writeJSON(sw, http.StatusUnauthorized, apiError("Bad credentials"))
		return
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/v3/")
	if !ok {
		writeJSON(sw, http.StatusNotFound, apiError("Not Found"))
		return
	}
	var seg []string
	for p := range strings.SplitSeq(strings.Trim(rest, "/"), "/") {
		u, err := url.PathUnescape(p)
		if err != nil {
			writeJSON(sw, http.StatusNotFound, apiError("Not Found"))
			return
		}
		seg = append(seg, u)
	}
	req := &request{method: r.Method, seg: seg, query: r.URL.Query(), body: body,
		self: "https://" + r.Host + r.URL.Path, header: sw.Header()}
	s.mu.Lock()
	if r.Method != http.MethodGet && len(s.pending) > 0 {
		for _, p := range s.pending {
			if err := s.edit(p.repo, p.number, p.changes...); err != nil {
				s.lateErrs = append(s.lateErrs, err)
			}
		}
		s.pending = nil
	}
	status, v := s.route(req)
	s.mu.Unlock()
	if status == http.StatusNoContent {
		sw.WriteHeader(status)
		return
	}
	writeJSON(sw, status, v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
