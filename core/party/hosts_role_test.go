package party

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/exitcode"
	"github.com/partyhq/party/core/hosts"
	"github.com/partyhq/party/core/roles"
	"github.com/partyhq/party/core/supervise"
	"github.com/partyhq/party/core/usage"
)

// TestHostSendTalkCheck: send, talk and check of ROLE@HOST run the
// party there with argv, the text on its stdin byte for byte and never
// on the command line; its --json comes back with the host, its
// failure with its code and status (the error table's).
func TestHostSendTalkCheck(t *testing.T) {
	ctx := context.Background()
	text := "$(touch pwned); `x` \"q\" 'it''s' $HOME\nline two\n"
	r := &remoteRunner{answers: map[string]answer{
		"send --force claude - --json":                {0, `{"role":"claude","session":"rt","outcome":"submitted","pane":"%1","ms":12}`, ""},
		"send codex - --json":                         {7, `{"role":"codex","outcome":"failed","ms":3,"error":{"code":"INPUT_NOT_EMPTY","message":"the box holds text"}}`, ""},
		"talk --wait --timeout=90000 claude - --json": {0, `{"role":"claude","pane":"%1","outcome":"submitted","answer":"ok","ms":40}`, ""},
		"talk --wait claude - --json":                 {255, "", "Connection to 127.0.0.1 closed by remote host.\n"},
		"talk --session=rt all - --json":              {0, `[{"role":"claude","outcome":"submitted","ms":1},{"role":"codex","outcome":"failed","ms":1,"error":{"code":"PANE_DEAD","message":"dead"}}]`, ""},
		"check claude 5 --json":                       {0, `{"role":"claude","pane":"%1","lines":["a","b"]}`, ""},
		"check nobody 40 --json":                      {3, `{"error":{"code":"ROLE_NOT_FOUND","message":"no pane has role \"nobody\""}}`, ""},
	}}
	env := localEnv(t, r, `{"hosts": {"box": {"ssh": "me@box"}}}`)

	s, err := Send(ctx, env, SendRequest{Role: "claude@box", Text: text, Force: true})
	require.NoError(t, err)
	assert.Equal(t, Sent{Role: "claude", Host: "box", Session: "rt", Result: deliver.Result{Outcome: deliver.Submitted, Pane: "%1", Duration: 12e6}, MS: 12}, s)
	require.Len(t, r.stdin, 1)
	assert.Equal(t, text, r.stdin[0], "byte for byte, on stdin")
	for _, argv := range r.argv {
		assert.NotContains(t, strings.Join(argv, " "), "pwned", "no text on a command line")
	}

	s, err = Send(ctx, env, SendRequest{Role: "codex@box", Text: "x"})
	code, exit := Classify(err)
	assert.Equal(t, []any{"INPUT_NOT_EMPTY", exitcode.ExitInputBusy}, []any{code, exit}, "the remote's code and status")
	assert.Equal(t, "INPUT_NOT_EMPTY", s.Error.Code)
	assert.Equal(t, "box", s.Host)

	out, err := Talk(ctx, env, TalkOptions{Role: "claude@box", Text: text, Wait: true, Timeout: 90e9})
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, "ok", *out[0].Answer)
	assert.Equal(t, "box", out[0].Host)

	_, err = Talk(ctx, env, TalkOptions{Role: "claude@box", Text: "x", Wait: true})
	assert.ErrorIs(t, err, hosts.ErrLost)
	assert.ErrorContains(t, err, "the turn there goes on")
	code, exit = Classify(err)
	assert.Equal(t, []any{"HOST_CONNECTION_LOST", exitcode.ExitHost}, []any{code, exit})

	env.Session = "rt"
	out, err = Talk(ctx, env, TalkOptions{Role: "all@box", Text: "x"})
	require.NoError(t, err)
	require.Len(t, out, 2)
	assert.NoError(t, out[0].Err)
	code, exit = Classify(out[1].Err)
	assert.Equal(t, []any{"PANE_DEAD", exitcode.ExitNotFound}, []any{code, exit})
	env.Session = ""

	scr, err := Check(ctx, env, CheckOptions{Role: "claude@box", Lines: 5})
	require.NoError(t, err)
	assert.Equal(t, Screen{Host: "box", Pane: "%1", Lines: []string{"a", "b"}}, scr)
	require.NotEmpty(t, r.callers)
	for _, v := range r.callers {
		assert.Equal(t, Version(env.Getenv), v, "each run tells the party there this version")
	}
	_, err = Check(ctx, env, CheckOptions{Role: "nobody@box", Lines: 40})
	code, exit = Classify(err)
	assert.Equal(t, []any{"ROLE_NOT_FOUND", exitcode.ExitNotFound}, []any{code, exit})
}

// TestHostRefusals: bad ROLE@HOST is a usage error, --why free text and a
// send or talk there from inside an agent's pane are refused, before any
// ssh (a message goes through the outbox: TestHostInboxAndRuntimes).
func TestHostRefusals(t *testing.T) {
	ctx := context.Background()
	r := &remoteRunner{}
	env := localEnv(t, r, `{"hosts": {"box": {"ssh": "me@box"}}}`)
	for _, role := range []string{"@box", "claude@", "c;laude@box", "claude@box;touch"} {
		_, err := Send(ctx, env, SendRequest{Role: role, Text: "x"})
		assert.ErrorIs(t, err, usage.Err, role)
		_, err = Talk(ctx, env, TalkOptions{Role: role, Text: "x"})
		assert.ErrorIs(t, err, usage.Err, role)
		_, err = Check(ctx, env, CheckOptions{Role: role, Lines: 1})
		assert.ErrorIs(t, err, usage.Err, role)
		_, err = InboxSend(ctx, env, supervise.MessageRequest{To: role, Text: "x"})
		assert.ErrorIs(t, err, usage.Err, role)
	}
	_, err := Send(ctx, env, SendRequest{Role: "claude@box", Text: "x", Force: true, Why: "it's late"})
	assert.ErrorIs(t, err, usage.Err, "--why is free text")

	inPane := *env
	inPane.Getenv = func(k string) string {
		if k == "PARTY_RUNTIME_TOKEN" {
			return "tok-claude"
		}
		return env.Getenv(k)
	}
	_, err = Send(ctx, &inPane, SendRequest{Role: "claude@box", Text: "x"})
	assert.ErrorIs(t, err, supervise.ErrForbidden)
	_, err = Talk(ctx, &inPane, TalkOptions{Role: "claude@box", Text: "x"})
	assert.ErrorIs(t, err, supervise.ErrForbidden)
	assert.Empty(t, r.argv, "no ssh ran")
}

// TestHostInboxAndRuntimes: inbox send --to ROLE@HOST and runtimes
// --host go through the API bridge, the text in the API call's body.
func TestHostInboxAndRuntimes(t *testing.T) {
	ctx := context.Background()
	rig := newDoorRig(t)
	r := &remoteRunner{version: Version(func(string) string { return "" }), remote: rig.env("")}
	env := localEnv(t, r, `{"hosts": {"box": {"ssh": "me@box"}}}`)

	rts, err := HostRuntimes(ctx, env, "box")
	require.NoError(t, err)
	require.Len(t, rts, 1)
	assert.Equal(t, "claude", rts[0].Role)

	text := "$(touch pwned); `x`\n"
	m, err := InboxSend(ctx, env, supervise.MessageRequest{To: "claude@box", Text: text, Thread: "t1"})
	require.NoError(t, err)
	assert.Equal(t, "claude", m.To)
	got, err := rig.store.Messages(ctx, "t1", 0)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, text, got[0].Text, "byte for byte")
	for _, argv := range r.argv {
		assert.NotContains(t, strings.Join(argv, " "), "pwned")
	}

	// From an agent's pane: recorded in the outbox of its own session's
	// supervisor, from the role of its token (not the name given), and
	// no ssh runs in the agent's command.
	local := newDoorRig(t)
	paneVars := local.env("tok-claude").Getenv
	pane := *env
	pane.Getenv = func(k string) string {
		if v := paneVars(k); v != "" {
			return v
		}
		return env.Getenv(k)
	}
	r.argv = nil
	m, err = InboxSend(ctx, &pane, supervise.MessageRequest{To: "claude@box", From: "forged", Text: text, Thread: "t2"})
	require.NoError(t, err)
	require.NotNil(t, m.Forward)
	assert.Equal(t, []string{"claude@box", "claude", string(FwdPending), "box"}, []string{m.To, m.From, string(m.Forward.State), m.Forward.Host})
	assert.Regexp(t, `^msg-[0-9a-f]{16}$`, m.ID)
	assert.Empty(t, r.argv, "no ssh in the agent's command")
	out, err := local.store.Outbox(ctx, "t2")
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, "claude@here", out[0].Origin)
	assert.Equal(t, text, out[0].Text, "byte for byte")
	list, err := InboxList(ctx, &pane, "t2")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, m.ID, list[0].ID)
	require.NotNil(t, list[0].Forward)
}

// TestRoleElsewhere: a bare role no pane here has is looked for on the
// configured hosts: on one, that host; on two, ROLE_AMBIGUOUS naming
// both; on none, the local error, naming the hosts not looked at. Any
// other local failure, or no host configured, runs no ssh.
func TestRoleElsewhere(t *testing.T) {
	ctx := context.Background()
	notHere := fmt.Errorf("no pane has role %q: %w", "codex", roles.ErrNotFound)
	lsCodex := map[string]answer{"ls --json": {0, `[{"name":"rt","roles":["codex"]}]`, ""}}
	lsOther := map[string]answer{"ls --json": {0, `[{"name":"rt","roles":["claude"]}]`, ""}}
	one, two := `{"hosts": {"box": {"ssh": "me@box"}}}`, `{"hosts": {"box": {"ssh": "me@box"}, "cox": {"ssh": "me@cox"}}}`
	tests := []struct {
		name     string
		config   string
		answers  map[string]answer
		fail     bool
		localErr error
		host     string
		wantErr  error
		inErr    string
		runs     int
	}{
		{"on one host", one, lsCodex, false, notHere, "box", nil, "", 1},
		{"on two hosts", two, lsCodex, false, notHere, "", roles.ErrAmbiguous, "(box, cox)", 2},
		{"on none", two, lsOther, false, notHere, "", roles.ErrNotFound, "", 2},
		{"a host that does not answer", one, nil, true, notHere, "", roles.ErrNotFound, "not looked at on box (HOST_UNREACHABLE)", 1},
		{"no host configured", `{}`, lsCodex, false, notHere, "", roles.ErrNotFound, "", 0},
		{"another local failure", one, lsCodex, false, roles.ErrAmbiguous, "", roles.ErrAmbiguous, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &remoteRunner{answers: tt.answers}
			if tt.fail {
				r.fail = &struct {
					exit   int
					stderr string
				}{255, "ssh: connect to host box port 22: Connection refused\n"}
			}
			env := localEnv(t, r, tt.config)
			host, err := roleElsewhere(ctx, env, "codex", tt.localErr)
			assert.Equal(t, tt.host, host)
			if tt.wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.ErrorContains(t, err, tt.inErr)
			}
			assert.Len(t, r.argv, tt.runs, "ssh runs")
		})
	}
}

// TestHostDash: a host's part of the dashboard is what party dash --once
// --json there printed; a host without a tmux server is online with no
// session; one that cannot be reached, or runs another version, is
// offline with the error table's code.
func TestHostDash(t *testing.T) {
	ctx := context.Background()
	h := hosts.Host{Name: "box", Dest: "me@box", Program: "party", Configured: true}
	tests := []struct {
		name     string
		answer   answer
		online   bool
		code     string
		sessions int
	}{
		{"its sessions", answer{0, `{"now":"2026-01-01T00:00:00Z","sessions":[{"name":"api","agents":[{"role":"codex","kind":"codex","pane":"%0","state":"busy"}]}]}`, ""}, true, "", 1},
		{"no tmux server there", answer{3, `{"error":{"code":"NO_SERVER","message":"no server"}}`, ""}, true, "", 0},
		{"another version there", answer{11, `{"error":{"code":"VERSION_MISMATCH","message":"the party there is v2"}}`, ""}, false, "VERSION_MISMATCH", 0},
		{"refused", answer{255, "", "ssh: connect to host box port 22: Connection refused\n"}, false, "HOST_UNREACHABLE", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &remoteRunner{answers: map[string]answer{"dash --once --local --json": tt.answer}}
			got := remoteCaller(localEnv(t, r, `{}`)).Dash(ctx, h)
			assert.Equal(t, tt.online, got.Online)
			assert.Len(t, got.Sessions, tt.sessions)
			if tt.code == "" {
				assert.Nil(t, got.Error)
				assert.False(t, got.Seen.IsZero())
				return
			}
			require.NotNil(t, got.Error)
			assert.Equal(t, tt.code, got.Error.Code)
			assert.True(t, got.Seen.IsZero())
		})
	}
}
