package notify

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/review"
	"github.com/partyhq/party/core/supervise"
)

// Watch is the notifier's state: how far it read each source, the turns
// running, and the gate. The notifier saves it before it tells anything.
type Watch struct {
	// Offset is how many bytes of the session's event log were read.
	Offset int64 `json:"offset"`
	// AuditSeq is the last supervisor audit event read.
	AuditSeq int64 `json:"audit_seq"`
	// Review is the review state last seen, "STATE@since".
	Review string `json:"review,omitempty"`
	// Turns are the running turns: when each pane's was submitted and how
	// many tool calls it made (a permission prompt is one per call).
	Turns map[string]Turn `json:"turns,omitempty"`
	Gate  Gate            `json:"gate"`
	// Budgets are the budgets told of, "KEY|SCOPE", and the share of
	// them (80 or 100) last told: each is told once at each.
	Budgets map[string]int `json:"budgets,omitempty"`
}

// BudgetUse is one budget of the team and how much of it is spent.
type BudgetUse struct {
	Key, Scope string
	Role       string // a role's budget's role
	Used       float64
	Text       string // what was spent of what limit, in words
}

// budgetWarn is the share of a budget spent that is told first.
const budgetWarn = 0.8

// Budget makes the events of the team's budgets as they stand at now:
// one when a budget passes 80%, one when it is spent (the supervisor
// then holds the triggers of the agents it bounds), each once; a budget
// that went back under 80% (a limit raised, a new day's budget) is told
// again when it passes it again.
func (w Watch) Budget(session string, uses []BudgetUse, now time.Time) (Watch, []Event) {
	told := map[string]int{}
	for k, v := range w.Budgets {
		told[k] = v
	}
	w.Budgets = told
	var out []Event
	for _, u := range uses {
		key := u.Key + "|" + u.Scope
		share := 0
		switch {
		case u.Used >= 1:
			share = 100
		case u.Used >= budgetWarn:
			share = 80
		}
		if share == 0 {
			delete(told, key)
			continue
		}
		if told[key] >= share {
			continue
		}
		told[key] = share
		e := Event{Kind: Budget, Session: session, Role: u.Role, At: now, Body: clip(u.Text),
			Key: "budget|" + key + "|" + strconv.Itoa(share), Title: fmt.Sprintf("%s: %d%% of %s spent", u.Scope, int(u.Used*100), u.Key)}
		if share == 100 {
			e.Title = fmt.Sprintf("%s: %s spent; its agents' triggers are held", u.Scope, u.Key)
		}
		out = append(out, e)
	}
	return w, out
}

// Turn is a running turn of a pane.
type Turn struct {
	Since time.Time `json:"since"`
	Tools int       `json:"tools"`
}

// pasted is the kind of the event log line party's delivery writes when
// it pasted a text into a pane (party.NewDeliverer): a turn starts there
// for agents that report no submit of their own (codex).
const pasted = "input"

// maxBody bounds the text of a notification.
const maxBody = 200

// Hook makes the events of one hook event of the session's event log:
// a permission prompt, another dialog, a failed turn, or a turn that ends
// after longTurn or more. idle_prompt ("waiting for your input") is not
// one: an idle agent needs nobody.
func (w Watch) Hook(session string, ev hook.Event, longTurn time.Duration) (Watch, []Event) {
	turns := map[string]Turn{}
	for k, v := range w.Turns {
		turns[k] = v
	}
	w.Turns = turns
	t, running := turns[ev.Pane]
	who := ev.Agent
	if who == "" {
		who = "the agent"
	}
	base := Event{Session: session, Pane: ev.Pane, At: ev.Time}
	switch ev.Kind {
	case hook.PromptSubmit, pasted:
		if !running {
			turns[ev.Pane] = Turn{Since: ev.Time}
		}
	case hook.ToolUse, hook.ToolUsed:
		if running {
			t.Tools++
			turns[ev.Pane] = t
		}
	case hook.TurnComplete:
		delete(turns, ev.Pane)
		if running && ev.Time.Sub(t.Since) >= longTurn {
			e := base
			e.Kind, e.Title = Done, who+" finished"
			e.Body = fmt.Sprintf("a turn of %s ended", ev.Time.Sub(t.Since).Round(time.Second))
			e.Key = turnKey(Done, ev.Pane, t)
			return w, []Event{e}
		}
	case hook.TurnFailed:
		delete(turns, ev.Pane)
		e := base
		e.Kind, e.Title = Failed, who+": the turn failed"
		e.Body = clip(strings.TrimSpace(strings.Join([]string{ev.Type, ev.Message}, " ")))
		e.Key = turnKey(Failed, ev.Pane, t)
		return w, []Event{e}
	case hook.Notification:
		e := base
		switch ev.Type {
		case "idle_prompt", "auth_success":
			return w, nil
		case hook.PermissionPrompt:
			e.Kind, e.Title = Permission, who+" asks for permission"
			e.Body = ev.Message
			if ev.Tool != "" {
				e.Body = strings.TrimSpace(ev.Tool + " " + ev.Command)
			}
		default:
			e.Kind, e.Title, e.Body = Dialog, who+" waits for an answer", ev.Message
		}
		e.Body = clip(e.Body)
		// Claude tells one prompt twice (PermissionRequest and
		// Notification): one key per tool call of the turn.
		e.Key = turnKey(e.Kind, ev.Pane, t)
		return w, []Event{e}
	}
	return w, nil
}

func turnKey(k Kind, pane string, t Turn) string {
	return string(k) + "|" + pane + "|" + strconv.FormatInt(t.Since.UnixNano(), 10) + "|" + strconv.Itoa(t.Tools)
}

// Audit makes the event of one supervisor audit event, if it is one a
// person must hear of: a trigger that failed (DEFER_TIMEOUT: the operator
// stayed busy past the limit) or was deferred past its limit and handed
// to the agent's resumed session, a thread the supervisor blocked, a
// runtime it gave up on, a runtime whose agent stalled.
func (w Watch) Audit(session string, a supervise.AuditEvent) (Watch, []Event) {
	if a.Seq > w.AuditSeq {
		w.AuditSeq = a.Seq
	}
	e := Event{Session: session, Role: a.Role, At: a.At, Key: "audit|" + strconv.FormatInt(a.Seq, 10), Body: clip(a.Detail)}
	switch a.Kind {
	case supervise.AuditFailed:
		e.Kind, e.Title = Trigger, fmt.Sprintf("trigger %s to %s failed (%s)", a.Trigger, a.Role, a.Result)
		if a.Result == string(supervise.DeferTimeout) {
			e.Title = fmt.Sprintf("trigger %s to %s waited past its limit", a.Trigger, a.Role)
		}
	case supervise.AuditResumeStarted:
		// Not failed (yet): the agent's resumed session is asked instead.
		// A person kept out of a box that long hears of it once.
		if a.Result != string(supervise.DeferTimeout) {
			return w, nil
		}
		e.Kind, e.Title = Trigger, fmt.Sprintf("trigger %s to %s waited past its limit; its session answers without its pane", a.Trigger, a.Role)
	case supervise.AuditBlocked:
		e.Kind, e.Title = Trigger, fmt.Sprintf("thread %s was blocked", a.Thread)
	case supervise.AuditRuntimeFailed:
		e.Kind, e.Title = Failed, fmt.Sprintf("runtime %s failed (%s)", a.Role, a.Result)
	case supervise.AuditStalled:
		e.Kind, e.Title = Stalled, fmt.Sprintf("%s is stalled: busy, no sign of life", a.Role)
	default:
		return w, nil
	}
	return w, []Event{e}
}

// ReviewState makes the event of the review state st: NEEDS_DISCUSSION once
// per time it is entered.
func (w Watch) ReviewState(session string, st review.Status) (Watch, []Event) {
	tag := st.State.String() + "@" + st.Since.UTC().Format(time.RFC3339Nano)
	if tag == w.Review {
		return w, nil
	}
	first := w.Review == ""
	w.Review = tag
	if st.State != review.NeedsDiscussion || first {
		return w, nil
	}
	return w, []Event{{Kind: Discussion, Session: session, At: st.Since, Key: "review|" + tag,
		Title: "the review needs a discussion", Body: clip(st.Note)}}
}

// clip is s on one line, at most maxBody characters.
func clip(s string) string {
	s = strings.Join(strings.Fields(Plain(s)), " ")
	if r := []rune(s); len(r) > maxBody {
		s = string(r[:maxBody-1]) + "…"
	}
	return s
}

// Plain is s without control characters (ESC, BEL, C1), which would end
// or forge the escape sequences and messages the text goes into.
func Plain(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			if r == '\n' || r == '\t' {
				return ' '
			}
			return -1
		}
		return r
	}, s)
}
