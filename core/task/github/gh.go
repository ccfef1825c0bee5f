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

// Runner runs the gh CLI: argv only (never a shell), stdin as its input.
// A run that ended, whatever its exit code, is what gh printed on stdout
// and stderr and its exit code, with err nil; err is a run that did not
// end by itself: gh not found (exec.ErrNotFound), ctx done, or no answer
// within the call's limit (ErrNoAnswer). The store makes a failure an
// *Error. The real Runner execs gh; fakegithub.Gh answers as gh and the
// fake GitHub do, in process, for the -short tests.
type Runner interface {
	Run(ctx context.Context, args []string, stdin []byte) (stdout, stderr []byte, exit int, err error)
}

// ErrNoAnswer is a gh run that outlived its limit: GitHub took the
// connection and never answered. The Runner's error wraps it and says the
// limit.
var ErrNoAnswer = errors.New("GitHub did not answer")

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

func (g execRunner) Run(ctx context.Context, args []string, stdin []byte) ([]byte, []byte, int, error) {
	callCtx, cancel := context.WithTimeout(ctx, g.callLimit())
	defer cancel()
	cmd := exec.CommandContext(callCtx, g.bin, args...)
	cmd.Env = g.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return nil, errb.Bytes(), -1, ctx.Err()
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return nil, errb.Bytes(), -1, fmt.Errorf("%w within %s", ErrNoAnswer, g.callLimit())
	case err == nil:
		return out.Bytes(), errb.Bytes(), 0, nil
	case errors.As(err, &ee):
		return out.Bytes(), errb.Bytes(), ee.ExitCode(), nil
	}
	return nil, errb.Bytes(), -1, err
}

func (g execRunner) callLimit() time.Duration {
	if g.limit <= 0 {
		return callLimit
	}
	return g.limit
}

// run runs gh api args through r and makes a failed run an *Error (or,
// for the caller's own cancellation, ctx's error with the command).
func run(ctx context.Context, r Runner, args []string, stdin []byte) ([]byte, error) {
	stdout, stderr, exit, err := r.Run(ctx, args, stdin)
	if err == nil && exit == 0 {
		return stdout, nil
	}
	e := &Error{Args: args, Stderr: strings.TrimSpace(string(stderr)), ExitCode: exit}
	switch {
	case err == nil:
		classify(e, stdout)
		return stdout, e
	case errors.Is(err, ErrNoAnswer):
		e.kind, e.why = task.ErrUnavailable, err.Error()
		return nil, e
	case ctx.Err() != nil:
		return nil, fmt.Errorf("gh %s: %w", strings.Join(args, " "), ctx.Err())
	case errors.Is(err, exec.ErrNotFound):
		e.kind, e.why = task.ErrUnavailable, "gh (GitHub CLI) is not installed or not on PATH"
		return nil, e
	}
	return nil, fmt.Errorf("gh %s: %w", strings.Join(args, " "), err)
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
