package relay

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/blocks"
)

func blk(id, to string) blocks.Block {
	return blocks.Block{Header: blocks.Header{ID: id, To: to, Type: "msg"}, Body: "b"}
}

func TestSwitchboardRoutesOnceByID(t *testing.T) {
	s := &Switchboard{Roles: []string{"planner", "executor", "critic"}}
	d := s.See("planner", []blocks.Block{blk("a", "EXECUTER"), blk("b", "Critic")})
	assert.Equal(t, "executor", d[0].To)
	assert.Equal(t, "critic", d[1].To)
	assert.Empty(t, s.See("planner", []blocks.Block{blk("a", "EXECUTER")}), "a redraw is not routed again")
	assert.Empty(t, s.See("executor", []blocks.Block{blk("a", "EXECUTER")}), "nor is the echo in the recipient's pane")
}

func TestSwitchboardUnknownRoleAndIgnore(t *testing.T) {
	s := &Switchboard{Roles: []string{"a", "b"}}
	s.Ignore("old")
	d := s.See("a", []blocks.Block{blk("old", "b"), blk("x", "nobody")})
	assert.Len(t, d, 1)
	assert.Equal(t, "unknown-role", d[0].Reason)
	assert.Empty(t, d[0].To)
}

func TestSwitchboardHopLimitStopsPingPong(t *testing.T) {
	s := &Switchboard{Roles: []string{"a", "b"}, HopLimit: 4}
	from, to := "a", "b"
	delivered := 0
	for i := 0; i < 10; i++ {
		d := s.See(from, []blocks.Block{blk(string(rune('0'+i)), to)})
		if d[0].To == "" {
			assert.Equal(t, "hop-limit", d[0].Reason)
			break
		}
		delivered++
		from, to = to, from
	}
	assert.Equal(t, 4, delivered)
}

func TestForwardIsAParsableBlock(t *testing.T) {
	d := Decision{Block: blk("z", "critic"), From: "planner", Hop: 2}
	found, errs := blocks.Parse(Forward(d))
	assert.Empty(t, errs)
	assert.Equal(t, 2, found[0].Hop)
	assert.Equal(t, "planner", found[0].From)
}

func TestForwardHeaderIsJSON(t *testing.T) {
	// %q would write \x00-style escapes and "\xff", which are not JSON.
	d := Decision{Block: blocks.Block{Header: blocks.Header{ID: "a\"b\\c]]\x01\u2028", To: "critic", Type: "t<&>"}, Body: "b"}, From: "plan\tner", Hop: 3}
	found, errs := blocks.Parse(Forward(d))
	require.Empty(t, errs)
	require.Len(t, found, 1)
	assert.Equal(t, blocks.Header{To: "critic", From: "plan\tner", Type: "t<&>", ID: "a\"b\\c]]\x01\u2028", Hop: 3}, found[0].Header)
	assert.Contains(t, Forward(d), `"type":"t<&>"`, "no HTML escaping")
}

// FuzzForwardRoundTrip: a forwarded block's header reads back as sent.
func FuzzForwardRoundTrip(f *testing.F) {
	f.Add("executor", "planner", "plan", "t1-plan", 1)
	f.Add("a\"]]", "\\", "\x1b[201~", "\u2028 é", 8)
	f.Fuzz(func(t *testing.T, to, from, typ, id string, hop int) {
		for _, s := range []string{to, from, typ, id} {
			if !utf8.ValidString(s) || s == "" {
				t.Skip("screen text is UTF-8, and empty fields are omitted by the parser's header")
			}
		}
		if hop < 0 {
			hop = -hop
		}
		d := Decision{Block: blocks.Block{Header: blocks.Header{ID: id, To: to, Type: typ}, Body: "body"}, From: from, Hop: hop}
		found, errs := blocks.Parse(Forward(d))
		require.Empty(t, errs, "%q", Forward(d))
		require.Len(t, found, 1, "%q", Forward(d))
		assert.Equal(t, blocks.Header{To: to, From: from, Type: typ, ID: id, Hop: hop}, found[0].Header)
	})
}

func TestSwitchboardRefusesRolesThatRunNoAgent(t *testing.T) {
	s := &Switchboard{Roles: []string{"a", "shell", "py", "opted"}, Refuse: map[string]string{"shell": "shell", "py": "program"}}
	d := s.See("a", []blocks.Block{blk("1", "shell"), blk("2", "PY"), blk("3", "opted"), blk("4", "a")})
	require.Len(t, d, 4)
	assert.Equal(t, "refused-shell", d[0].Reason)
	assert.Equal(t, "shell", d[0].Role)
	assert.Empty(t, d[0].To, "a shell never gets a block")
	assert.Equal(t, "refused-program", d[1].Reason)
	assert.Equal(t, "py", d[1].Role, "the role is found whatever the letter case")
	assert.Empty(t, d[1].To)
	assert.Equal(t, "opted", d[2].To, "a role not in Refuse (an agent, or opted in) gets it")
	assert.Equal(t, "a", d[3].To)
	d = s.See("py", []blocks.Block{blk("5", "a")})
	assert.Equal(t, 1, d[0].Hop, "a refused block raises no hop count")
}

func TestSwitchboardNewConversationStartsAtTheFirstHop(t *testing.T) {
	s := &Switchboard{Roles: []string{"a", "b"}, HopLimit: 3}
	ping := func(from, id, to string) Decision { return s.See(from, []blocks.Block{blk(id, to)})[0] }
	assert.Equal(t, 1, ping("a", "p1", "b").Hop)
	assert.Equal(t, 2, ping("b", "p2", "a").Hop)
	assert.Equal(t, 3, ping("a", "p3", "b").Hop)
	end := ping("b", "p4", "a")
	assert.Equal(t, "hop-limit", end.Reason, "the ping-pong ends at the limit")
	assert.Equal(t, 4, end.Hop)

	// b answered p3 already; a new prompt to b starts a new conversation.
	s.Fresh("b")
	d := ping("b", "q1", "a")
	assert.Equal(t, 1, d.Hop)
	assert.Equal(t, "a", d.To)
	assert.Equal(t, 2, ping("a", "q2", "b").Hop, "and its own chain goes on from there")
}

func TestSwitchboardChainByRe(t *testing.T) {
	s := &Switchboard{Roles: []string{"a", "b", "c"}}
	s.See("a", []blocks.Block{blk("x1", "b")})
	s.See("b", []blocks.Block{blk("x2", "a")}) // hop 2
	s.Fresh("a")
	b := blk("x3", "c")
	b.Re = "x2"
	d := s.See("a", []blocks.Block{b})[0]
	assert.Equal(t, 3, d.Hop, "re names the block it answers, whatever the pane was given since")
	found, _ := blocks.Parse(Forward(d))
	assert.Equal(t, "x2", found[0].Re, "the forwarded header keeps re")
	unknown := blk("x4", "b")
	unknown.Re = "nope"
	assert.Equal(t, 4, s.See("c", []blocks.Block{unknown})[0].Hop, "an unknown re: c answers x3, delivered to it")
}
