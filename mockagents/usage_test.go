package mockagents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usageScript's first rule is a turn of two model responses: one that
// says something and calls a tool (its usage set by a step after its
// say: it counts for the whole response), then one with the default
// usage. The second names a model.
const usageScript = `on /tool/
  say first part
  usage input=1200 output=340 cache_read=100 cache_write=50 reasoning=20
  run echo ran
  say second part
on /model/
  usage model=big-model
  say plain answer
`

const usageSession = "5e551011-aaaa-4bbb-8ccc-0123456789ab"

// usageTurns runs usageScript's two turns on persona and returns the
// lines of the record file found by pattern (relative to HOME).
func usageTurns(t *testing.T, persona, pattern string) [][]byte {
	t.Helper()
	var lines [][]byte
	inBubble(t, func(t *testing.T) {
		home := inTempDir(t)
		t.Setenv("CODEX_HOME", "")
		t.Setenv("GEMINI_CLI_HOME", "")
		t.Setenv("PARTY_MOCK_SESSION_ID", usageSession)
		opt := DefaultOptions(persona)
		opt.StartDelay = 0
		m := startMock(t, opt, usageScript)
		time.Sleep(time.Second)
		m.send("use the tool")
		time.Sleep(time.Second)
		m.send("\r")
		m.expect("second part")
		time.Sleep(2 * time.Second)
		m.send("which model")
		time.Sleep(time.Second)
		m.send("\r")
		m.expect("plain answer")
		time.Sleep(2 * time.Second)
		files, err := filepath.Glob(filepath.Join(home, pattern))
		require.NoError(t, err)
		require.Len(t, files, 1, "one record file %s", pattern)
		b, err := os.ReadFile(files[0])
		require.NoError(t, err)
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			lines = append(lines, []byte(l))
		}
		if persona == "gemini" {
			assert.Equal(t, files[0], geminiChatPath(usageSession), "the hooks' transcript_path")
			assert.Regexp(t, `/\.gemini/tmp/[a-z0-9-]+/chats/session-\d{4}-\d\d-\d\dT\d\d-\d\d-5e551011\.jsonl$`, files[0])
		}
	})
	return lines
}

func decode(t *testing.T, line []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(line, &m), string(line))
	return m
}

// claudeUsageJSON is the usage of an assistant entry as Claude Code
// 2.1.197 writes it (measured against the fake model), with these counts.
func claudeUsageJSON(in, cacheWrite, cacheRead, out int) string {
	return fmt.Sprintf(`{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d,`+
		`"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard",`+
		`"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard"}`,
		in, cacheWrite, cacheRead, out)
}

// Claude writes an assistant entry per content block, each with its
// response's message id and usage: the text and the tool_use of one
// response repeat them, so only a reader that counts a message id once
// gets the tokens right.
func TestClaudeTranscriptUsage(t *testing.T) {
	lines := usageTurns(t, "claude", ".claude/projects/*/"+usageSession+".jsonl")
	type entry struct {
		id, model, stop, block, usage string
	}
	var got []entry
	var toolUse string
	var results []string
	for _, l := range lines {
		e := decode(t, l)
		msg, _ := e["message"].(map[string]any)
		switch e["type"] {
		case "assistant":
			require.Len(t, msg["content"], 1, "one block an entry")
			block := msg["content"].([]any)[0].(map[string]any)
			kind := block["type"].(string)
			if kind == "text" {
				kind += ":" + block["text"].(string)
			} else {
				toolUse = block["id"].(string)
				assert.Equal(t, "Bash", block["name"])
			}
			var raw struct {
				Message struct {
					Usage json.RawMessage `json:"usage"`
				} `json:"message"`
			}
			require.NoError(t, json.Unmarshal(l, &raw))
			usage := raw.Message.Usage // as written: the real one's key order
			for _, k := range []string{"role", "type", "stop_sequence", "stop_details"} {
				assert.Contains(t, msg, k)
			}
			got = append(got, entry{msg["id"].(string), msg["model"].(string), msg["stop_reason"].(string), kind, string(usage)})
		case "user":
			if blocks, ok := msg["content"].([]any); ok {
				r := blocks[0].(map[string]any)
				assert.Equal(t, "tool_result", r["type"])
				results = append(results, r["tool_use_id"].(string))
			}
		}
	}
	require.Len(t, got, 4)
	first, second, third := got[0].id, got[2].id, got[3].id
	assert.Regexp(t, `^msg_`, first)
	assert.Equal(t, []entry{
		{first, "claude-mock", "tool_use", "text:first part", claudeUsageJSON(1200, 50, 100, 340)},
		{first, "claude-mock", "tool_use", "tool_use", claudeUsageJSON(1200, 50, 100, 340)},
		{second, "claude-mock", "end_turn", "text:second part", claudeUsageJSON(12, 0, 0, 2)},
		{third, "big-model", "end_turn", "text:plain answer", claudeUsageJSON(12, 0, 0, 3)},
	}, got, "Claude has no reasoning count; the default output is a quarter of the text's bytes")
	assert.NotEqual(t, first, second, "the response after the tool is another message")
	assert.NotEqual(t, second, third)
	assert.Equal(t, []string{toolUse}, results, "the tool's result follows its tool_use")

	// Counting every entry counts the tool's response twice.
	var perEntry, perMessage int
	seen := map[string]bool{}
	for _, e := range got {
		var u struct {
			Input int `json:"input_tokens"`
		}
		require.NoError(t, json.Unmarshal([]byte(e.usage), &u))
		perEntry += u.Input
		if !seen[e.id] {
			seen[e.id] = true
			perMessage += u.Input
		}
	}
	assert.Equal(t, 1224, perMessage)
	assert.Equal(t, 2424, perEntry)
}

func codexUsageJSON(in, cached, cacheWrite, out, reasoning int) string {
	return fmt.Sprintf(`{"input_tokens":%d,"cached_input_tokens":%d,"cache_write_input_tokens":%d,"output_tokens":%d,`+
		`"reasoning_output_tokens":%d,"total_tokens":%d}`, in, cached, cacheWrite, out, reasoning, in+out)
}

// Codex records per model response a token_usage_record (the response's
// usage, the turn's and the thread's sums) and an event_msg token_count
// (the thread's sums and the response's), before task_complete; after a
// tool call the token_count comes once the tool's output is in. Each
// turn's turn_context names its model.
func TestCodexRolloutUsage(t *testing.T) {
	lines := usageTurns(t, "codex", ".codex/sessions/*/*/*/rollout-*.jsonl")
	var kinds []string
	for i, l := range lines {
		e := decode(t, l)
		assert.Equal(t, float64(i), e["ordinal"], "ordinals count the records from 0")
		assert.Regexp(t, `^\{"timestamp":"[^"]+","ordinal":\d+,"type":`, string(l), "the real one's key order")
		p := e["payload"].(map[string]any)
		kind := e["type"].(string)
		if t, ok := p["type"].(string); ok {
			kind += ":" + t
		}
		if it, ok := p["item"].(map[string]any); ok {
			kind += ":" + it["type"].(string)
		}
		kinds = append(kinds, kind)
	}
	assert.Equal(t, []string{
		"session_meta",
		"event_msg:task_started", "turn_context", "event_msg:item_completed:UserMessage",
		"event_msg:item_completed:AgentMessage", "response_item:function_call", "token_usage_record",
		"response_item:function_call_output", "event_msg:token_count",
		"event_msg:item_completed:AgentMessage", "token_usage_record", "event_msg:token_count", "event_msg:task_complete",
		"event_msg:task_started", "turn_context", "event_msg:item_completed:UserMessage",
		"event_msg:item_completed:AgentMessage", "token_usage_record", "event_msg:token_count", "event_msg:task_complete",
	}, kinds)

	payload := func(i int) map[string]any { return decode(t, lines[i])["payload"].(map[string]any) }
	turn1, turn2 := payload(1)["turn_id"].(string), payload(13)["turn_id"].(string)
	assert.Equal(t, "gpt-mock", payload(2)["model"])
	assert.Equal(t, turn1, payload(2)["turn_id"])
	assert.Equal(t, "big-model", payload(14)["model"], "the model a usage step names")

	thread := payload(0)["id"].(string)
	record := func(turn string, usage, turnSum, threadSum string) string {
		return fmt.Sprintf(`{"thread_id":%q,"turn_id":%q,"session_id":%q,"root_turn_id":%q,"usage":%s,"turn_token_usage":%s,"thread_token_usage":%s}`,
			thread, turn, thread, turn, usage, turnSum, threadSum)
	}
	count := func(threadSum, usage string) string {
		return `{"type":"token_count","info":{"total_token_usage":` + threadSum + `,"last_token_usage":` + usage +
			`,"last_usage_includes_reasoning":false,"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,` +
			`"primary":null,"secondary":null,"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}`
	}
	withoutResponseID := func(i int) string {
		p := payload(i)
		assert.Regexp(t, `^resp_[0-9a-f]{16}$`, p["response_id"])
		delete(p, "response_id")
		b, err := json.Marshal(p)
		require.NoError(t, err)
		return string(b)
	}
	tool := codexUsageJSON(1200, 100, 50, 340, 20)
	after := codexUsageJSON(12, 0, 0, 2, 0)
	turn1Sum := codexUsageJSON(1212, 100, 50, 342, 20)
	last := codexUsageJSON(12, 0, 0, 3, 0)
	threadSum := codexUsageJSON(1224, 100, 50, 345, 20)
	assert.JSONEq(t, record(turn1, tool, tool, tool), withoutResponseID(6))
	assert.JSONEq(t, count(tool, tool), string(mustJSON(t, payload(8))))
	assert.JSONEq(t, record(turn1, after, turn1Sum, turn1Sum), withoutResponseID(10))
	assert.JSONEq(t, count(turn1Sum, after), string(mustJSON(t, payload(11))))
	assert.JSONEq(t, record(turn2, last, last, threadSum), withoutResponseID(17), "the turn's sum starts again, the thread's goes on")
	assert.JSONEq(t, count(threadSum, last), string(mustJSON(t, payload(18))))
	assert.Equal(t, "first part", payload(4)["item"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"])
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// Gemini records per model response a "gemini" record with its tokens and
// model; one that called a tool is written again, the same id, with its
// toolCalls once the result is in.
func TestGeminiChatUsage(t *testing.T) {
	lines := usageTurns(t, "gemini", ".gemini/tmp/*/chats/session-*.jsonl")
	meta := decode(t, lines[0])
	assert.Equal(t, usageSession, meta["sessionId"])
	assert.Equal(t, "main", meta["kind"])
	assert.Regexp(t, `^[0-9a-f]{64}$`, meta["projectHash"])

	var kinds []string
	var records []map[string]any
	tokens := regexp.MustCompile(`"tokens":\{[^}]*\}`)
	var rawTokens []string
	for _, l := range lines[1:] {
		e := decode(t, l)
		if _, ok := e["$set"]; ok {
			kinds = append(kinds, "$set")
			continue
		}
		kind := e["type"].(string)
		if _, ok := e["toolCalls"]; ok {
			kind += "+toolCalls"
		}
		kinds = append(kinds, kind)
		if e["type"] == "gemini" {
			records = append(records, e)
			rawTokens = append(rawTokens, tokens.FindString(string(l)))
		}
	}
	assert.Equal(t, []string{"user", "$set", "gemini", "$set", "gemini+toolCalls", "user", "$set", "gemini", "$set",
		"user", "$set", "gemini", "$set"}, kinds)
	require.Len(t, records, 4)
	assert.Equal(t, records[0]["id"], records[1]["id"], "the tool's response again, with its call")
	assert.Equal(t, []string{
		`"tokens":{"input":1200,"output":340,"cached":100,"thoughts":20,"tool":0,"total":1560}`,
		`"tokens":{"input":1200,"output":340,"cached":100,"thoughts":20,"tool":0,"total":1560}`,
		`"tokens":{"input":12,"output":2,"cached":0,"thoughts":0,"tool":0,"total":14}`,
		`"tokens":{"input":12,"output":3,"cached":0,"thoughts":0,"tool":0,"total":15}`,
	}, rawTokens, "Gemini has no cache-write count; its total counts the thoughts")
	var models, texts []string
	for _, r := range records {
		models = append(models, r["model"].(string))
		texts = append(texts, r["content"].(string))
		assert.Equal(t, []any{}, r["thoughts"])
	}
	assert.Equal(t, []string{"gemini-mock", "gemini-mock", "gemini-mock", "big-model"}, models)
	assert.Equal(t, []string{"first part", "first part", "second part", "plain answer"}, texts)
	call := records[1]["toolCalls"].([]any)[0].(map[string]any)
	assert.Equal(t, "run_shell_command", call["name"])
	assert.Equal(t, "success", call["status"])
}
