package demo

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/daemon"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/state"
)

// implementerScript is the mock claude of the review loop: it writes the
// code, records critic evidence and asks for a review; it fixes the
// blocking finding of review 1 and approves review 2.
//
//go:embed implementer.script
var implementerScript string

// reviewerScript is the mock codex: one blocking finding on review 1,
// none on review 2.
//
//go:embed reviewer.script
var reviewerScript string

// review runs the review loop between a claude and a codex mock in a
// session of its own, in a new git repository, until PR_READY. Without
// git it is skipped (nil status).
func (d *Demo) review(ctx context.Context) (*review.Status, error) {
	fmt.Fprintf(d.Log, "\n== the review loop: party start --review, claude implements, codex reviews\n")
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintf(d.Log, "   skipped: git is not installed\n")
		return nil, nil
	}
	repo := filepath.Join(d.Setup.Dir, "repo")
	if err := d.gitInit(ctx, repo); err != nil {
		return nil, err
	}
	scripts := map[string]string{"implementer.script": implementerScript, "reviewer.script": reviewerScript}
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(d.Setup.Dir, name), []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	stateDir, err := d.Party.Start(ctx, io.Discard, Session{Name: ReviewSession, Cwd: repo, Review: true,
		Panes: []string{"claude=claude --mock-script " + filepath.Join(d.Setup.Dir, "implementer.script"),
			"codex=codex --mock-script " + filepath.Join(d.Setup.Dir, "reviewer.script")}})
	if err != nil {
		return nil, err
	}
	dir := review.Dir(stateDir)
	// Stopped before the server goes, so that it writes nothing into the
	// demo's directory while that is removed.
	defer func() { _ = daemon.Stop(context.WithoutCancel(ctx), d.Clock, dir) }()
	panes, err := WaitAgents(ctx, d.Mux, d.Clock, ReviewSession)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(d.Log, "   started with the coordinator in a hidden window; party send claude 'implement the LRU cache'\n")
	if _, err := d.Party.Send(ctx, ReviewSession, "claude", "implement the LRU cache"); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	final, waitErr := review.Await(wctx, d.Clock, dir, review.PRReady, 50*time.Millisecond)
	if waitErr != nil {
		waitErr = fmt.Errorf("the review loop did not reach PR_READY (state %s): %w", final.State, waitErr)
	}
	if err := d.transitions(dir); err != nil {
		return nil, err
	}
	if waitErr != nil {
		for _, p := range panes {
			if screen, err := d.Mux.Capture(ctx, p.ID, 0); err == nil {
				fmt.Fprintf(d.Log, "\n   screen of %s (%s)\n%s\n", p.Role, p.ID, LastLines(screen, 12))
			}
		}
		return nil, waitErr
	}
	fmt.Fprintf(d.Log, "   party status:\n")
	var out strings.Builder
	if err := review.Watch(ctx, d.Clock, dir, 0, func(s review.Status, p daemon.Proc, now time.Time) { review.WriteStatus(&out, s, p, now) }); err != nil {
		return nil, err
	}
	fmt.Fprintf(d.Log, "   | %s\n", strings.ReplaceAll(strings.TrimRight(out.String(), "\n"), "\n", "\n   | "))
	return &final, nil
}

// gitInit makes a git repository in dir with one empty commit on main.
func (d *Demo) gitInit(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(append([]string{}, d.Environ...), "GIT_AUTHOR_NAME=party demo", "GIT_AUTHOR_EMAIL=demo@party.invalid",
			"GIT_COMMITTER_NAME=party demo", "GIT_COMMITTER_EMAIL=demo@party.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// transitions shows what the coordinator did: the transitions it logged
// that changed the state or failed.
func (d *Demo) transitions(dir string) error {
	lines, _, err := state.ReadFrom(filepath.Join(dir, review.TransitionsFile), 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.Log, "   what the coordinator did (%s):\n", review.TransitionsFile)
	for _, line := range lines {
		var t review.Transition
		if json.Unmarshal(line, &t) == nil && (t.From != t.To || t.Error != "") {
			fmt.Fprintf(d.Log, "   %-16s %s -> %s %s\n", t.Event, t.From, t.To, t.Error)
		}
	}
	return nil
}
