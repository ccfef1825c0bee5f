package mux

import (
	"context"
	"errors"
)

// Pane is one pane as listed by the multiplexer.
type Pane struct {
	ID             string // stable id, e.g. "%12"
	Session        string
	WindowID       string // e.g. "@3"
	WindowIndex    int
	WindowName     string
	Index          int    // pane index within its window (respects pane-base-index)
	Role           string // @party_role, empty when unset
	Agent          string // @party_agent, empty when unset
	Hooks          string // @party_hooks: how the agent reports its turns, empty when it does not
	PID            int
	Dead           bool
	DeadStatus     string // exit status of a dead pane, may be empty
	CurrentCommand string
	InMode         bool // copy mode or another mode is active
	AltScreen      bool
	Width, Height  int
}

// Multiplexer is what routing and delivery need. Every method addresses
// panes by their stable id.
type Multiplexer interface {
	// ListPanes lists every pane of session, in window then pane order.
	ListPanes(ctx context.Context, session string) ([]Pane, error)
	// Pane describes one pane.
	Pane(ctx context.Context, id string) (Pane, error)
	// Inspect is Pane and Capture (no history) in one round trip: what
	// delivery checks before it pastes.
	Inspect(ctx context.Context, id string) (Pane, string, error)
	// Capture returns the visible screen of the pane plus up to history
	// lines of scrollback, wrapped lines joined, without escape sequences.
	Capture(ctx context.Context, id string, history int) (string, error)
	// Paste delivers text to the pane as one bracketed paste (when the
	// program asked for it), without turning newlines into Enter.
	Paste(ctx context.Context, id string, text []byte) error
	// SendKey presses one named key (e.g. "Enter", "Tab") in the pane.
	SendKey(ctx context.Context, id string, key string) error
	// LeaveMode leaves copy mode (or any other pane mode).
	LeaveMode(ctx context.Context, id string) error
	// Rows reads the pane's screen and up to history rows of scrollback at
	// one instant, with where each row is in the pane's whole scrollback:
	// what a wait needs to find the output that came after a given moment.
	Rows(ctx context.Context, id string, history int) (Rows, error)
}

// Rows is a pane's scrollback and screen read at one instant. Rows are
// numbered from the oldest row the pane's scrollback holds (0) down
// through the screen; a row keeps its number as the screen scrolls, until
// the scrollback is cleared or, full, drops its oldest rows.
type Rows struct {
	// History is how many rows of scrollback the pane held, and Limit how
	// many it holds at most (tmux then drops the oldest tenth of them at
	// once); 0 is no limit.
	History, Limit int
	// Alt says the pane showed its alternate screen (no scrollback).
	Alt bool
	// First is the number of Raw[0].
	First int
	// Raw holds the rows one entry each, trailing spaces removed.
	Raw []string
	// Lines are the same rows with wrapped rows joined, as Capture returns
	// them; LineOf[i] is the index in Lines of the line that holds Raw[i].
	Lines  []string
	LineOf []int
}

// Sentinel errors shared by every Multiplexer implementation. Implementations
// wrap them with context; callers test with errors.Is.
var (
	ErrNoServer  = errors.New("no tmux server running")
	ErrNoSession = errors.New("no such session")
	ErrNoPane    = errors.New("no such pane")
)
