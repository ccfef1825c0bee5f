package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/tmux"
)

// Panes is what PaneEffects needs from the multiplexer: the session's
// panes, and a respawn of a dead one. *tmux.Client has it.
type Panes interface {
	ListPanes(ctx context.Context, session string) ([]mux.Pane, error)
	RespawnPane(ctx context.Context, id string, spawn tmux.Spawn) error
}

// Launch is how party start started a pane, to respawn it the same way.
type Launch struct {
	Argv []string
	Env  []string
}

// DeliverFunc types line into the pane of role with the delivery
// protocol (core/deliver) and says which pane it was and what became of
// the line.
type DeliverFunc func(ctx context.Context, role, line string) (pane string, res deliver.Result, err error)

// PaneEffects are the coordinator's effects on a real session: git in the
// session's directory, delivery into panes, respawn of dead agents.
type PaneEffects struct {
	Session string
	Cwd     string            // the session's working directory, where git runs
	Launch  map[string]Launch // by role
	Panes   Panes
	Deliver DeliverFunc
	Logf    func(format string, args ...any)
}

func (e *PaneEffects) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", e.Cwd}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Diff is the work against merge-base HEAD base: committed and uncommitted
// changes of tracked files, and new untracked files as additions.
func (e *PaneEffects) Diff(ctx context.Context, base string) (Diff, error) {
	d := Diff{Base: base}
	if strings.HasPrefix(base, "-") {
		return d, fmt.Errorf("base %q is not a branch", base)
	}
	mb, err := e.git(ctx, "merge-base", "HEAD", base)
	if err != nil {
		return d, err
	}
	d.MergeBase = strings.TrimSpace(mb)
	patch, err := e.git(ctx, "diff", "--no-color", "--no-ext-diff", d.MergeBase, "--")
	if err != nil {
		return d, err
	}
	st, err := e.git(ctx, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return d, err
	}
	d.Uncommitted = strings.TrimSpace(st) != ""
	untracked, err := e.git(ctx, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return d, err
	}
	var b strings.Builder
	b.WriteString(patch)
	for _, name := range strings.Split(strings.TrimRight(untracked, "\x00"), "\x00") {
		if name == "" {
			continue
		}
		d.Untracked = append(d.Untracked, name)
		// git diff --no-index exits 1 when the files differ.
		cmd := exec.CommandContext(ctx, "git", "-C", e.Cwd, "diff", "--no-color", "--no-index", "--", "/dev/null", name)
		out, _ := cmd.Output()
		b.Write(out)
	}
	d.Patch = []byte(b.String())
	return d, nil
}

// Send types line into role's pane with the delivery protocol. A line
// that is in the pane but whose submission was not confirmed counts as
// sent: sending it again would paste it twice.
func (e *PaneEffects) Send(ctx context.Context, role, line string) error {
	pane, res, err := e.Deliver(ctx, role, line)
	if errors.Is(err, deliver.ErrUnconfirmed) {
		e.Logf("sent to %s (%s): %s [unconfirmed: not sent again]", role, pane, line)
		return nil
	}
	if err != nil {
		return err
	}
	e.Logf("sent to %s (%s): %s [%s]", role, pane, line, res.Outcome)
	return nil
}

// Health respawns every dead agent pane of the session with the command
// and environment party start gave it, and returns their roles.
func (e *PaneEffects) Health(ctx context.Context) ([]string, error) {
	panes, err := e.Panes.ListPanes(ctx, e.Session)
	if err != nil {
		return nil, err
	}
	var roles []string
	for _, p := range panes {
		if !p.Dead || p.Role == "" {
			continue
		}
		l, ok := e.Launch[p.Role]
		if !ok {
			continue
		}
		if err := e.Panes.RespawnPane(ctx, p.ID, tmux.Spawn{Cwd: e.Cwd, Env: l.Env, Argv: l.Argv}); err != nil {
			e.Logf("health: respawn %s (%s): %v", p.Role, p.ID, err)
			continue
		}
		status := p.DeadStatus
		if status == "" {
			status = "unknown"
		}
		e.Logf("health: %s (%s) was dead (status %s); respawned", p.Role, p.ID, status)
		roles = append(roles, p.Role)
	}
	return roles, nil
}
