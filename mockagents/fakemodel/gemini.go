package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/partyhq/party/mockagents/script"
)

// gemini is the Gemini API as Gemini CLI uses it.
type gemini struct{}

func (gemini) decode(body []byte, r *http.Request) (request, error) {
	var m struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             *string `json:"text"`
				Thought          bool    `json:"thought"`
				FunctionResponse *struct {
					ID       string          `json:"id"`
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		GenerationConfig struct {
			ResponseMimeType string          `json:"responseMimeType"`
			Schema           json.RawMessage `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return request{}, fmt.Errorf("generateContent request: %w", err)
	}
	path := r.URL.Path
	model := path[strings.LastIndex(path, "/")+1:]
	model, _, _ = strings.Cut(model, ":")
	req := request{agent: "gemini", stream: strings.HasSuffix(path, ":streamGenerateContent"), model: model}
	if n := len(m.Contents); n > 0 && m.Contents[n-1].Role == "user" {
		for _, p := range m.Contents[n-1].Parts {
			switch {
			case p.FunctionResponse != nil:
				req.toolID, req.toolResult = p.FunctionResponse.ID, string(p.FunctionResponse.Response)
				if req.toolID == "" {
					req.toolID = "gemini"
				}
			case p.Text != nil && !p.Thought && !strings.HasPrefix(*p.Text, "<session_context>"):
				req.texts = append(req.texts, *p.Text)
			}
		}
	}
	// The router and the next-speaker check ask for JSON; turns never do.
	if m.GenerationConfig.ResponseMimeType == "application/json" {
		req.side = "classifier"
		req.schema = m.GenerationConfig.Schema
	}
	return req, nil
}

func (gemini) sideAnswer(w http.ResponseWriter, req request, body []byte) answer {
	// Answer every classifier at once, in the shape its schema asks for.
	var schema map[string]any
	_ = json.Unmarshal(req.schema, &schema)
	b, _ := json.Marshal(fillSchema(schema))
	a := gemini{}.open(w, req, script.Usage{})
	_ = a.text(string(b))
	_ = a.end()
	return a
}

func (gemini) errorStatus(w http.ResponseWriter, status int, msg string) {
	state := "INTERNAL"
	switch status {
	case 400:
		state = "INVALID_ARGUMENT"
	case 429:
		state = "RESOURCE_EXHAUSTED"
	case 503:
		state = "UNAVAILABLE"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": state}})
}

func (gemini) open(w http.ResponseWriter, req request, u script.Usage) answer {
	a := &geminiAnswer{w: w, stream: req.stream, model: req.model, u: u}
	if u.Model != "" {
		a.model = u.Model
	}
	if a.stream {
		sseHeaders(w)
	}
	return a
}

type geminiAnswer struct {
	w      http.ResponseWriter
	stream bool
	model  string
	u      script.Usage
	all    strings.Builder
}

// usage: the Gemini API counts the cached input in promptTokenCount and
// has no count of what was written to the cache.
func (a *geminiAnswer) usage() (script.Tokens, string) {
	t := a.u.Tokens(a.all.String())
	t.CacheWrite = 0
	return t, a.model
}

// usageMetadata is the usage so far in the Gemini API's fields; the
// total counts the thoughts, which candidatesTokenCount does not.
func (a *geminiAnswer) usageMetadata() map[string]any {
	t, _ := a.usage()
	m := map[string]any{"promptTokenCount": t.Input, "candidatesTokenCount": t.Output,
		"totalTokenCount": t.Input + t.Output + t.Reasoning}
	if t.CacheRead > 0 {
		m["cachedContentTokenCount"] = t.CacheRead
	}
	if t.Reasoning > 0 {
		m["thoughtsTokenCount"] = t.Reasoning
	}
	return m
}

func (a *geminiAnswer) chunk(parts []any, finish string) error {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": a.model, "usageMetadata": a.usageMetadata()}
	if !a.stream {
		writeJSON(a.w, http.StatusOK, resp)
		return nil
	}
	return sse(a.w, "", resp)
}

func (a *geminiAnswer) text(s string) error {
	a.all.WriteString(s)
	if !a.stream {
		return nil
	}
	return a.chunk([]any{map[string]any{"text": s}}, "")
}

func (a *geminiAnswer) tool(id, cmd string) error {
	return a.call(id, "run_shell_command", map[string]any{"command": cmd, "description": "The fake model asks to run " + cmd})
}

func (a *geminiAnswer) call(id, name string, input map[string]any) error {
	call := map[string]any{"functionCall": map[string]any{"id": id, "name": name, "args": input}}
	if !a.stream {
		return a.chunk(append(a.final(), call), "STOP")
	}
	return a.chunk([]any{call}, "STOP")
}

// final is the whole answer's text as parts, for a non-streaming answer.
func (a *geminiAnswer) final() []any {
	if a.all.Len() == 0 {
		return nil
	}
	return []any{map[string]any{"text": a.all.String()}}
}

func (a *geminiAnswer) end() error {
	if !a.stream {
		return a.chunk(a.final(), "STOP")
	}
	return a.chunk([]any{map[string]any{"text": ""}}, "STOP")
}

func (a *geminiAnswer) fail(kind string) error {
	if !a.stream {
		gemini{}.errorStatus(a.w, 500, "fakemodel: scripted failure "+kind)
		return nil
	}
	return sse(a.w, "", map[string]any{"error": map[string]any{"code": 500, "message": "fakemodel: scripted failure " + kind, "status": "INTERNAL"}})
}

// geminiModels answers the model list and model lookups.
func geminiModels(w http.ResponseWriter, path string) {
	model := func(name string) map[string]any {
		return map[string]any{"name": "models/" + name, "displayName": name, "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
			"supportedGenerationMethods": []string{"generateContent", "streamGenerateContent", "countTokens"}}
	}
	if name := strings.TrimPrefix(path, "/v1beta/models/"); name != path && name != "" {
		writeJSON(w, http.StatusOK, model(name))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": []any{model("gemini-2.5-pro"), model("gemini-2.5-flash"), model("gemini-2.5-flash-lite")}})
}

// fillSchema makes a small value that satisfies a JSON schema: the lowest
// number, a short string, the first enum value (the user's turn when the
// enum names one), every required property.
func fillSchema(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		for _, v := range enum {
			if v == "user" {
				return v
			}
		}
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			ps, _ := p.(map[string]any)
			out[name] = fillSchema(ps)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		if m, ok := schema["minimum"].(float64); ok {
			return m
		}
		return 1
	case "boolean":
		return false
	}
	return "fakemodel"
}
