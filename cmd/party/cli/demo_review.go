package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// demoImplementer is the mock claude of the demo's review loop: it writes
// the code, records critic evidence and asks for a review; it fixes the
// blocking finding of review 1 and approves review 2.
const demoImplementer = `on /implement the LRU cache/
  write cache.go package cache\n\n// Cache keeps the n most recently used values.\ntype Cache struct{ n int }\n
  run party evidence add critic && party evidence add minimizer && party review request --title 'LRU cache'
  say review requested
on /reviews/1/message\.md/
  run party review re-review 'fix: F1, Get moves the entry to the front'
  write cache.go package cache\n\n// Cache keeps the n most recently used values.\ntype Cache struct{ n int }\n\n// Get moves key to the front.\nfunc (c *Cache) Get(key string) {}\n
  run party evidence add critic && party evidence add minimizer && party review request
  say fixed F1, review requested
on /reviews/2/message\.md/
  run party review approve
  run party evidence add tests-passed && party evidence add checks-passed && party evidence add security-scanned && party evidence add pr-verified
  say approved: ready for a pull request
`

// demoReviewer is the mock codex: one blocking finding on review 1, none
// on review 2.
const demoReviewer = `on /review request 1\. Read: (\S+)prompt\.md/
  write $1findings.json {"findings":[{"id":"F1","file":"cache.go","line":4,"severity":"blocking","category":"correctness","description":"Get does not move the entry to the front","suggestion":"move it on every hit"}],"summary":"one blocking finding","stats":{"files_reviewed":1,"blocking":1,"non_blocking":0}}
  say 1 blocking finding
on /review request 2\. Read: (\S+)prompt\.md/
  write $1findings.json {"findings":[],"summary":"F1 is fixed","stats":{"files_reviewed":1,"blocking":0,"non_blocking":0}}
  say no findings
`

// demoReview runs the review loop between a claude and a codex mock in a
// session of its own, in a new git repository under tmp, until PR_READY.
func demoReview(ctx context.Context, f *Factory, tc *tmux.Client, tmp string, log io.Writer) (*review.Status, error) {
	fmt.Fprintf(log, "\n== the review loop: party start --review, claude implements, codex reviews\n")
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintf(log, "   skipped: git is not installed\n")
		return nil, nil
	}
	repo := filepath.Join(tmp, "repo")
	if err := os.MkdirAll(repo, 0o700); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(f.Environ(), "GIT_AUTHOR_NAME=party demo", "GIT_AUTHOR_EMAIL=demo@party.invalid",
			"GIT_COMMITTER_NAME=party demo", "GIT_COMMITTER_EMAIL=demo@party.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	scripts := map[string]string{"implementer.script": demoImplementer, "reviewer.script": demoReviewer}
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	rf := *f
	rf.Session = "review"
	rf.IO.Out = io.Discard // start and send: the loop's own lines say more
	err := startRun(ctx, &rf, &StartOptions{Session: "review", Cwd: repo, Size: "160x48", NoAttach: true, Review: true,
		Panes: []string{"claude=claude --mock-script " + filepath.Join(tmp, "implementer.script"),
			"codex=codex --mock-script " + filepath.Join(tmp, "reviewer.script")}})
	if err != nil {
		return nil, err
	}
	panes, err := waitAgents(ctx, f, tc, "review")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "   started with the coordinator in a hidden window; party send claude 'implement the LRU cache'\n")
	if err := sendRun(ctx, &rf, &SendOptions{Role: "claude", Text: "implement the LRU cache"}); err != nil {
		return nil, err
	}
	sc, err := openPartyScope(ctx, &rf, tc)
	if err != nil {
		return nil, err
	}
	dir := review.Dir(sc.Info.StateDir)
	// Stopped before the server goes, so that it writes nothing into tmp
	// while tmp is removed.
	defer func() { _ = stopCoordinator(context.WithoutCancel(ctx), f, dir) }()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	final, waitErr := review.Await(wctx, f.Clock, dir, review.PRReady, 50*time.Millisecond)
	if waitErr != nil {
		waitErr = fmt.Errorf("the review loop did not reach PR_READY (state %s): %w", final.State, waitErr)
	}
	lines, _, err := state.ReadFrom(filepath.Join(dir, review.TransitionsFile), 0)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "   what the coordinator did (%s):\n", review.TransitionsFile)
	for _, line := range lines {
		var t review.Transition
		if json.Unmarshal(line, &t) == nil && (t.From != t.To || t.Error != "") {
			fmt.Fprintf(log, "   %-16s %s -> %s %s\n", t.Event, t.From, t.To, t.Error)
		}
	}
	if waitErr != nil {
		for _, p := range panes {
			if screen, err := tc.Capture(ctx, p.ID, 0); err == nil {
				fmt.Fprintf(log, "\n   screen of %s (%s)\n%s\n", p.Role, p.ID, lastLines(screen, 12))
			}
		}
		return nil, waitErr
	}
	fmt.Fprintf(log, "   party status:\n")
	var out strings.Builder
	st := rf
	st.IO.Out = &out
	if err := statusRun(ctx, &st, &StatusOptions{}); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "   | %s\n", strings.ReplaceAll(strings.TrimRight(out.String(), "\n"), "\n", "\n   | "))
	return &final, nil
}
