package notify

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind is what a notification is about; the kinds are the per-event
// switches of notify.events.
type Kind string

// The kinds of notifications.
const (
	Permission Kind = "permission" // an agent asks for a permission
	Dialog     Kind = "dialog"     // an agent shows another dialog (a question, a choice)
	Failed     Kind = "failed"     // an agent's turn failed
	Discussion Kind = "discussion" // the review loop reached NEEDS_DISCUSSION
	Trigger    Kind = "trigger"    // a supervisor trigger failed, waited past its limit, or a thread was blocked
	Done       Kind = "done"       // a long turn finished
	Stalled    Kind = "stalled"    // a supervised agent is busy with no sign of life (supervise.stallAfter)
	Budget     Kind = "budget"     // a budget (budget.*) is 80% spent, or spent
	Test       Kind = "test"       // party notify test
)

// Kinds are the kinds a user can switch, in order.
var Kinds = []Kind{Permission, Dialog, Failed, Discussion, Trigger, Done, Stalled, Budget}

// ParseKinds reads a list of kinds ("permission,failed", commas or
// spaces); "all" is every kind, "none" or "" none.
func ParseKinds(s string) (map[Kind]bool, error) {
	on := map[Kind]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		switch {
		case w == "all":
			for _, k := range Kinds {
				on[k] = true
			}
		case w == "none":
		case slices.Contains(Kinds, Kind(w)):
			on[Kind(w)] = true
		default:
			return nil, fmt.Errorf("unknown notification %q (kinds: %s, all, none)", w, kindList())
		}
	}
	return on, nil
}

func kindList() string {
	var s []string
	for _, k := range Kinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// Event is one thing to tell a person.
type Event struct {
	Kind    Kind      `json:"kind"`
	Session string    `json:"session"`
	Role    string    `json:"role,omitempty"`
	Pane    string    `json:"pane,omitempty"`
	Title   string    `json:"title"`
	Body    string    `json:"body"`
	At      time.Time `json:"at"`
	// Key says which events are the same one told again: the gate tells
	// one event of a key within the dedupe window.
	Key string `json:"key"`
}
