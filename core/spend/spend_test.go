package spend

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/config"
	"github.com/partyhq/party/core/usage"
)

// Lines as the pinned agents wrote them against the fake model (Claude Code
// 2.1.197, Codex 0.169.0, Gemini CLI 0.61.0), trimmed of fields party
// does not read.
const (
	claudeLine = `{"parentUuid":"4","isSidechain":false,"message":{"content":[{"text":"hi back","type":"text"}],"id":"msg_1","model":"claude-opus-4-8","role":"assistant","stop_reason":"end_turn","stop_sequence":null,"type":"message","usage":{"input_tokens":12,"cache_creation_input_tokens":3,"cache_read_input_tokens":5,"output_tokens":7,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard"}},"type":"assistant","uuid":"9b","timestamp":"2026-11-29T07:29:01.651Z","sessionId":"s-claude","version":"2.1.197"}`
	claudeUser = `{"type":"user","message":{"role":"user","content":"hello there"},"timestamp":"2026-11-29T07:29:01.400Z","sessionId":"s-claude"}`
	claudeErr  = `{"type":"assistant","message":{"id":"msg_e","model":"<synthetic>","role":"assistant","usage":{"input_tokens":0,"output_tokens":0}},"timestamp":"2026-11-29T07:29:02Z","sessionId":"s-claude"}`
	codexCtx   = `{"timestamp":"2026-11-29T07:29:16.647Z","ordinal":5,"type":"turn_context","payload":{"turn_id":"t1","cwd":"/w","model":"gpt-5.9-codex","approval_policy":"on-request"}}`
	codexUsage = `{"timestamp":"2026-11-29T07:29:01.523Z","ordinal":11,"type":"token_usage_record","payload":{"thread_id":"th1","turn_id":"t1","session_id":"th1","root_turn_id":"t1","response_id":"resp_1","usage":{"input_tokens":100,"cached_input_tokens":40,"cache_write_input_tokens":0,"output_tokens":30,"reasoning_output_tokens":10,"total_tokens":130},"turn_token_usage":{"input_tokens":100,"cached_input_tokens":40,"cache_write_input_tokens":0,"output_tokens":30,"reasoning_output_tokens":10,"total_tokens":130},"thread_token_usage":{"input_tokens":100,"cached_input_tokens":40,"cache_write_input_tokens":0,"output_tokens":30,"reasoning_output_tokens":10,"total_tokens":130}}}`
	codexCount = `{"timestamp":"2026-11-29T07:29:01.523Z","ordinal":12,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":30,"reasoning_output_tokens":10,"total_tokens":130},"last_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":30,"reasoning_output_tokens":10,"total_tokens":130}}}}`
	geminiHead = `{"sessionId":"s-gemini","projectHash":"3a","startTime":"2026-11-29T07:29:17.046Z","lastUpdated":"2026-11-29T07:29:17.046Z","kind":"main"}`
	geminiUser = `{"id":"u1","timestamp":"2026-11-29T07:29:18.379Z","type":"user","content":[{"text":"hello there"}]}`
	geminiLine = `{"id":"g1","timestamp":"2026-11-29T07:29:18.448Z","type":"gemini","content":"hi back","thoughts":[],"tokens":{"input":50,"output":9,"cached":20,"thoughts":4,"tool":2,"total":65},"model":"gemini-3.8-flash"}`
	geminiSet  = `{"$set":{"lastUpdated":"2026-11-29T07:29:18.448Z"}}`
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  agent.Kind
		lines []string
		want  []Response
	}{
		{"claude", agent.Claude, []string{claudeUser, claudeLine, claudeErr, "not json"}, []Response{{
			Time: at("2026-11-29T07:29:01.651Z"), Agent: agent.Claude, Session: "s-claude", ID: "msg_1", Model: "claude-opus-4-8",
			Tokens: Tokens{Input: 12, Output: 7, CacheRead: 5, CacheWrite: 3}}}},
		{"codex", agent.Codex, []string{codexCtx, codexUsage, codexCount}, []Response{{
			Time: at("2026-11-29T07:29:01.523Z"), Agent: agent.Codex, Session: "th1", ID: "resp_1", Model: "gpt-5.9-codex",
			Tokens: Tokens{Input: 60, Output: 20, CacheRead: 40, Reasoning: 10}}}},
		{"gemini", agent.Gemini, []string{geminiHead, geminiUser, geminiLine, geminiSet}, []Response{{
			Time: at("2026-11-29T07:29:18.448Z"), Agent: agent.Gemini, Session: "s-gemini", ID: "g1", Model: "gemini-3.8-flash",
			Tokens: Tokens{Input: 32, Output: 9, CacheRead: 20, Reasoning: 4}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := File{Agent: tc.kind}
			var got []Response
			for _, l := range tc.lines {
				if r, ok := f.Parse([]byte(l)); ok {
					got = append(got, r)
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
	// The totals the agents record are kept: Codex 130, Gemini 65.
	f := File{Agent: agent.Codex}
	f.Parse([]byte(codexCtx))
	r, _ := f.Parse([]byte(codexUsage))
	assert.Equal(t, int64(130), r.Total())
	g := File{Agent: agent.Gemini}
	r, _ = g.Parse([]byte(geminiLine))
	assert.Equal(t, int64(65), r.Total())
}

// team is a state dir with an event log naming a claude transcript, a
// gemini chat and a codex thread whose rollout is under the codex home.
type team struct {
	ledger                  Ledger
	claude, gemini, rollout string
}

func newTeam(t *testing.T) team {
	dir := t.TempDir()
	tm := team{
		ledger:  Ledger{Dir: filepath.Join(dir, "state", "spend"), Events: filepath.Join(dir, "state", "events.jsonl"), CodexHome: filepath.Join(dir, "codex")},
		claude:  filepath.Join(dir, "claude.jsonl"),
		gemini:  filepath.Join(dir, "gemini.jsonl"),
		rollout: filepath.Join(dir, "codex", "sessions", "2026", "11", "29", "rollout-2026-11-29T07-29-01-th1.jsonl"),
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(tm.rollout), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(tm.ledger.Events), 0o755))
	events := []map[string]string{
		{"role": "impl", "agent": "claude", "kind": "turn_done", "agent_session": "s-claude", "transcript": tm.claude},
		{"role": "rev", "agent": "codex", "kind": "turn_done", "agent_session": "th1"},
		{"role": "g", "agent": "gemini", "kind": "turn_done", "agent_session": "s-gemini", "transcript": tm.gemini},
	}
	for _, ev := range events {
		b, _ := json.Marshal(ev)
		appendLines(t, tm.ledger.Events, string(b))
	}
	return tm
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	require.NoError(t, err)
	for _, l := range lines {
		_, err = f.WriteString(l + "\n")
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
}

func sum(t *testing.T, l Ledger, by string) map[string]Tokens {
	t.Helper()
	rs, err := l.Sums(time.Time{})
	require.NoError(t, err)
	s, err := Totals(rs, by, time.Time{}, nil)
	require.NoError(t, err)
	out := map[string]Tokens{}
	for _, x := range s {
		out[x.Key] = x.Tokens
	}
	return out
}

func TestLedgerReadsOnlyWhatWasAdded(t *testing.T) {
	tm := newTeam(t)
	appendLines(t, tm.claude, claudeUser, claudeLine)
	appendLines(t, tm.gemini, geminiHead, geminiUser, geminiLine)
	require.NoError(t, tm.ledger.Scan())
	got := sum(t, tm.ledger, "role")
	assert.Equal(t, Tokens{Input: 12, Output: 7, CacheRead: 5, CacheWrite: 3}, got["/impl"])
	assert.Equal(t, Tokens{Input: 32, Output: 9, CacheRead: 20, Reasoning: 4}, got["/g"])
	assert.NotContains(t, got, "/rev", "codex's rollout does not exist yet")

	// Codex's rollout appears; claude repeats msg_1 for its second content
	// block (counted once) and writes half a line of the next message.
	appendLines(t, tm.rollout, codexCtx, codexUsage, codexCount)
	appendLines(t, tm.claude, claudeLine)
	f, err := os.OpenFile(tm.claude, os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	second := strings.ReplaceAll(claudeLine, "msg_1", "msg_2")
	_, err = f.WriteString(second[:40])
	require.NoError(t, err)
	require.NoError(t, tm.ledger.Scan())
	got = sum(t, tm.ledger, "role")
	assert.Equal(t, Tokens{Input: 12, Output: 7, CacheRead: 5, CacheWrite: 3}, got["/impl"], "msg_1 once; msg_2 not whole yet")
	assert.Equal(t, Tokens{Input: 60, Output: 20, CacheRead: 40, Reasoning: 10}, got["/rev"])

	_, err = f.WriteString(second[40:] + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, tm.ledger.Scan())
	assert.Equal(t, Tokens{Input: 24, Output: 14, CacheRead: 10, CacheWrite: 6}, sum(t, tm.ledger, "role")["/impl"])

	// Scanning again reads nothing new, and writes nothing; the ledger
	// holds each response once.
	before := ledgerFiles(t, tm.ledger)
	require.NoError(t, tm.ledger.Scan())
	assert.Equal(t, before, ledgerFiles(t, tm.ledger))
	rs, err := tm.ledger.Responses(time.Time{})
	require.NoError(t, err)
	assert.Len(t, rs, 4, "claude's repeated msg_1 counted once")
}

// ledgerFiles are the sizes and times of the ledger's files.
func ledgerFiles(t *testing.T, l Ledger) map[string]string {
	t.Helper()
	out := map[string]string{}
	paths, err := filepath.Glob(filepath.Join(l.Dir, "*"))
	require.NoError(t, err)
	for _, p := range paths {
		st, err := os.Stat(p)
		require.NoError(t, err)
		out[filepath.Base(p)] = fmt.Sprint(st.Size(), st.ModTime().UnixNano())
	}
	return out
}

func TestLedgerRewrittenRecord(t *testing.T) {
	tm := newTeam(t)
	long := strings.Repeat(claudeUser+"\n", 3) + claudeLine
	appendLines(t, tm.claude, long)
	require.NoError(t, tm.ledger.Scan())
	// The agent rewrites its transcript (compacted): shorter, msg_1 kept
	// and a new msg_3.
	third := strings.ReplaceAll(claudeLine, "msg_1", "msg_3")
	require.NoError(t, os.WriteFile(tm.claude, []byte(claudeLine+"\n"+third+"\n"), 0o644))
	require.NoError(t, tm.ledger.Scan())
	assert.Equal(t, Tokens{Input: 24, Output: 14, CacheRead: 10, CacheWrite: 6}, sum(t, tm.ledger, "role")["/impl"], "msg_1 once, msg_3 once")

	// Rewritten to the same length but other content: read again too.
	fourth := strings.ReplaceAll(strings.ReplaceAll(claudeLine, "msg_1", "msg_4"), `"sessionId":"s-claude"`, `"sessionId":"s-clauda"`)
	require.NoError(t, os.WriteFile(tm.claude, []byte(fourth+"\n"+third+"\n"), 0o644))
	require.NoError(t, tm.ledger.Scan())
	assert.Equal(t, Tokens{Input: 36, Output: 21, CacheRead: 15, CacheWrite: 9}, sum(t, tm.ledger, "role")["/impl"])
}

// An earlier party's ledger (responses.jsonl and offsets.json) moves into
// ledger.db at the first scan: a torn last line and garbage skipped, a
// response read twice counted once, what offsets.json says was read not
// read again; the old files go.
func TestLedgerTakesInAnEarlierPartysLedger(t *testing.T) {
	tm := newTeam(t)
	appendLines(t, tm.claude, claudeLine)
	require.NoError(t, os.MkdirAll(tm.ledger.Dir, 0o700))
	msg1 := `{"time":"2026-11-29T07:29:01.651Z","role":"impl","agent":"claude","session_id":"s-claude","id":"msg_1","model":"claude-opus-4-8","input":12,"output":7,"cache_read":5,"cache_write":3,"reasoning":0}`
	msg0 := strings.ReplaceAll(msg1, "msg_1", "msg_0")
	appendLines(t, filepath.Join(tm.ledger.Dir, responsesFile), msg0, msg1, msg1, "garbage")
	f, err := os.OpenFile(filepath.Join(tm.ledger.Dir, responsesFile), os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(`{"time":"2026-11-29T07:29:03Z","role":"impl","agent":"claude","session_id":"s-claude","id":"msg_9","inp`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	st, err := os.Stat(tm.claude)
	require.NoError(t, err)
	events, err := os.Stat(tm.ledger.Events)
	require.NoError(t, err)
	off := fmt.Sprintf(`{"events":%d,"files":{%q:{"role":"impl","offset":%d,"head":"","agent":"claude"}}}`, events.Size(), tm.claude, st.Size())
	require.NoError(t, os.WriteFile(filepath.Join(tm.ledger.Dir, offsetsFile), []byte(off), 0o600))

	require.NoError(t, tm.ledger.Scan())
	assert.Equal(t, Tokens{Input: 24, Output: 14, CacheRead: 10, CacheWrite: 6}, sum(t, tm.ledger, "role")["/impl"], "msg_0 and msg_1, each once")
	assert.NoFileExists(t, filepath.Join(tm.ledger.Dir, responsesFile))
	assert.NoFileExists(t, filepath.Join(tm.ledger.Dir, offsetsFile))

	// Offsets an earlier party could not read: everything read again,
	// counted once.
	tm = newTeam(t)
	appendLines(t, tm.claude, claudeLine)
	require.NoError(t, os.MkdirAll(tm.ledger.Dir, 0o700))
	appendLines(t, filepath.Join(tm.ledger.Dir, responsesFile), msg1)
	require.NoError(t, os.WriteFile(filepath.Join(tm.ledger.Dir, offsetsFile), []byte("{half"), 0o600))
	require.NoError(t, tm.ledger.Scan())
	assert.Equal(t, Tokens{Input: 12, Output: 7, CacheRead: 5, CacheWrite: 3}, sum(t, tm.ledger, "role")["/impl"])
}

// A ledger.db that is not a database is an error naming it, left as it
// is for someone to look at; a newer party's too.
func TestLedgerUnusable(t *testing.T) {
	tm := newTeam(t)
	require.NoError(t, os.MkdirAll(tm.ledger.Dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(tm.ledger.Dir, dbFile), []byte(strings.Repeat("not a database ", 100)), 0o600))
	err := tm.ledger.Scan()
	require.ErrorIs(t, err, ErrLedger)
	assert.Contains(t, err.Error(), dbFile)

	tm = newTeam(t)
	require.NoError(t, tm.ledger.Scan())
	db, err := tm.ledger.open()
	require.NoError(t, err)
	_, err = db.Exec("PRAGMA user_version = 9")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	err = tm.ledger.Scan()
	require.ErrorIs(t, err, ErrLedger)
	assert.Contains(t, err.Error(), "a newer party")
}

// Sums are whole quarter hours, and the responses of the quarter hour
// since falls in one by one: sums since any time are exact.
func TestSumsSince(t *testing.T) {
	tm := newTeam(t)
	var lines []string
	for i, ts := range []string{"10:05", "10:20", "10:40", "10:41"} {
		l := strings.ReplaceAll(claudeLine, "msg_1", fmt.Sprintf("msg_%d", i))
		lines = append(lines, strings.ReplaceAll(l, "07:29:01.651Z", ts+":00Z"))
	}
	appendLines(t, tm.claude, lines...)
	require.NoError(t, tm.ledger.Scan())
	for _, tc := range []struct {
		since string
		n     int
	}{{"", 4}, {"10:00", 4}, {"10:10", 3}, {"10:19", 3}, {"10:21", 2}, {"10:40", 2}, {"10:40:30", 1}, {"11:00", 0}} {
		since := time.Time{}
		if tc.since != "" {
			if len(tc.since) == 5 {
				tc.since += ":00"
			}
			since = at("2026-11-29T" + tc.since + "Z")
		}
		rs, err := tm.ledger.Sums(since)
		require.NoError(t, err)
		sums, err := Totals(rs, "role", since, nil)
		require.NoError(t, err)
		got := 0
		if len(sums) > 0 {
			got = sums[0].Responses
			assert.Equal(t, int64(tc.n)*27, sums[0].Total, "since %s", tc.since)
		}
		assert.Equal(t, tc.n, got, "since %s", tc.since)
	}
	rs, err := tm.ledger.Sums(time.Time{})
	require.NoError(t, err)
	assert.Len(t, rs, 3, "three quarter hours of one role, agent and model")
}

// A larger reading of a response takes the place of the smaller in the
// sums (Claude writes a message's usage with each content block, the
// last one whole).
func TestLargerReadingReplacesTheSmaller(t *testing.T) {
	tm := newTeam(t)
	bigger := strings.ReplaceAll(claudeLine, `"output_tokens":7`, `"output_tokens":70`)
	appendLines(t, tm.claude, claudeLine, bigger, claudeLine)
	require.NoError(t, tm.ledger.Scan())
	got := sum(t, tm.ledger, "role")["/impl"]
	assert.Equal(t, Tokens{Input: 12, Output: 70, CacheRead: 5, CacheWrite: 3}, got)
	rs, err := tm.ledger.Sums(time.Time{})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, 1, rs[0].Count)
}

// Scans of one ledger at once (party usage beside the supervisor's
// /metrics and the dashboard) count each response once.
func TestConcurrentScans(t *testing.T) {
	tm := newTeam(t)
	var lines []string
	for i := range 200 {
		lines = append(lines, strings.ReplaceAll(claudeLine, "msg_1", fmt.Sprintf("msg_%d", i)))
	}
	appendLines(t, tm.claude, lines...)
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- tm.ledger.Scan() }()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
	assert.Equal(t, Tokens{Input: 2400, Output: 1400, CacheRead: 1000, CacheWrite: 600}, sum(t, tm.ledger, "role")["/impl"])
}

func TestTotals(t *testing.T) {
	rs := []Response{
		{Time: at("2026-11-28T10:00:00Z"), Team: "a", Role: "x", Agent: agent.Claude, Model: "m1", Tokens: Tokens{Input: 1, Output: 1}},
		{Time: at("2026-11-29T10:00:00Z"), Team: "a", Role: "y", Agent: agent.Codex, Model: "m2", Tokens: Tokens{Input: 5}},
		{Time: at("2026-11-29T11:00:00Z"), Team: "b", Role: "x", Agent: agent.Gemini, Tokens: Tokens{Output: 2}},
	}
	got, err := Totals(rs, "model", time.Time{}, nil)
	require.NoError(t, err)
	assert.Equal(t, []Sum{{Key: "m2", Responses: 1, Tokens: Tokens{Input: 5}, Total: 5, NoPrice: []string{"m2"}},
		{Key: "m1", Responses: 1, Tokens: Tokens{Input: 1, Output: 1}, Total: 2, NoPrice: []string{"m1"}},
		{Key: "unknown", Responses: 1, Tokens: Tokens{Output: 2}, Total: 2, NoPrice: []string{"unknown"}}}, got)
	got, err = Totals(rs, "team", at("2026-11-29T00:00:00Z"), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, []string{got[0].Key, got[1].Key})
	_, err = Totals(rs, "colour", time.Time{}, nil)
	assert.ErrorIs(t, err, usage.Err)
}

func TestUsageAndTurnOf(t *testing.T) {
	tm := newTeam(t)
	appendLines(t, tm.claude, claudeLine)
	appendLines(t, tm.gemini, geminiHead, geminiLine)
	sums, err := Usage([]Team{{Name: "a", Ledger: tm.ledger, Unread: []string{"bot"}}}, "role", time.Time{}, nil)
	require.NoError(t, err)
	require.Len(t, sums, 3)
	assert.Equal(t, "a/g", sums[0].Key)
	assert.Equal(t, "a/impl", sums[1].Key)
	assert.Equal(t, Sum{Key: "a/bot", Unknown: true}, sums[2], "a program without usage is unknown, not 0")
	sums, err = Usage([]Team{{Name: "a", Ledger: tm.ledger, Unread: []string{"bot"}}}, "model", time.Time{}, nil)
	require.NoError(t, err)
	assert.Len(t, sums, 2, "unknown roles only by role")

	rs, err := tm.ledger.Responses(time.Time{})
	require.NoError(t, err)
	turn := TurnOf(rs, "impl", at("2026-11-29T07:29:01.600Z"))
	require.NotNil(t, turn)
	assert.Equal(t, &Turn{Responses: 1, Models: []string{"claude-opus-4-8"}, Tokens: Tokens{Input: 12, Output: 7, CacheRead: 5, CacheWrite: 3}, Ended: true}, turn)
	assert.Nil(t, TurnOf(rs, "impl", at("2026-11-29T07:29:02Z")), "a turn that began after the response")
	assert.Nil(t, TurnOf(rs, "nobody", time.Time{}))
}

func TestCost(t *testing.T) {
	rs := []Response{
		{Role: "x", Model: "m1", Tokens: Tokens{Input: 1_000_000, Output: 500_000, Reasoning: 500_000, CacheRead: 2_000_000, CacheWrite: 1_000_000}},
		{Role: "x", Model: "m1", Tokens: Tokens{Input: 1_000_000}},
		{Role: "y", Model: "m1", Tokens: Tokens{Input: 1_000_000}},
		{Role: "y", Model: "m9", Tokens: Tokens{Input: 1_000_000}},
	}
	all := config.PriceInput | config.PriceOutput | config.PriceCacheRead | config.PriceCacheWrite
	prices := Prices{"m1": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75, Set: all}}
	got, err := Totals(rs, "role", time.Time{}, prices)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.NotNil(t, got[0].Cost)
	assert.InDelta(t, 3+15+0.6+3.75+3, *got[0].Cost, 1e-9, "reasoning priced as output")
	assert.Nil(t, got[1].Cost, "a model without a price: no cost, never a guess")
	assert.Equal(t, []string{"m9"}, got[1].NoPrice)

	// Only input priced: a response with output has no price, one without
	// output does.
	prices = Prices{"m1": {Input: 3, Set: config.PriceInput}}
	got, err = Totals(rs[:2], "role", time.Time{}, prices)
	require.NoError(t, err)
	assert.Nil(t, got[0].Cost, "output tokens of a model whose output has no price")
	got, err = Totals(rs[1:2], "role", time.Time{}, prices)
	require.NoError(t, err)
	require.NotNil(t, got[0].Cost)
	assert.InDelta(t, 3.0, *got[0].Cost, 1e-9)
}

func TestCounters(t *testing.T) {
	rs := []Response{
		{Role: "x", Agent: agent.Claude, Model: "m1", Tokens: Tokens{Input: 1_000_000, Output: 1_000_000}},
		{Role: "y", Agent: agent.Codex, Model: "m2", Tokens: Tokens{Input: 5, Reasoning: 2}},
		{Role: "x", Agent: agent.Claude, Model: "m1", Tokens: Tokens{Input: 1_000_000, CacheRead: 7}},
		{Role: "x", Agent: agent.Claude, Tokens: Tokens{Output: 3}},
	}
	prices := Prices{"m1": {Input: 3, Output: 15, CacheRead: 0.3, Set: config.PriceInput | config.PriceOutput | config.PriceCacheRead}}
	got := Counters(rs, prices)
	require.Len(t, got, 3)
	assert.Equal(t, Counter{Role: "x", Agent: agent.Claude, Model: "m1", Tokens: Tokens{Input: 2_000_000, Output: 1_000_000, CacheRead: 7}, Cost: got[0].Cost}, got[0])
	require.NotNil(t, got[0].Cost)
	assert.InDelta(t, 6+15+7*0.3/1e6, *got[0].Cost, 1e-9)
	assert.Equal(t, Counter{Role: "y", Agent: agent.Codex, Model: "m2", Tokens: Tokens{Input: 5, Reasoning: 2}}, got[1], "no price: no cost")
	assert.Equal(t, "unknown", got[2].Model)
	assert.Nil(t, got[2].Cost)
}

func TestClaudeMessageCountedOnceAcrossSessions(t *testing.T) {
	tm := newTeam(t)
	forked := strings.ReplaceAll(claudeLine, `"sessionId":"s-claude"`, `"sessionId":"s-fork"`)
	appendLines(t, tm.claude, claudeLine, forked)
	require.NoError(t, tm.ledger.Scan())
	rs, err := tm.ledger.Responses(time.Time{})
	require.NoError(t, err)
	assert.Len(t, rs, 1, "a forked session repeats the message under another session id")
}

func TestTurnEnded(t *testing.T) {
	tool := strings.ReplaceAll(strings.ReplaceAll(claudeLine, `"stop_reason":"end_turn"`, `"stop_reason":"tool_use"`), "msg_1", "msg_0")
	tool = strings.ReplaceAll(tool, "07:29:01.651Z", "07:29:01.500Z")
	f := File{Agent: agent.Claude}
	r0, ok := f.Parse([]byte(tool))
	require.True(t, ok)
	assert.True(t, r0.More)
	r1, _ := f.Parse([]byte(claudeLine))
	r0.Role, r1.Role = "x", "x"
	turn := TurnOf([]Response{r0}, "x", time.Time{})
	require.NotNil(t, turn)
	assert.False(t, turn.Ended, "the tool's response only: the turn's end is not written yet")
	turn = TurnOf([]Response{r0, r1}, "x", time.Time{})
	assert.True(t, turn.Ended)
	assert.Equal(t, 2, turn.Responses)
}

func TestBudgets(t *testing.T) {
	now := at("2026-11-29T12:00:00Z")
	rs := []Response{
		{Time: at("2026-11-28T12:00:00Z"), Role: "x", Model: "m", Tokens: Tokens{Input: 600}},
		{Time: at("2026-11-29T11:00:00Z"), Role: "x", Model: "m", Tokens: Tokens{Input: 300, Output: 100}},
		{Time: at("2026-11-29T11:30:00Z"), Role: "y", Model: "n", Tokens: Tokens{Input: 50}},
	}
	prices := Prices{"m": {Input: 1000, Output: 1000, Set: config.PriceInput | config.PriceOutput}}
	b := config.Budget{RoleTokens: 1000, SessionTokens: 2000, DayTokens: 400, RoleUSD: 2}
	got := Budgets(rs, "t", []string{"x", "y"}, b, prices, now)
	today := now.Local().Format(time.DateOnly)
	assert.Equal(t, []Limit{
		{Key: "budget.roleTokens", Scope: "t/x", Role: "x", Unit: "tokens", Limit: 1000, Spent: 1000, Left: 0},
		{Key: "budget.roleUSD", Scope: "t/x", Role: "x", Unit: "usd", Limit: 2, Spent: 1, Left: 1},
		{Key: "budget.roleTokens", Scope: "t/y", Role: "y", Unit: "tokens", Limit: 1000, Spent: 50, Left: 950},
		{Key: "budget.roleUSD", Scope: "t/y", Role: "y", Unit: "usd", Limit: 2, Spent: 0, Left: 2},
		{Key: "budget.sessionTokens", Scope: "t", Unit: "tokens", Limit: 2000, Spent: 1050, Left: 950},
		{Key: "budget.dayTokens", Scope: "t " + today, Unit: "tokens", Limit: 400, Spent: 450, Left: -50},
	}, got)
	l, ok := Reached(got, "x")
	require.True(t, ok)
	assert.Equal(t, "t/x spent 1000 of its 1000 tokens (budget.roleTokens)", l.String())
	l, ok = Reached(got, "y")
	require.True(t, ok, "the day's budget bounds every role")
	assert.Equal(t, "budget.dayTokens", l.Key)
	assert.Empty(t, Budgets(rs, "t", []string{"x"}, config.Budget{}, prices, now), "no budget set")

	// A role's own budget takes the team's place for it; another role
	// keeps the team's; a role with its own and no team's has one.
	b = config.Budget{RoleTokens: 1000, Roles: map[string]config.RoleBudget{"x": {Tokens: 5000}, "z": {USD: 3}}}
	got = Budgets(rs, "t", []string{"x", "y", "z"}, b, prices, now)
	assert.Equal(t, []Limit{
		{Key: "roleBudget.x.tokens", Scope: "t/x", Role: "x", Unit: "tokens", Limit: 5000, Spent: 1000, Left: 4000},
		{Key: "budget.roleTokens", Scope: "t/y", Role: "y", Unit: "tokens", Limit: 1000, Spent: 50, Left: 950},
		{Key: "budget.roleTokens", Scope: "t/z", Role: "z", Unit: "tokens", Limit: 1000, Spent: 0, Left: 1000},
		{Key: "roleBudget.z.usd", Scope: "t/z", Role: "z", Unit: "usd", Limit: 3, Spent: 0, Left: 3},
	}, got)
	_, ok = Reached(got, "x")
	assert.False(t, ok, "x's own budget is larger than the team's")
	assert.False(t, b.None())
	assert.True(t, config.Budget{}.None())
}
