package supervise

import (
	"context"
	"fmt"
	"strconv"
)

// inbox triggers each runtime with unread messages, one trigger per
// thread at a time: messages that come while it is open are coalesced.
// It reads the inbox only when its mark (Store.InboxMark) moved since the
// last pass that read it through: one query a pass, not one a runtime.
func (l *Loop) inbox(ctx context.Context) error {
	mark, err := l.Store.InboxMark(ctx)
	if err != nil {
		return err
	}
	if mark == l.inboxMark {
		return nil
	}
	if err := l.triggerUnread(ctx); err != nil {
		return err
	}
	l.inboxMark = mark
	return nil
}

// triggerUnread is the inbox's pass over every runtime.
func (l *Loop) triggerUnread(ctx context.Context) error {
	rts, err := l.Store.Runtimes(ctx)
	if err != nil {
		return err
	}
	for _, rt := range rts {
		unread, err := l.Store.Unread(ctx, rt.Role, "")
		if err != nil {
			return err
		}
		byThread := map[string][]Message{}
		var order []string
		for _, m := range unread {
			if _, ok := byThread[m.Thread]; !ok {
				order = append(order, m.Thread)
			}
			byThread[m.Thread] = append(byThread[m.Thread], m)
		}
		for _, th := range order {
			open, err := l.Store.Triggers(ctx, TriggerFilter{Open: true, Role: rt.Role, Thread: th})
			if err != nil {
				return err
			}
			if hasInbox(open) {
				continue
			}
			msgs := byThread[th]
			last := msgs[len(msgs)-1]
			text := unreadText(len(msgs), th, rt.Tools)
			t := Trigger{ID: "inbox-" + th + "-" + strconv.FormatInt(last.Seq, 10), Role: rt.Role, Thread: th, Reason: "inbox", Text: text}
			if _, err := l.Store.Trigger(ctx, t.ID); err == nil {
				continue // already triggered for these messages
			}
			t, acts, err := Step(l.Policy, t, Event{Kind: EvQueued, At: l.now()})
			if err != nil {
				return err
			}
			if _, _, err := l.Store.AddTrigger(ctx, t, audits(t, acts)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// unreadText is the text of a trigger for n unread messages in thread:
// read with party's inbox_read tool where the agent has party's MCP
// tools, else with party inbox read in its shell.
func unreadText(n int, thread string, tools bool) string {
	how := fmt.Sprintf("run `party inbox read --thread %s`", thread)
	if tools {
		how = fmt.Sprintf("read %s with party's inbox_read tool (thread %s)", them(n), thread)
	}
	return fmt.Sprintf("%d unread message%s in thread %s: %s and act on %s.", n, plural(n), thread, how, them(n))
}

func hasInbox(ts []Trigger) bool {
	for _, t := range ts {
		if t.Reason == "inbox" {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
