package wait

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partyhq/party/core/hook"
)

func TestTurnTracker(t *testing.T) {
	submit := func(p string) hook.Event { return hook.Event{Kind: hook.PromptSubmit, Prompts: []string{p}} }
	stop := func(a string) hook.Event { return hook.Event{Kind: hook.TurnComplete, Answer: a} }
	gsubmit := func(p string) hook.Event {
		return hook.Event{Agent: "gemini", Kind: hook.PromptSubmit, Prompts: []string{p}}
	}
	gafter := func(p, a string) hook.Event {
		return hook.Event{Agent: "gemini", Kind: hook.TurnComplete, Prompts: []string{p}, Answer: a}
	}
	tests := []struct {
		name   string
		events []hook.Event
		done   bool
		answer string
		err    error
	}{
		{"stop of our turn", []hook.Event{submit("q"), stop("a")}, true, "a", nil},
		{"a stop before our prompt is someone else's", []hook.Event{stop("old"), submit("q"), stop("new")}, true, "new", nil},
		{"stop of a queued earlier prompt is not ours", []hook.Event{submit("earlier"), stop("e")}, false, "", nil},
		{"keys typed before Enter went with our prompt", []hook.Event{submit("qoperator"), stop("a")}, true, "a", nil},
		{"a prompt that ends with ours is not ours", []hook.Event{submit("draft q"), stop("a")}, false, "", nil},
		{"gemini merged queue holds our prompt with keys typed after it", []hook.Event{gsubmit("earlier\n\nq typed"), gafter("earlier\n\nq typed", "both")}, true, "both", nil},
		{"prompt matched despite edge whitespace", []hook.Event{submit("  q\n"), stop("a")}, true, "a", nil},
		{"codex notify carries its input", []hook.Event{{Kind: hook.TurnComplete, Prompts: []string{"other"}, Answer: "x"}, {Kind: hook.TurnComplete, Prompts: []string{"q"}, Answer: "y"}}, true, "y", nil},
		{"failure of our turn", []hook.Event{submit("q"), {Kind: hook.TurnFailed, Type: "rate_limit"}}, true, "", ErrTurnFailed},
		{"permission prompt in our turn", []hook.Event{submit("q"), {Kind: hook.Notification, Type: "permission_prompt", Message: "Claude needs your permission"}}, true, "", ErrPermission},
		{"idle notification is not an error", []hook.Event{submit("q"), {Kind: hook.Notification, Type: "idle_prompt"}}, false, "", nil},
		{"failure before our turn is ignored", []hook.Event{{Kind: hook.TurnFailed}, submit("q")}, false, "", nil},
		{"gemini after agent of our turn", []hook.Event{gsubmit("q"), gafter("q", "line 1\nline 2")}, true, "line 1\nline 2", nil},
		{"gemini merged queue holds our prompt last", []hook.Event{gsubmit("earlier\n\nq"), gafter("earlier\n\nq", "both")}, true, "both", nil},
		{"gemini merged queue holds our prompt first", []hook.Event{gsubmit("q\n\nlater"), gafter("q\n\nlater", "both")}, true, "both", nil},
		{"gemini late answer to the same text asked before is not ours", []hook.Event{gafter("q", "old")}, false, "", nil},
		{"gemini same text: the answer after our submission is", []hook.Event{gafter("q", "old"), gsubmit("q"), gafter("q", "new")}, true, "new", nil},
		{"gemini failure of the same text asked before is not ours", []hook.Event{{Agent: "gemini", Kind: hook.TurnFailed, Prompts: []string{"q"}}}, false, "", nil},
		{"gemini prompt that only contains ours is not ours", []hook.Event{gsubmit("not q"), gafter("not q", "other")}, false, "", nil},
		{"gemini answer of an earlier turn is not ours", []hook.Event{gafter("earlier", "old"), gsubmit("q"), gafter("q", "new")}, true, "new", nil},
		{"gemini no response text fails our turn", []hook.Event{gsubmit("q"), {Agent: "gemini", Kind: hook.TurnFailed, Prompts: []string{"q"}, Type: "error"}}, true, "", ErrTurnFailed},
		{"gemini tool permission in our turn", []hook.Event{gsubmit("q"), {Agent: "gemini", Kind: hook.Notification, Type: hook.PermissionPrompt, Message: "Tool Shell requires confirmation"}}, true, "", ErrPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := turnTracker{prompt: "q"}
			var (
				res  Result
				done bool
				err  error
			)
			for _, ev := range tt.events {
				if res, done, err = tr.see(ev); done {
					break
				}
			}
			assert.Equal(t, tt.done, done)
			assert.Equal(t, tt.answer, res.Answer)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}
