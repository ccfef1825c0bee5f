package deliver

import (
	"errors"
	"fmt"
	"time"

	"github.com/partyhq/party/core/agent"
)

// Outcome is how a delivery ended.
type Outcome string

// Delivery outcomes. Unconfirmed and Failed are errors for the caller.
const (
	Submitted   Outcome = "submitted"   // the agent took the message
	Queued      Outcome = "queued"      // the agent was busy and queued it
	Unconfirmed Outcome = "unconfirmed" // pasted and Enter pressed, but not seen taken
	Failed      Outcome = "failed"      // not delivered
)

// Errors a delivery can end with; wrapped with the pane id.
var (
	ErrPaneDead    = errors.New("pane is dead")
	ErrNotRunning  = errors.New("pane is not running its agent")
	ErrDialog      = errors.New("a menu or dialog is on screen")
	ErrUnconfirmed = errors.New("submission not confirmed")
	ErrEmpty       = errors.New("nothing to send")
	ErrInputBusy   = errors.New("the input box already holds text")
	ErrNotReady    = errors.New("the agent did not show its input box")
	// ErrNotAgent is text an agent wrote, refused for a pane that runs a
	// shell or another program (NotAgentError says which).
	ErrNotAgent = errors.New("not an agent's pane")
	// ErrInterpreted is a text the agent would run as a command.
	ErrInterpreted = agent.ErrInterpreted
)

// NotAgentError is text an agent wrote refused for a pane that does not
// run claude, codex or gemini: a shell would run it as a command, another
// program may too.
type NotAgentError struct {
	Pane string
	Kind agent.Kind // the pane's agent: shell, generic
	Why  string     // "shell" or "program" (agent.TakesAgentText)
}

func (e *NotAgentError) Error() string {
	return fmt.Sprintf("send to %s: it runs a %s, not claude, codex or gemini: text an agent wrote is never typed into it (route.allowRoles opts its role in)",
		e.Pane, e.Why)
}

// Unwrap makes errors.Is(err, ErrNotAgent) true.
func (e *NotAgentError) Unwrap() error { return ErrNotAgent }

// CheckAgentText returns a *NotAgentError when text an agent wrote must
// not be typed into pane, whose agent is kind (agent.TakesAgentText);
// nil for claude, codex and gemini.
func CheckAgentText(pane string, kind agent.Kind) error {
	if ok, why := agent.TakesAgentText(kind); !ok {
		return &NotAgentError{Pane: pane, Kind: kind, Why: why}
	}
	return nil
}

// WentWith says what a submitted text took with it: the keys someone
// typed into the input box as Enter was pressed, and whether they are
// back in the box; "" when there were none.
func (r Result) WentWith() string {
	if r.TypedAfter == "" {
		return ""
	}
	back := "given back into the input box"
	if !r.GivenBack {
		back = "not given back: the input box was not empty again"
	}
	return fmt.Sprintf("keys typed into the input box as Enter was pressed went with the text: %q (%s)", r.TypedAfter, back)
}

// Result reports a delivery.
type Result struct {
	Outcome Outcome `json:"outcome"`
	Pane    string  `json:"pane"`
	Bytes   int     `json:"bytes"`
	Enters  int     `json:"enters"` // Enter (or Tab) presses
	WasBusy bool    `json:"busy"`
	Via     string  `json:"confirmed_by,omitempty"` // event, screen
	// TypedAfter is what someone typed into the input box between the
	// last look and Enter, which the agent took with the text; GivenBack
	// says it was typed back into the emptied box.
	TypedAfter string        `json:"typed_after,omitempty"`
	GivenBack  bool          `json:"given_back,omitempty"`
	Screen     string        `json:"-"` // last screen seen, for errors
	Duration   time.Duration `json:"-"`
}
