package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PermissionPrompt is the Type of a Notification event that says the agent
// waits for a permission (Claude's permission_prompt, Gemini's
// ToolPermission).
const PermissionPrompt = "permission_prompt"

// GeminiNoResponse is the prompt_response of Gemini's AfterAgent when the
// turn produced no text: the model request failed (HTTP 400, retries
// exhausted).
const GeminiNoResponse = "[no response text]"

// geminiPayload is the JSON Gemini CLI gives every hook on stdin.
type geminiPayload struct {
	SessionID     string `json:"session_id"`
	Transcript    string `json:"transcript_path"`
	HookEventName string `json:"hook_event_name"`
	Prompt        string `json:"prompt"`
	Response      string `json:"prompt_response"`
	NotifType     string `json:"notification_type"`
	Message       string `json:"message"`
	Details       struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Command string `json:"command"`
	} `json:"details"`
	Source string `json:"source"`
}

// FromGemini reads a Gemini CLI hook payload: BeforeAgent is a submission
// (a merged queue arrives as one prompt), AfterAgent ends the turn with
// the raw model text (GeminiNoResponse: a failed turn), Notification
// ToolPermission is a permission prompt.
func FromGemini(payload []byte) (Event, error) {
	var p geminiPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return Event{}, fmt.Errorf("gemini hook: %w: %v", ErrPayload, err)
	}
	e := Event{Agent: "gemini", Raw: p.HookEventName, Session: p.SessionID}
	switch p.HookEventName {
	case "AfterAgent":
		e.Transcript = p.Transcript
	}
	switch p.HookEventName {
	case "BeforeAgent":
		e.Kind, e.Prompts = PromptSubmit, []string{p.Prompt}
	case "AfterAgent":
		e.Prompts = []string{p.Prompt}
		if p.Response == GeminiNoResponse {
			e.Kind, e.Type, e.Message = TurnFailed, "error", "Gemini's turn ended with no response text (the model request failed; the error is on its screen)"
			break
		}
		e.Kind, e.Answer = TurnComplete, p.Response
	case "Notification":
		e.Kind, e.Type, e.Message = Notification, p.NotifType, p.Message
		if p.NotifType == "ToolPermission" {
			e.Type, e.Command = PermissionPrompt, p.Details.Command
		}
	case "SessionStart":
		e.Kind = SessionStart
	case "":
		return Event{}, fmt.Errorf("gemini hook: %w: no hook_event_name", ErrPayload)
	default:
		e.Kind = strings.ToLower(p.HookEventName)
	}
	return e, nil
}

// GeminiTranscriptAnswer reads the answer of the last turn from Gemini's
// transcript (the chat recording, JSON lines): the text of the model
// messages after the last user message, joined by newlines as Gemini joins
// a turn's model calls. AfterAgent's prompt_response is not the raw text
// when the model streamed it in several chunks: Gemini 0.61 joins the
// chunks' texts with spaces after its history consolidation appended every
// later chunk to the first one in place (geminiChat.ts, turn.ts
// getResponseText), so "a\nb" streamed as "a", "\nb" arrives as
// "a\nb \nb". ok is false when the transcript has no model text for the
// turn. Only the last 8 MiB of the file are read.
func GeminiTranscriptAnswer(path string) (answer string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	const tail = 8 << 20
	st, err := f.Stat()
	if err != nil {
		return "", false
	}
	off := max(0, st.Size()-tail)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return "", false
	}
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	var texts []string
	seenUser := false
	for _, line := range bytes.Split(buf, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"type"`)) {
			continue
		}
		var m struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Type {
		case "user":
			texts, seenUser = nil, true
		case "gemini":
			var s string
			if json.Unmarshal(m.Content, &s) == nil && s != "" {
				texts = append(texts, s)
			}
		}
	}
	if !seenUser || len(texts) == 0 {
		return "", false
	}
	return strings.Join(texts, "\n"), true
}

// geminiEntries are the hooks party puts in Gemini's settings: only what a
// wait needs, since Gemini runs hooks synchronously.
var geminiEntries = []claudeEntry{{event: "BeforeAgent"}, {event: "AfterAgent"}, {event: "Notification"}}

// GeminiHookTimeout is the timeout (ms) of party's Gemini hooks; party
// hook returns in milliseconds, Gemini's default is 60 s.
const GeminiHookTimeout = 5000

// GeminiHookName is the name of party's Gemini hooks (Gemini shows it in
// its warnings instead of the command).
const GeminiHookName = "party"

// MergeGeminiSettings merges party's Gemini hooks (BeforeAgent, AfterAgent,
// Notification), each running command, into the Gemini CLI settings
// document existing, the way MergeClaudeSettings does for Claude: every
// other key and hook is kept in order, party's own are updated in place,
// and merging twice reports changed false. Gemini accepts comments in its
// settings; a document with comments is refused (ErrSettings) rather than
// rewritten without them.
func MergeGeminiSettings(existing []byte, command string) (merged []byte, changed bool, err error) {
	if err := noComments(existing); err != nil {
		return nil, false, err
	}
	extra := object{{"name", jsonString(GeminiHookName)}, {"timeout", json.RawMessage(fmt.Sprint(GeminiHookTimeout))}}
	return mergeSettings(existing, geminiEntries, command, func(c string) bool { return isPartyHook(c, command, "gemini") }, extra)
}

// RemoveGeminiSettings removes party's Gemini hooks (command, or any
// "party hook gemini") from the settings document existing, with the
// groups, events and hooks object they leave empty. empty reports that
// nothing but an empty object is left.
func RemoveGeminiSettings(existing []byte, command string) (out []byte, changed, empty bool, err error) {
	doc, err := settingsToEdit(existing)
	if err != nil {
		return nil, false, false, err
	}
	if doc == nil {
		return existing, false, true, nil
	}
	raw, ok := doc.get("hooks")
	if !ok || isNull(raw) {
		return existing, false, len(doc) == 0, nil
	}
	hooks, err := parseObject(raw)
	if err != nil {
		return nil, false, false, fmt.Errorf("hooks: %w", err)
	}
	isParty := func(c string) bool { return isPartyHook(c, command, "gemini") }
	for _, m := range slicesClone(hooks) {
		var groups []json.RawMessage
		if json.Unmarshal(m.value, &groups) != nil {
			continue // not an array: not party's
		}
		var kept []json.RawMessage
		evChanged := false
		for _, g := range groups {
			obj, err := parseObject(g)
			if err != nil {
				kept = append(kept, g)
				continue
			}
			var hs []json.RawMessage
			if r, ok := obj.get("hooks"); !ok || json.Unmarshal(r, &hs) != nil {
				kept = append(kept, g)
				continue
			}
			var left []json.RawMessage
			for _, h := range hs {
				if ho, err := parseObject(h); err == nil && isParty(ho.str("command")) {
					continue
				}
				left = append(left, h)
			}
			switch {
			case len(left) == len(hs):
				kept = append(kept, g)
			case len(left) > 0:
				obj.set("hooks", marshalArray(left))
				kept = append(kept, obj.marshal())
				evChanged = true
			default:
				evChanged = true
			}
		}
		if !evChanged {
			continue
		}
		changed = true
		if len(kept) == 0 {
			hooks.del(m.key)
		} else {
			hooks.set(m.key, marshalArray(kept))
		}
	}
	if !changed {
		return existing, false, false, nil
	}
	if len(hooks) == 0 {
		doc.del("hooks")
	} else {
		doc.set("hooks", hooks.marshal())
	}
	out, err = doc.indented()
	return out, err == nil, len(doc) == 0, err
}

// settingsToEdit parses a Gemini settings document to take party's
// entries out of it: nil for an empty one; one with comments (which a
// rewrite would lose), or not a JSON object, is refused.
func settingsToEdit(existing []byte) (object, error) {
	if len(bytes.TrimSpace(existing)) == 0 {
		return nil, nil
	}
	if err := noComments(existing); err != nil {
		return nil, err
	}
	if err := validJSON(existing); err != nil {
		return nil, err
	}
	doc, err := parseObject(existing)
	if err != nil {
		return nil, fmt.Errorf("top level: %w", err)
	}
	return doc, nil
}

func slicesClone(o object) object { return append(object(nil), o...) }

// noComments refuses a document that is valid only once its comments are
// stripped, saying so.
func noComments(b []byte) error {
	if json.Valid(b) || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if json.Valid(StripJSONComments(b)) {
		return fmt.Errorf("it has comments, which party would lose by rewriting it; remove them or add party's hooks by hand: %w", ErrSettings)
	}
	return nil
}

// StripJSONComments blanks the // and /* */ comments of b outside strings,
// as Gemini CLI does before parsing its settings and trusted folders.
func StripJSONComments(b []byte) []byte {
	out := bytes.Clone(b)
	inStr := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := bytes.Index(out[i+2:], []byte("*/"))
			end := len(out)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			for ; i < end; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	return out
}

// GeminiTrust says whether Gemini CLI trusts the folder dir, and so runs
// the hooks of its settings, the way Gemini 0.61 decides it: the
// environment (GEMINI_RESTRICTED_MODE, GEMINI_CLI_TRUST_WORKSPACE), a user
// setting security.folderTrust.enabled false (every folder trusted), then
// the longest matching rule of trustedFolders.json (TRUST_FOLDER,
// TRUST_PARENT, DO_NOT_TRUST; real paths). A folder no rule covers is not
// trusted yet: Gemini asks at start. why says which rule decided, for a
// warning. getenv reads Gemini's environment (HOME, GEMINI_CLI_HOME,
// GEMINI_CLI_TRUSTED_FOLDERS_PATH).
func GeminiTrust(dir string, getenv func(string) string) (trusted bool, why string) {
	if getenv("GEMINI_RESTRICTED_MODE") == "true" || getenv("GEMINI_CLI_TRUST_WORKSPACE") == "false" {
		return false, "the environment says so (GEMINI_RESTRICTED_MODE or GEMINI_CLI_TRUST_WORKSPACE=false)"
	}
	if getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		return true, "GEMINI_CLI_TRUST_WORKSPACE=true"
	}
	home := GeminiHome(getenv)
	var settings struct {
		Security struct {
			FolderTrust struct {
				Enabled *bool `json:"enabled"`
			} `json:"folderTrust"`
		} `json:"security"`
	}
	if b, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json")); err == nil {
		_ = json.Unmarshal(StripJSONComments(b), &settings)
	}
	if e := settings.Security.FolderTrust.Enabled; e != nil && !*e {
		return true, "folder trust is off (security.folderTrust.enabled false)"
	}
	path := getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
	if path == "" {
		path = filepath.Join(home, ".gemini", "trustedFolders.json")
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Sprintf("no folder is trusted yet (%s does not exist)", path)
	}
	if err != nil {
		return false, err.Error()
	}
	var rules map[string]string
	if err := json.Unmarshal(StripJSONComments(b), &rules); err != nil {
		return false, fmt.Sprintf("%s: %v", path, err)
	}
	target := realPath(dir)
	best, level := -1, ""
	for rule, lvl := range rules {
		eff := rule
		if lvl == "TRUST_PARENT" {
			eff = filepath.Dir(rule)
		}
		if isSubpath(realPath(eff), target) && len(rule) > best {
			best, level = len(rule), lvl
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return true, fmt.Sprintf("%s trusts it", path)
	case "DO_NOT_TRUST":
		return false, fmt.Sprintf("%s says DO_NOT_TRUST", path)
	}
	return false, fmt.Sprintf("%s does not list it", path)
}

// CodexHome is where Codex keeps its configuration and sessions:
// $CODEX_HOME, else ~/.codex.
func CodexHome(getenv func(string) string) string {
	if h := getenv("CODEX_HOME"); h != "" {
		return h
	}
	return filepath.Join(getenv("HOME"), ".codex")
}

// GeminiHome is the directory holding Gemini's .gemini: GEMINI_CLI_HOME,
// else HOME.
func GeminiHome(getenv func(string) string) string {
	if h := getenv("GEMINI_CLI_HOME"); h != "" {
		return h
	}
	return getenv("HOME")
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// isSubpath reports whether child is parent or inside it.
func isSubpath(parent, child string) bool {
	rel, err := filepath.Rel(parent, child)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
