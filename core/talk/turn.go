package talk

import (
	"context"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/wait"
)

// Spec is the durable part of a turn: what a wait needs to find the turn
// again, in another process or after a restart (the supervisor keeps it
// with its trigger).
type Spec struct {
	// Offset is the size of the event log before the prompt was sent.
	Offset int64 `json:"offset"`
	// Hooks says the agent reports its turns as events; otherwise Nonce is
	// the marker it was asked to print.
	Hooks bool   `json:"hooks"`
	Nonce string `json:"nonce,omitempty"`
	// Prompt is the text as delivered (sanitized).
	Prompt string `json:"prompt"`
	// Since is when the spec was made (a hook failure noted before it is
	// an earlier turn's); Rollouts the sizes of the Codex rollout files
	// then: the rollout is read from there.
	Since    time.Time        `json:"since,omitzero"`
	Rollouts map[string]int64 `json:"rollouts,omitempty"`
}

// NewSpec prepares text for pane p: the marker instruction where the agent
// reports no turns (or marker is asked for), a file and a pointer for a
// text too long to paste. It returns the text to deliver and the spec of
// its turn, which starts at the event log's present size.
func (d Deps) NewSpec(p mux.Pane, text string, marker bool) (string, Spec, error) {
	profile := Profile(d.Config, p)
	ac := d.Config.AgentFor(p.Role, string(profile.Kind))
	spec := Spec{Hooks: p.Hooks != "" && !marker && !ac.Marker,
		Offset: state.Size(filepath.Join(d.StateDir, state.EventLog)), Since: d.Clock.Now()}
	// A text too long to paste goes to a file: the agent gets, and the
	// wait follows, the pointer. The marker instruction goes after the
	// pointer, not into the file: the agent learns it without reading the
	// file to its last line.
	text, err := deliver.Spill(d.StateDir, text)
	if err != nil {
		return "", Spec{}, err
	}
	if !spec.Hooks {
		spec.Nonce = wait.NewNonce()
		text += wait.Instruction(spec.Nonce)
	}
	spec.Prompt = deliver.Sanitize(text)
	if spec.Hooks && profile.Kind == agent.Codex {
		spec.Rollouts = wait.CodexMarks(d.rolloutFiles(p))
	}
	return text, spec, nil
}

// Turn is the turn of spec in pane p, with the witnesses the agent offers
// besides its events: Claude's transcript, Gemini's screen (captured
// through screens), Codex's rollout.
func (d Deps) Turn(ctx context.Context, screens mux.Multiplexer, p mux.Pane, spec Spec) wait.Turn {
	events := filepath.Join(d.StateDir, state.EventLog)
	turn := wait.Turn{Pane: p.ID, Hooks: spec.Hooks, Events: events, Offset: spec.Offset, Nonce: spec.Nonce,
		Prompt: spec.Prompt, History: d.Config.CaptureLines, Began: spec.Since}
	profile := Profile(d.Config, p)
	capture := func() (string, error) { return screens.Capture(ctx, p.ID, 0) }
	switch {
	case turn.Hooks && profile.Kind == agent.Codex:
		d.codexRollout(ctx, p, spec, &turn)
	case turn.Hooks && profile.Kind == agent.Claude:
		// No hook on an Esc or a refused permission: the transcript (and
		// the prompt put back into the box) says so.
		src := wait.NewClaudeTranscript(events, p.ID, turn.Prompt, profile, capture)
		src.Now = d.Clock.Now
		turn.Sources = append(turn.Sources, src)
	case turn.Hooks && profile.Kind == agent.Gemini:
		// No AfterAgent on an Esc: only the screen says it. Nor any, to
		// us, when the hook cannot record it: the screen says the answer.
		g := wait.NewGeminiScreen(turn.Prompt, capture)
		g.Profile = profile
		g.Rows = func() (mux.Rows, error) { return screens.Rows(ctx, p.ID, d.Config.CaptureLines) }
		turn.Sources = append(turn.Sources, g)
	}
	return turn
}

// codexRollout makes the rollout transcript the witness of a hook-wired
// Codex pane's turn (wait.CodexRollout), read from where the files stood
// when spec was made: notify then only wakes the wait.
func (d Deps) codexRollout(ctx context.Context, p mux.Pane, spec Spec, turn *wait.Turn) {
	since := spec.Since
	if since.IsZero() {
		since = d.Clock.Now()
	}
	src := wait.CodexRolloutFrom(turn.Prompt, d.rolloutFiles(p), d.Clock.Now, since, spec.Rollouts)
	src.Dialog = func() bool {
		screen, err := d.Mux.Capture(ctx, p.ID, 0)
		_, open := agent.Dialog(screen)
		return err == nil && open
	}
	turn.Sources, turn.SourcesOnly = append(turn.Sources, src), true
}

// rolloutFiles lists the rollout files of pane p: those its processes
// hold open; where /proc is missing, the recent ones under $CODEX_HOME
// (default ~/.codex) as party sees it.
func (d Deps) rolloutFiles(p mux.Pane) func() []string {
	return wait.CodexRolloutFiles(p.PID, hook.CodexHome(d.Getenv), d.Clock.Now)
}
