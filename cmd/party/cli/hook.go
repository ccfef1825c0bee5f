package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/session"
	"github.com/partyhq/party/core/state"
)

// HookOptions are the inputs of party hook.
type HookOptions struct {
	Agent   string // claude | gemini | codex-notify
	Payload []byte // codex: the last argument
}

// maxPayload bounds what a hook reads from stdin.
const maxPayload = 16 << 20

func newHookCmd(f *Factory, runF func(context.Context, *HookOptions) error) *cobra.Command {
	opts := &HookOptions{}
	return &cobra.Command{
		Use:   "hook claude | hook gemini | hook codex-notify JSON",
		Short: "Record an agent's hook event (run by the agents, not by you)",
		Long: `Record one completion hook of an agent in its session's event log and wake
whoever waits for it. Claude Code runs "party hook claude" and Gemini CLI
"party hook gemini" with the hook JSON on stdin; Codex runs "party hook
codex-notify JSON". It always exits 0 at once, so it can never block or fail
the agent; problems go to stderr. For Gemini it prints {} on stdout (Gemini
reads a hook's stdout, or else its stderr, as the hook's decision) and
exits 1 only when the payload is not Gemini's hook JSON.`,
		Hidden:             true,
		Args:               argsBetween(1, 2),
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Agent = args[0]
			if len(args) == 2 {
				opts.Payload = []byte(args[1])
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			if opts.Agent == "gemini" {
				return geminiHookRun(c.Context(), f, opts)
			}
			if err := hookRun(c.Context(), f, opts); err != nil {
				fmt.Fprintf(f.IO.ErrOut, "party hook: %v\n", err)
			}
			return nil
		},
	}
}

func hookRun(ctx context.Context, f *Factory, opts *HookOptions) error {
	var (
		ev  hook.Event
		err error
	)
	switch opts.Agent {
	case "claude":
		payload, rerr := io.ReadAll(io.LimitReader(f.IO.In, maxPayload))
		if rerr != nil {
			return rerr
		}
		ev, err = hook.FromClaude(payload)
	case "codex-notify":
		ev, err = hook.FromCodex(opts.Payload)
	case "gemini":
		payload, rerr := io.ReadAll(io.LimitReader(f.IO.In, maxPayload))
		if rerr != nil {
			return rerr
		}
		ev, err = hook.FromGemini(payload)
		if err == nil && ev.Kind == hook.TurnComplete {
			// prompt_response is mangled when the answer came in chunks;
			// the transcript has the raw text.
			if a, ok := hook.GeminiTranscriptAnswer(ev.Transcript); ok {
				ev.Answer = a
			}
		}
	default:
		return fmt.Errorf("unknown agent %q (want claude, gemini or codex-notify)", opts.Agent)
	}
	if err != nil {
		return err
	}
	ev.Pane = f.Getenv("TMUX_PANE")
	ev.Time = f.Clock.Now().UTC()
	dir := f.Getenv("PARTY_STATE_DIR")
	if dir == "" && opts.Agent == "gemini" {
		// party's Gemini hooks live in a folder's settings, so a gemini
		// run outside party runs them too: nothing to record.
		return nil
	}
	if dir == "" {
		if ev.Pane == "" {
			return fmt.Errorf("neither PARTY_STATE_DIR nor TMUX_PANE is set")
		}
		tc := f.Tmux()
		name, err := tc.PaneSession(ctx, ev.Pane)
		if err != nil {
			return err
		}
		info, err := tc.SessionInfo(ctx, name)
		if err != nil {
			return err
		}
		if dir = info.StateDir; dir == "" {
			return fmt.Errorf("session %s is not a party session", name)
		}
	}
	// The gate answers first: Claude waits for it.
	if ev.Kind == hook.ToolUse && ev.Tool == "Bash" {
		if s, err := review.Current(review.Dir(dir)); err == nil {
			if reason := review.Gate(s, ev.Command); reason != "" {
				writeJSON(f.IO.Out, map[string]any{"hookSpecificOutput": map[string]string{
					"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
			}
		}
	}
	if err := state.AppendEvent(filepath.Join(dir, state.EventLog), ev); err != nil {
		return err
	}
	if err := reviewSignal(dir, ev); err != nil {
		return err
	}
	state.WakeSession(f.Getenv, dir)
	return nil
}

// geminiHookRun records a Gemini hook. Gemini parses a hook's stdout (or,
// when it is empty, its stderr) as the hook's decision, and an exit status
// of 2 as a denial that re-prompts the model: so stdout is always {} (no
// decision), the status is 0, or 1 (a warning in Gemini, never a denial)
// when the payload is not Gemini's hook JSON.
func geminiHookRun(ctx context.Context, f *Factory, opts *HookOptions) error {
	err := hookRun(ctx, f, opts)
	fmt.Fprintln(f.IO.Out, "{}")
	if err == nil {
		return nil
	}
	fmt.Fprintf(f.IO.ErrOut, "party hook: %v\n", err)
	if errors.Is(err, hook.ErrPayload) {
		return &reported{error: err, text: true, json: true}
	}
	return nil
}

// reviewSignal tells a session's review coordinator, if it has one, what
// a hook event means for it: a code edit, or Claude's session id.
func reviewSignal(stateDir string, ev hook.Event) error {
	dir := review.Dir(stateDir)
	if _, err := os.Stat(filepath.Join(dir, review.StateFile)); err != nil {
		return nil
	}
	var sig review.Event
	switch {
	case ev.Kind == hook.ToolUsed && editTools[ev.Tool]:
		rec, err := session.ReadRecord(stateDir)
		if err != nil || !review.CodeEdit(ev.File, rec.Cwd) {
			return err
		}
		sig = review.Event{Kind: review.EvEdit, Reason: ev.File}
	case ev.Kind == hook.SessionStart && ev.Session != "":
		sig = review.Event{Kind: review.EvSession, Text: ev.Session}
	default:
		return nil
	}
	sig.At = ev.Time
	_, err := review.WriteSignal(dir, sig)
	return err
}

// editTools are Claude's tools that change files.
var editTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}
