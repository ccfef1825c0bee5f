package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/task"
)

// Runner runs the gh CLI: argv only, text on stdin, stdout back. The
// real one execs gh; tests drive the real gh against fakegithub.
type Runner interface {
	Run(ctx context.Context, args []string, stdin []byte) ([]byte, error)
}

// execRunner runs the gh binary at bin with env (nil: this process's); a run
// longer than limit (default callLimit) is GitHub not answering.
type execRunner struct {
	bin   string
	env   []string
	limit time.Duration
}

// LookGh finds the gh binary (gh: its name, "" for "gh"; a path must be
// absolute) on env's PATH (this process's when env has none), as exec
// would run it, but only in absolute directories: an empty or relative
// PATH entry (the current directory, perhaps an untrusted repository) is
// skipped, as exec.LookPath refuses with exec.ErrDot. It is
// exec.ErrNotFound when there is no such gh.
func LookGh(gh string, env []string) (string, error) {
	if gh == "" {
		gh = "gh"
	}
	if strings.Contains(gh, "/") {
		if !filepath.IsAbs(gh) || !executable(gh) {
			return "", fmt.Errorf("%s: %w", gh, exec.ErrNotFound)
		}
		return gh, nil
	}
	path, ok := "", false
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "PATH="); found {
			path, ok = v, true
		}
	}
	if !ok {
		path = os.Getenv("PATH")
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, gh); executable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", gh, exec.ErrNotFound)
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// callLimit bounds one gh run: a GitHub that takes connections and
// never answers is unavailable, not waited for.
const callLimit = time.Minute

func (g execRunner) Run(ctx context.Context, args []string, stdin []byte) ([]byte, error) {
	limit := g.limit
	if limit <= 0 {
		limit = callLimit
	}
	callCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(callCtx, g.bin, args...)
	cmd.Env = g.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil {
		return out.Bytes(), nil
	}
	if ctx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		return nil, &Error{Args: args, Stderr: strings.TrimSpace(errb.String()), ExitCode: -1,
			kind: task.ErrUnavailable, why: fmt.Sprintf("GitHub did not answer within %s", limit)}
	}
	return out.Bytes(), newError(args, out.Bytes(), errb.String(), err, ctx.Err())
}

// Error is a gh command that failed: what it was asked, what it said,
// and what party makes of it (Unwrap: ErrUnavailable when GitHub cannot
// be used — gh missing, offline, credentials refused, GitHub failing —,
// ErrNotFound for a 404, ErrInvalid for a 422, nil otherwise).
type Error struct {
	Args     []string
	Stderr   string
	ExitCode int
	// HTTP is the status GitHub answered, 0 when gh reached no server.
	HTTP int
	// Message is GitHub's message from the answer's JSON body, if any.
	Message string

	kind error
	why  string
}

func (e *Error) Error() string {
	cmd := "gh " + strings.Join(e.Args, " ")
	detail := e.Message
	if detail == "" {
		detail = firstLine(e.Stderr)
	}
	switch {
	case e.why != "" && detail != "":
		return fmt.Sprintf("%s: %s: %s", cmd, e.why, detail)
	case e.why != "":
		return fmt.Sprintf("%s: %s", cmd, e.why)
	case e.HTTP != 0:
		return fmt.Sprintf("%s: HTTP %d: %s", cmd, e.HTTP, detail)
	}
	return fmt.Sprintf("%s: exit %d: %s", cmd, e.ExitCode, detail)
}

func (e *Error) Unwrap() error { return e.kind }

// statusRE finds the status gh api reports on stderr: "gh: Not Found
// (HTTP 404)".
var statusRE = regexp.MustCompile(`\(HTTP (\d{3})\)`)

// transportRE is Go's error for a request that reached no server, as gh
// prints it: `Get "https://…": dial tcp …: connection refused`.
var transportRE = regexp.MustCompile(`(?m)^(Get|Post|Patch|Put|Delete|Head) "[^"]*": `)

// newError classifies a failed gh run.
func newError(args []string, stdout []byte, stderr string, runErr, ctxErr error) error {
	e := &Error{Args: args, Stderr: strings.TrimSpace(stderr), ExitCode: -1}
	var ee *exec.ExitError
	switch {
	case errors.As(runErr, &ee):
		e.ExitCode = ee.ExitCode()
	case errors.Is(runErr, exec.ErrNotFound):
		e.kind, e.why = task.ErrUnavailable, "gh (GitHub CLI) is not installed or not on PATH"
		return e
	default:
		return fmt.Errorf("gh %s: %w", strings.Join(args, " "), runErr)
	}
	if ctxErr != nil {
		return fmt.Errorf("gh %s: %w", strings.Join(args, " "), ctxErr)
	}
	classify(e, stdout)
	return e
}

// classify reads what gh said on a failure with exit code e.ExitCode:
// GitHub's status and message, and what the failure means for party.
func classify(e *Error, stdout []byte) {
	var body struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(stdout, &body) == nil {
		e.Message = body.Message
	}
	if m := statusRE.FindStringSubmatch(e.Stderr); m != nil {
		e.HTTP, _ = strconv.Atoi(m[1])
	}
	switch {
	case e.HTTP == 401 || e.ExitCode == 4:
		e.kind, e.why = task.ErrUnavailable, "GitHub refused gh's credentials (run gh auth login, or set GH_TOKEN; GH_ENTERPRISE_TOKEN for GH_HOST)"
	case e.HTTP == 403:
		e.kind, e.why = task.ErrUnavailable, "GitHub refused the request (HTTP 403: no access to the repository, or rate limited)"
	case e.HTTP >= 500:
		e.kind, e.why = task.ErrUnavailable, fmt.Sprintf("GitHub is failing (HTTP %d)", e.HTTP)
	case e.HTTP == 404 || e.HTTP == 410:
		e.kind = task.ErrNotFound
	case e.HTTP == 422 || e.HTTP == 400:
		e.kind = task.ErrInvalid
	case e.HTTP == 0 && transportRE.MatchString(e.Stderr):
		e.kind, e.why = task.ErrUnavailable, "cannot reach GitHub (offline?)"
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
