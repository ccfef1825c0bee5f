package wait

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/mux"
	"github.com/partyhq/party/core/observe"
	"github.com/partyhq/party/core/state"
)

// Claude Code 2.1 writes these user entries into its transcript when a
// turn stops short (docs/agents-reference.md §4.1); no hook runs then.
const (
	claudeInterrupted        = "[Request interrupted by user]"
	claudeInterruptedForTool = "[Request interrupted by user for tool use]"
	// claudeRefusal starts the is_error tool_result of a refused
	// permission ("… The tool use was rejected …").
	claudeRefusal = "The user doesn't want to proceed with this tool use."
)

// ClaudeTranscript is a Source that reads Claude Code's session transcript
// (~/.claude/projects/<cwd with / as ->/<session>.jsonl) from where it
// stood when the prompt was sent. Only what follows the user entry of the
// prompt counts: "[Request interrupted by user]" ends the wait with
// ErrInterrupted, a refused permission ("[Request interrupted by user for
// tool use]" after a rejected tool_result) too, and an API error message
// (isApiErrorMessage, written before the StopFailure hook) with
// ErrTurnFailed.
//
// An Esc before the model's first token leaves no trace in the transcript:
// Claude takes the prompt off the screen and puts it back into the input
// box. When Screen is set, that is read too: an idle Claude holding the
// prompt in its box means the turn was interrupted. Claude runs its
// UserPromptSubmit hook before it empties the box, so after that hook
// (seen through See) a box still showing the prompt may be Claude not done
// taking it (a loaded machine: seconds), which looks the same as the
// prompt put back: it counts as put back once a look saw the box let go
// of it (empty, or Claude busy), or when it stayed held for
// claudeTakeGrace.
type ClaudeTranscript struct {
	Pane    string
	Prompt  string
	Profile agent.Profile
	// Screen captures the pane's visible screen; nil reads no screen.
	Screen func() (string, error)

	path    string // the transcript, once known
	offset  int64
	found   bool              // the prompt's user entry was read
	turn    string            // its promptId (the messages of a queued batch share one)
	ended   bool              // the turn ended (turn_duration) or another began
	tools   map[string]string // tool_use id -> "Bash(cmd)"
	refused string            // the tool whose permission was refused
	// submitted: the pane's UserPromptSubmit for the prompt was seen, so
	// the box may still show it until Claude empties it; letGo: a look
	// saw the box without it, or Claude busy, since; heldSince: when the
	// looks began to see it held without letting go.
	submitted, letGo bool
	heldSince        time.Time
	// Now is the clock of heldSince; nil is time.Now.
	Now func() time.Time

	// answers is set once the pane's hook events are lost (Deaf): the
	// end of the turn in the transcript (turn_duration) then gives the
	// answer, the text of its last assistant message.
	answers bool
	texts   []string
}

// Deaf has the source tell the turn's answer from the transcript: the
// Stop hook that would have told it could not be recorded.
func (c *ClaudeTranscript) Deaf() { c.answers = true }

// NewClaudeTranscript returns the transcript source of a prompt about to
// be sent to pane: the transcript is the one the pane's last hook event in
// the event log named (SessionStart at launch), read from its current
// size. Without one the source learns the path from the events the
// waiter reads (See), and then reads the file from its start.
func NewClaudeTranscript(events, pane, prompt string, profile agent.Profile, screen func() (string, error)) *ClaudeTranscript {
	c := &ClaudeTranscript{Pane: pane, Prompt: prompt, Profile: profile, Screen: screen, tools: map[string]string{}}
	lines, _, _ := state.ReadFrom(events, 0)
	for i := len(lines) - 1; i >= 0; i-- {
		var ev hook.Event
		if json.Unmarshal(lines[i], &ev) == nil && ev.Pane == pane && ev.Transcript != "" {
			c.path, c.offset = ev.Transcript, state.Size(ev.Transcript)
			break
		}
	}
	return c
}

// See learns the transcript's path from a hook event of the pane (every
// Claude hook payload carries transcript_path), when it was not known, or
// when the agent started a new session (/clear).
func (c *ClaudeTranscript) See(ev hook.Event) {
	if ev.Pane != c.Pane {
		return
	}
	if ev.Kind == hook.PromptSubmit && slices.ContainsFunc(ev.Prompts, func(p string) bool { return sameText(p, c.Prompt) }) {
		c.submitted = true
	}
	if ev.Transcript == "" || ev.Transcript == c.path {
		return
	}
	c.path, c.offset = ev.Transcript, 0
}

// claudeEntry is the part of a transcript line the source reads.
type claudeEntry struct {
	Type     string `json:"type"`
	Subtype  string `json:"subtype"`
	PromptID string `json:"promptId"`
	IsMeta   bool   `json:"isMeta"`
	Message  struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	APIError bool   `json:"isApiErrorMessage"`
	Error    string `json:"error"`
}

// claudeBlock is one block of a message's content.
type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// Check reads what Claude wrote since the last look.
func (c *ClaudeTranscript) Check() (Result, bool, error) {
	if c.path != "" {
		lines, next, err := state.ReadFrom(c.path, c.offset)
		if err != nil {
			return Result{}, false, err
		}
		c.offset = next
		for _, l := range lines {
			if err := c.see(l); err != nil {
				return Result{}, true, err
			}
		}
	}
	if c.answers && c.found && c.ended {
		return Result{Answer: strings.TrimSpace(strings.Join(c.texts, "\n")), Via: "transcript"}, true, nil
	}
	return Result{}, false, c.checkScreen()
}

// see reads one transcript line.
func (c *ClaudeTranscript) see(line []byte) error {
	var e claudeEntry
	if json.Unmarshal(line, &e) != nil || e.IsMeta {
		return nil
	}
	var text string
	var blocks []claudeBlock
	if json.Unmarshal(e.Message.Content, &text) != nil {
		_ = json.Unmarshal(e.Message.Content, &blocks)
	}
	if e.Type == "user" && text != "" {
		// A typed prompt (its content a string). The same prompt again
		// (the operator's, or an earlier one read from the file's start)
		// starts over: the last one is ours. Another prompt of the same
		// turn was queued with ours; one of another turn ends ours.
		switch {
		case sameText(text, c.Prompt):
			c.found, c.turn, c.ended, c.refused, c.texts = true, e.PromptID, false, "", nil
		case c.found && c.turn != "" && e.PromptID != c.turn:
			c.ended = true
		}
		return nil
	}
	if !c.found || c.ended {
		return nil
	}
	switch e.Type {
	case "system":
		if e.Subtype == "turn_duration" {
			c.ended = true // after the Stop hooks: the hook closed the turn
		}
	case "assistant":
		for _, b := range blocks {
			switch {
			case b.Type == "tool_use":
				c.tools[b.ID] = toolCall(b.Name, b.Input)
				c.texts = nil // the answer is the last message's text
			case b.Type == "text" && !e.APIError:
				c.texts = append(c.texts, b.Text)
			case e.APIError && b.Type == "text":
				kind := e.Error
				if kind == "" {
					kind = "error"
				}
				return fmt.Errorf("%s: %s: %w", kind, b.Text, ErrTurnFailed)
			}
		}
	case "user":
		for _, b := range blocks {
			switch {
			case b.Type == "tool_result" && b.IsError && strings.HasPrefix(contentText(b.Content), claudeRefusal):
				c.refused = c.tools[b.ToolUseID]
				if c.refused == "" {
					c.refused = "a tool"
				}
			case b.Type == "text" && b.Text == claudeInterruptedForTool && c.refused != "":
				return fmt.Errorf("permission refused: the operator refused %s and Claude stopped the turn: %w", c.refused, ErrInterrupted)
			case b.Type == "text" && (b.Text == claudeInterrupted || b.Text == claudeInterruptedForTool):
				return fmt.Errorf("the turn was interrupted (Esc): %w", ErrInterrupted)
			}
		}
	}
	return nil
}

// claudeTakeGrace is how long a box still holding the prompt after its
// UserPromptSubmit hook is taken for Claude not done taking it (it runs
// its hooks first; seconds on a loaded machine) before it counts as the
// prompt put back by an Esc the wait did not see coming.
const claudeTakeGrace = 5 * time.Second

// checkScreen reports an Esc before the first token: the prompt is back in
// the input box of an idle Claude. Without its UserPromptSubmit, delivery
// confirmed the prompt by the box letting go of it (or Claude turning
// busy), so the prompt in it again is Claude putting it back, even when
// the Esc came before Claude wrote the prompt's entry or ran its hook (a
// loaded machine). After the hook, which Claude runs before it empties the
// box, the wait must have seen the box let go itself, or the prompt held
// there for claudeTakeGrace.
func (c *ClaudeTranscript) checkScreen() error {
	if c.Screen == nil || c.ended {
		return nil
	}
	screen, err := c.Screen()
	if err != nil {
		return nil // the waiter reads the pane and reports it gone
	}
	st := observe.Read(c.Profile, mux.Pane{ID: c.Pane}, screen)
	held := st.HasInput && c.Profile.HoldsAll(st.Input, c.Prompt) && !st.Busy && st.Dialog == "" && !st.Menu
	if !held {
		c.letGo, c.heldSince = true, time.Time{}
		return nil
	}
	if c.submitted && !c.letGo {
		// The hook ran: Claude may not have emptied the box yet.
		now := time.Now
		if c.Now != nil {
			now = c.Now
		}
		if c.heldSince.IsZero() {
			c.heldSince = now()
		}
		if now().Sub(c.heldSince) < claudeTakeGrace {
			return nil
		}
	}
	return fmt.Errorf("the turn was interrupted (Esc) before Claude answered; the prompt is back in its input box: %w", ErrInterrupted)
}

// toolCall names a tool call as Claude shows it: Bash(cmd), Write(path).
func toolCall(name string, input json.RawMessage) string {
	var in struct {
		Command string `json:"command"`
		File    string `json:"file_path"`
	}
	_ = json.Unmarshal(input, &in)
	switch {
	case in.Command != "":
		return name + "(" + in.Command + ")"
	case in.File != "":
		return name + "(" + in.File + ")"
	}
	return name
}

// contentText is a tool_result's content: a string or text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, x := range blocks {
		b.WriteString(x.Text)
	}
	return b.String()
}

// sameText compares a prompt as Claude recorded it with the one sent,
// ignoring white space (Claude makes tabs spaces and trims): the same, or
// the one sent followed by keys typed before its Enter (samePrompt).
func sameText(got, sent string) bool {
	return samePrompt(agent.Squeeze(got), agent.Squeeze(sent))
}

// claudeRetry matches Claude's line while it retries an API error:
// "✻ API error · Retrying in 13s · attempt 7/10".
var claudeRetry = regexp.MustCompile(`API error · Retrying in (\d+s) · attempt (\d+/\d+)`)

// Retrying describes the retry of an API error that screen shows
// ("attempt 7/10, next in 13s"), or "". Only the bottom of the screen
// counts, where the busy line is: above it is history.
func Retrying(screen string) string {
	lines := strings.Split(strings.TrimRightFunc(screen, unicode.IsSpace), "\n")
	bottom := strings.Join(lines[max(0, len(lines)-12):], "\n")
	m := claudeRetry.FindAllStringSubmatch(bottom, -1)
	if len(m) == 0 {
		return ""
	}
	last := m[len(m)-1]
	return "attempt " + last[2] + ", next in " + last[1]
}
