package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// maxPayload bounds what a hook reads from stdin.
const maxPayload = 16 << 20

// gateWait bounds how long a hook waits for the pane's key gate: past it
// the hook goes on without (an agent is never held up long by party).
const gateWait = 5 * time.Second

// Sessions is what Record needs of the tmux client (*tmux.Client) to find
// the session of a pane.
type Sessions interface {
	PaneSession(ctx context.Context, id string) (string, error)
	SessionInfo(ctx context.Context, session string) (tmux.SessionInfo, error)
}

// Deps are what Record works with.
type Deps struct {
	Getenv func(string) string // PARTY_STATE_DIR, TMUX_PANE, PARTY_ROLE, the wake dir
	Clock  clock.Clock
	Tmux   Sessions
	In     io.Reader // the hook JSON of claude and gemini
	Out    io.Writer // Claude's PreToolUse decision
	Review Review
}

// Review is what a session's review coordinator makes of hook events
// (review.Hooks): the gate's denial of a Bash command ("" allows it), and
// the signal an event sends it.
type Review interface {
	Gate(stateDir, command string) string
	Signal(stateDir string, ev Event) error
}

// Record handles one hook of agent (claude, gemini or codex-notify, whose
// JSON is payload): it appends the event to its session's event log,
// answers Claude's PreToolUse for Bash with the review gate's denial on
// Out (first: Claude waits for it), signals the review coordinator, and
// wakes whoever waits.
func Record(ctx context.Context, d Deps, agent string, payload []byte) error {
	var (
		ev  Event
		err error
	)
	switch agent {
	case "claude", "gemini":
		b, rerr := io.ReadAll(io.LimitReader(d.In, maxPayload))
		if rerr != nil {
			return rerr
		}
		if agent == "claude" {
			ev, err = FromClaude(b)
			break
		}
		ev, err = FromGemini(b)
		if err == nil && ev.Kind == TurnComplete {
			// prompt_response is mangled when the answer came in chunks;
			// the transcript has the raw text.
			if a, ok := GeminiTranscriptAnswer(ev.Transcript); ok {
				ev.Answer = a
			}
		}
	case "codex-notify":
		ev, err = FromCodex(payload)
	default:
		return fmt.Errorf("unknown agent %q (want claude, gemini or codex-notify)", agent)
	}
	if err != nil {
		return err
	}
	ev.Pane, ev.Role = d.Getenv("TMUX_PANE"), d.Getenv("PARTY_ROLE")
	ev.Time = d.Clock.Now().UTC()
	dir := d.Getenv("PARTY_STATE_DIR")
	if dir == "" && agent == "gemini" {
		// party's Gemini hooks live in a folder's settings, so a gemini
		// run outside party runs them too: nothing to record.
		return nil
	}
	if dir == "" {
		if dir, err = stateDirOf(ctx, d.Tmux, ev.Pane); err != nil {
			return err
		}
	}
	if agent == "claude" && ev.Pane != "" {
		// Held while the hook runs, stamped as it ends: a sender's look
		// and its key never straddle a hook (state.HoldGate). A sender
		// holds it only until Claude read its key: never long.
		if _, release, err := state.HoldGate(ctx, d.Clock, state.GatePath(dir, ev.Pane), gateWait); err == nil {
			defer release(true)
		}
	}
	if ev.Kind == ToolUse && ev.Tool == "Bash" {
		if reason := d.Review.Gate(dir, ev.Command); reason != "" {
			enc := json.NewEncoder(d.Out)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			_ = enc.Encode(map[string]any{"hookSpecificOutput": map[string]string{
				"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
		}
	}
	if err := state.AppendEvent(filepath.Join(dir, state.EventLog), ev); err != nil {
		// Whoever waits for this event would wait in vain: tell them,
		// with what the event says but its text, and leave a note for
		// those that start waiting later.
		short := Event{Time: ev.Time, Pane: ev.Pane, Agent: ev.Agent, Kind: ev.Kind, Raw: ev.Raw, Type: ev.Type,
			Session: ev.Session, Transcript: ev.Transcript}
		b, _ := json.Marshal(short)
		r := state.Report{Pane: ev.Pane, Error: err.Error(), Event: b}
		// Noted first: a waiter the report wakes may read either.
		NoteUnheard(d.Getenv, dir, ev.Time, r)
		state.ReportSession(d.Getenv, dir, r)
		return err
	}
	ClearUnheard(d.Getenv, dir, ev.Pane)
	if err := d.Review.Signal(dir, ev); err != nil {
		return err
	}
	state.WakeSession(d.Getenv, dir)
	return nil
}

// stateDirOf is the state dir of the party session of pane.
func stateDirOf(ctx context.Context, tc Sessions, pane string) (string, error) {
	if pane == "" {
		return "", fmt.Errorf("neither PARTY_STATE_DIR nor TMUX_PANE is set")
	}
	name, err := tc.PaneSession(ctx, pane)
	if err != nil {
		return "", err
	}
	info, err := tc.SessionInfo(ctx, name)
	if err != nil {
		return "", err
	}
	if info.StateDir == "" {
		return "", fmt.Errorf("session %s is not a party session", name)
	}
	return info.StateDir, nil
}
