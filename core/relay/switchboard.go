package relay

import (
	"encoding/json"
	"strings"

	"github.com/partyhq/party/core/blocks"
)

// Switchboard decides where blocks go among N roles: a block whose "to"
// names a role (case-insensitively; EXECUTER also reaches "executor") is
// forwarded to it once, by id, unless that role's pane takes no text an
// agent wrote (Refuse: it runs a shell or another program).
//
// Hops belong to a block's chain, not to a pair of panes: a block answers
// the block its "re" names, else the block last delivered to the pane that
// printed it, as long as that pane was given nothing else since (Fresh);
// its hop is one more than the hop of the block it answers, or 1 when it
// answers none (a new conversation), or its own "hop" when that is
// larger. So a ping-pong between agents that never copy the hop still ends
// at the limit, and a new question after it starts again from the first
// hop.
type Switchboard struct {
	Roles    []string // roles of the session's panes
	HopLimit int
	// Refuse maps each role whose pane must not be sent what an agent
	// wrote to why ("shell", "program": agent.TakesAgentText); the roles
	// the user opted in (route.allowRoles) are not in it.
	Refuse  map[string]string
	seen    map[string]bool
	hops    map[string]int    // block id -> its hop
	answers map[string]string // role -> the id of the block its next block answers
}

// Decision is what to do with one block.
type Decision struct {
	Block blocks.Block
	From  string
	To    string // the role to deliver to, empty when not delivered
	Hop   int
	// Reason is why it is not delivered: "unknown-role", "hop-limit",
	// "refused-shell", "refused-program" (the role's pane runs that).
	Reason string
	// Role is the role the block names, when it names one.
	Role string
}

// Ignore marks ids as already handled (blocks on screen before the
// switchboard started, or echoed prompts).
func (s *Switchboard) Ignore(ids ...string) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	for _, id := range ids {
		s.seen[id] = true
	}
}

// See takes the blocks found on role's screen and returns a decision for
// each new one.
func (s *Switchboard) See(from string, found []blocks.Block) []Decision {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.hops == nil {
		s.hops, s.answers = map[string]int{}, map[string]string{}
	}
	var out []Decision
	for _, b := range found {
		if s.seen[b.ID] {
			continue
		}
		s.seen[b.ID] = true
		d := Decision{Block: b, From: from, Hop: max(b.Hop, s.hopOf(from, b))}
		s.hops[b.ID] = d.Hop
		to, ok := s.role(b.To)
		d.Role = to
		switch {
		case !ok:
			d.Reason = "unknown-role"
		case s.Refuse[to] != "":
			d.Reason = "refused-" + s.Refuse[to]
		case d.Hop > s.limit():
			d.Reason = "hop-limit"
		default:
			d.To = to
			s.answers[to] = b.ID
		}
		out = append(out, d)
	}
	return out
}

// hopOf is the hop of b, printed by from, by its chain: one more than the
// hop of the block it answers, 1 when it answers none.
func (s *Switchboard) hopOf(from string, b blocks.Block) int {
	re := s.answers[from]
	if _, known := s.hops[b.Re]; known && b.Re != "" {
		re = b.Re
	}
	if re == "" {
		return 1
	}
	return s.hops[re] + 1
}

// Fresh says that role's pane was given something other than the block
// the switchboard last delivered to it (a prompt of the user's, a talk):
// what it prints next starts a new conversation, unless it names the
// block it answers ("re").
func (s *Switchboard) Fresh(role string) { delete(s.answers, role) }

// Answering is the id of the block that role's next block answers, "" for
// none.
func (s *Switchboard) Answering(role string) string { return s.answers[role] }

func (s *Switchboard) limit() int {
	if s.HopLimit > 0 {
		return s.HopLimit
	}
	return 8
}

func (s *Switchboard) role(to string) (string, bool) {
	want := strings.ToLower(to)
	if want == "executer" {
		want = "executor"
	}
	for _, r := range s.Roles {
		if strings.ToLower(r) == want {
			return r, true
		}
	}
	return "", false
}

// Forward is the text delivered for a decision: the block, re-tagged with
// its hop and sender, so the recipient sees exactly what was sent. The
// header is JSON written by encoding/json (Go's %q is not JSON: it writes
// \x.. escapes), so the recipient's parser reads back the same fields.
func Forward(d Decision) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(forwardHeader{To: d.Block.To, From: d.From, Type: d.Block.Type, ID: d.Block.ID, Re: d.Block.Re, Hop: d.Hop})
	return "[[POLI:MSG " + strings.TrimSuffix(b.String(), "\n") + "]]\n" + d.Block.Body + "\n[[/POLI:MSG]]"
}

// forwardHeader is the header of a forwarded block, every field written.
type forwardHeader struct {
	To   string `json:"to"`
	From string `json:"from"`
	Type string `json:"type"`
	ID   string `json:"id"`
	Re   string `json:"re,omitempty"`
	Hop  int    `json:"hop"`
}
