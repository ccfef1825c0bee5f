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
	"os"
	"path/filepath"
	"slices"
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

type pendingEdit struct {
	repo    string
	number  int
	changes []string
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

// LogEntry is one line of the request log.
type LogEntry struct {
	Seq    int             `json:"seq"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// ReadLog reads a request log.
func ReadLog(path string) ([]LogEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []LogEntry
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var e LogEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, fmt.Errorf("fakegithub log %s: %w", path, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *Server) logRequest(r *http.Request, body []byte, status int) {
	if s.logFile == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	e := LogEntry{Seq: s.seq, Method: r.Method, Path: r.URL.RequestURI(), Status: status}
	if len(body) > 0 {
		if json.Valid(body) {
			e.Body = json.RawMessage(body)
		} else {
			e.Body, _ = json.Marshal(string(body))
		}
	}
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	_, _ = s.logFile.Write(append(line, '\n'))
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
		u, err := pathUnescape(p)
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

// Edit changes an issue as someone on github.com would, behind party's
// back, and stamps its updated_at. Each change is KEY=VALUE:
//
//	title=T  body=B  state=open|closed  labels=a,b (replace; empty: none)
//	+label=L  -label=L  milestone=N|TITLE|none  assignees=a,b  comment=TEXT
//	mycomment=TEXT (a comment by the token's user, as party elsewhere with
//	the same login writes; comment= is someone else's, "someone-on-github")
//	deleted=true (the issue is gone: deleted or transferred, 404 from then on)
func (s *Server) Edit(repoName string, number int, changes ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.edit(repoName, number, changes...)
}

// EditBeforeWrite is Edit done later: just before the next request that
// writes (any method but GET) is answered, as a person's change landing
// between party's read and its write. The issue must exist now; a failure
// then is returned by Close.
func (s *Server) EditBeforeWrite(repoName string, number int, changes ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, err := s.issueOf(repoName, number); err != nil {
		return err
	}
	s.pending = append(s.pending, pendingEdit{repo: repoName, number: number, changes: changes})
	return nil
}

// edit is Edit. s.mu is held.
func (s *Server) edit(repoName string, number int, changes ...string) error {
	r, is, err := s.issueOf(repoName, number)
	if err != nil {
		return err
	}
	if slices.Contains(changes, "deleted=true") {
		delete(r.issues, number)
		return nil
	}
	t := s.stamp()
	for _, c := range changes {
		k, v, ok := strings.Cut(c, "=")
		if !ok {
			return fmt.Errorf("fakegithub edit: %q is not KEY=VALUE", c)
		}
		switch k {
		case "title":
			is.Title = v
		case "body":
			is.Body = v
		case "state":
			if err := is.setState(v, "", t); err != nil {
				return fmt.Errorf("fakegithub edit: %w", err)
			}
		case "labels":
			is.Labels = nil
			for l := range strings.SplitSeq(v, ",") {
				if l = strings.TrimSpace(l); l != "" {
					is.Labels = append(is.Labels, s.ensureLabel(r, l).Name)
				}
			}
		case "+label":
			if !is.hasLabel(v) {
				is.Labels = append(is.Labels, s.ensureLabel(r, v).Name)
			}
		case "-label":
			is.Labels = slices.DeleteFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, v) })
		case "milestone":
			switch m := r.milestoneByTitle(v); {
			case v == "none" || v == "":
				is.Milestone = 0
			case m != nil:
				is.Milestone = m.Number
			default:
				n, ok := parseNumber(v)
				if !ok || r.milestones[n] == nil {
					return fmt.Errorf("fakegithub edit: no milestone %q in %s", v, repoName)
				}
				is.Milestone = n
			}
		case "assignees":
			is.Assignees = nil
			for a := range strings.SplitSeq(v, ",") {
				if a = strings.TrimSpace(a); a != "" {
					is.Assignees = append(is.Assignees, a)
				}
			}
		case "comment":
			r.comments = append(r.comments, &Comment{ID: s.newID(), NodeID: fmt.Sprintf("IC_fake%d", s.nextID),
				Issue: is.Number, Body: v, User: "someone-on-github", Created: t, Updated: t})
		case "mycomment":
			r.comments = append(r.comments, &Comment{ID: s.newID(), NodeID: fmt.Sprintf("IC_fake%d", s.nextID),
				Issue: is.Number, Body: v, User: s.opt.User, Created: t, Updated: t})
		default:
			return fmt.Errorf("fakegithub edit: unknown field %q (title, body, state, labels, +label, -label, milestone, assignees, comment, mycomment)", k)
		}
	}
	is.Updated = t
	return nil
}

// issueOf finds an issue. s.mu is held.
func (s *Server) issueOf(repoName string, number int) (*repo, *Issue, error) {
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil, nil, fmt.Errorf("fakegithub: no repository %s", repoName)
	}
	is := r.issues[number]
	if is == nil {
		return nil, nil, fmt.Errorf("fakegithub: no issue %s#%d", repoName, number)
	}
	return r, is, nil
}

// Issue returns a copy of an issue.
func (s *Server) Issue(repoName string, number int) (Issue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, is, err := s.issueOf(repoName, number)
	if err != nil {
		return Issue{}, err
	}
	return is.clone(), nil
}

// Issues returns copies of a repository's issues, by number.
func (s *Server) Issues(repoName string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil
	}
	var out []Issue
	for _, is := range r.sortedIssues() {
		out = append(out, is.clone())
	}
	return out
}

// Comments returns an issue's comments, oldest first.
func (s *Server) Comments(repoName string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil
	}
	var out []Comment
	for _, c := range r.comments {
		if c.Issue == number {
			out = append(out, *c)
		}
	}
	return out
}

// Labels returns a repository's labels, in creation order.
func (s *Server) Labels(repoName string) []Label {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil
	}
	var out []Label
	for _, l := range r.labels {
		out = append(out, *l)
	}
	return out
}

// Milestones returns a repository's milestones, by number.
func (s *Server) Milestones(repoName string) []Milestone {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, _ := strings.Cut(repoName, "/")
	r := s.repo(owner, name)
	if r == nil {
		return nil
	}
	var out []Milestone
	for _, m := range r.sortedMilestones() {
		out = append(out, *m)
	}
	return out
}

// Describe writes a repository's contents as stable text, for scenario
// oracles: labels with their colors, milestones, then each issue with its
// state, labels (sorted), milestone, assignees and comments.
func (s *Server) Describe(repoName string) string {
	var b strings.Builder
	for _, l := range s.Labels(repoName) {
		fmt.Fprintf(&b, "label %s %s\n", l.Name, l.Color)
	}
	miles := map[int]string{}
	for _, m := range s.Milestones(repoName) {
		miles[m.Number] = m.Title
		fmt.Fprintf(&b, "milestone %d %s %q\n", m.Number, m.State, m.Title)
	}
	for _, is := range s.Issues(repoName) {
		b.WriteString(DescribeIssue(is, miles, s.Comments(repoName, is.Number)))
	}
	return b.String()
}

// DescribeIssue writes one issue as Describe does.
func DescribeIssue(is Issue, milestones map[int]string, comments []Comment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "issue #%d %s %q\n", is.Number, is.State, is.Title)
	labels := slices.Clone(is.Labels)
	slices.Sort(labels)
	fmt.Fprintf(&b, "  labels: %s\n", strings.Join(labels, " "))
	if is.Milestone != 0 {
		fmt.Fprintf(&b, "  milestone: %s\n", milestones[is.Milestone])
	}
	if len(is.Assignees) > 0 {
		fmt.Fprintf(&b, "  assignees: %s\n", strings.Join(is.Assignees, " "))
	}
	if is.Body != "" {
		fmt.Fprintf(&b, "  body: %q\n", is.Body)
	}
	for _, c := range comments {
		fmt.Fprintf(&b, "  comment by %s: %s\n", c.User, c.Body)
	}
	return b.String()
}
