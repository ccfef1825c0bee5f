package cli

import (
	"context"
	"path/filepath"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/wait"
)

// codexRollout makes the rollout transcript the witness of a hook-wired
// Codex pane's turn (wait.CodexRollout): notify then only wakes the wait.
// Call it once turn.Prompt is final and before the prompt is sent. The
// file is found among those the pane's processes hold open; where /proc is
// missing, among the recent ones under $CODEX_HOME (default ~/.codex) as
// party sees it.
func (t *talker) codexRollout(ctx context.Context, p mux.Pane, kind agent.Kind, turn *wait.Turn) {
	if !turn.Hooks || kind != agent.Codex {
		return
	}
	home := t.f.Getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(t.f.Getenv("HOME"), ".codex")
	}
	src := wait.NewCodexRollout(turn.Prompt, wait.CodexRolloutFiles(p.PID, home, t.f.Clock.Now), t.f.Clock.Now)
	src.Dialog = func() bool {
		screen, err := t.tc.Capture(ctx, p.ID, 0)
		_, open := agent.Dialog(screen)
		return err == nil && open
	}
	turn.Sources, turn.SourcesOnly = append(turn.Sources, src), true
}
